package mira

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/miramem/mira/index"
)

// EvalQuestion is one question of a retrieval evaluation.
type EvalQuestion struct {
	ID     any      `json:"id,omitempty"`
	Query  string   `json:"query"`
	Scope  string   `json:"scope,omitempty"`
	Expect []string `json:"expect,omitempty"`      // memory ids
	Tags   []string `json:"expect_tags,omitempty"` // or tags: a memory carrying one of them counts for it
}

// EvalReport is one stage's figures, averaged over the questions.
type EvalReport struct {
	Questions int                `json:"questions"`
	Recall    map[string]float64 `json:"recall"`
	Hit       map[string]float64 `json:"hit"`
	MRR       float64            `json:"mrr"`
	Stage     string             `json:"stage"`
	Seconds   float64            `json:"seconds"`
}

// EvalStages names the rankings Evaluate scores, in pipeline order.
var EvalStages = []string{"lexical", "vector", "fused", "ranked", "final", "reranked"}

// evalKs are the cut-offs reported.
var evalKs = []int{1, 5, 10}

// evalStats accumulates recall@k, hit@k and MRR.
type evalStats struct {
	N      int
	Recall map[int]float64
	Hit    map[int]float64
	MRR    float64
}

func newEvalStats() *evalStats {
	return &evalStats{Recall: map[int]float64{}, Hit: map[int]float64{}}
}

// add scores one ranked list: ranked[i] holds the expectation keys the i-th
// result satisfies.
func (s *evalStats) add(ranked [][]string, want []string) {
	s.N++
	if len(want) == 0 {
		return
	}
	found := map[string]bool{}
	first := 0
	for i, keys := range ranked {
		for _, k := range keys {
			if slices.Contains(want, k) && !found[k] {
				found[k] = true
				if first == 0 {
					first = i + 1
				}
			}
		}
		for _, k := range evalKs {
			if i+1 == k {
				s.Recall[k] += float64(len(found)) / float64(len(want))
				if len(found) > 0 {
					s.Hit[k]++
				}
			}
		}
	}
	for _, k := range evalKs { // lists shorter than k
		if len(ranked) < k {
			s.Recall[k] += float64(len(found)) / float64(len(want))
			if len(found) > 0 {
				s.Hit[k]++
			}
		}
	}
	if first > 0 {
		s.MRR += 1 / float64(first)
	}
}

func (s *evalStats) report(stage string, d time.Duration) EvalReport {
	r := EvalReport{Questions: s.N, Recall: map[string]float64{}, Hit: map[string]float64{}, Stage: stage, Seconds: Round(d.Seconds(), 3)}
	if s.N == 0 {
		return r
	}
	for _, k := range evalKs {
		r.Recall[fmt.Sprintf("@%d", k)] = Round(s.Recall[k]/float64(s.N), 4)
		r.Hit[fmt.Sprintf("@%d", k)] = Round(s.Hit[k]/float64(s.N), 4)
	}
	r.MRR = Round(s.MRR/float64(s.N), 4)
	return r
}

// Evaluate answers every question with the recall engine, q giving the
// settings (k, mode, filters) and each question its text and scope, and
// returns recall@k, hit@k and MRR for every stage: lexical only, vector
// only, fused, ranked (with recency, before MMR), final (after MMR) and,
// with a rerank endpoint, reranked. Each question's final ranked ids go
// to results when it is not nil.
func (m *Memory) Evaluate(ctx context.Context, qs []EvalQuestion, q Query, results func(qid any, ids []string) error) ([]EvalReport, error) {
	base, err := m.indexQuery(q)
	if err != nil {
		return nil, err
	}
	stats := map[string]*evalStats{}
	for _, s := range EvalStages {
		stats[s] = newEvalStats()
	}
	tagCache := map[string][]string{}
	tagsOf := func(path string) []string {
		if t, ok := tagCache[path]; ok {
			return t
		}
		e, err := m.st.Read(path)
		if err != nil {
			m.warn(path, err)
			return nil
		}
		tagCache[path] = e.Tags
		return e.Tags
	}
	start := time.Now()
	err = m.withIndex(ctx, func(ix *index.Index) error {
		for i, eq := range qs {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			qq := base
			qq.Text = eq.Query
			if eq.Scope != "" {
				qq.Scopes = []string{eq.Scope}
			}
			want := append(append([]string{}, eq.Expect...), eq.Tags...)
			keys := func(hits []index.Hit) [][]string {
				if len(hits) > base.K {
					hits = hits[:base.K]
				}
				ranked := make([][]string, len(hits))
				for j, h := range hits {
					k := []string{h.ID}
					if len(eq.Tags) > 0 {
						k = append(k, tagsOf(h.Path)...)
					}
					ranked[j] = k
				}
				return ranked
			}
			stg, err := ix.SearchStages(qq)
			if err != nil {
				return fmt.Errorf("question %d: %w", i, err)
			}
			final := stg.Final
			stats["lexical"].add(keys(stg.Lexical), want)
			stats["vector"].add(keys(stg.Vector), want)
			stats["fused"].add(keys(stg.Fused), want)
			stats["ranked"].add(keys(stg.Ranked), want)
			stats["final"].add(keys(stg.Final), want)
			if m.rr != nil {
				hits, _, err := m.search(ctx, ix, qq)
				if err != nil {
					return err
				}
				stats["reranked"].add(keys(hits), want)
				final = hits
			}
			if results != nil {
				ids := make([]string, len(final))
				for j, h := range final {
					ids[j] = h.ID
				}
				var qid any = eq.ID
				if qid == nil {
					qid = i
				}
				if err := results(qid, ids); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	took := time.Since(start)
	var reps []EvalReport
	for _, s := range EvalStages {
		if s == "reranked" && m.rr == nil {
			continue
		}
		reps = append(reps, stats[s].report(s, took))
	}
	return reps, nil
}
