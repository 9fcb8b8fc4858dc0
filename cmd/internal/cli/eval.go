package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/embed"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/mem"
)

// evalQuestion is one line of a --eval file.
type evalQuestion struct {
	ID     any      `json:"id,omitempty"`
	Query  string   `json:"query"`
	Scope  string   `json:"scope,omitempty"`
	Expect []string `json:"expect,omitempty"`      // memory ids
	Tags   []string `json:"expect_tags,omitempty"` // or tags: a memory carrying one of them counts for it
}

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

// evalReport is what --eval prints (JSON), averaged over questions.
type evalReport struct {
	Questions int                `json:"questions"`
	Recall    map[string]float64 `json:"recall"`
	Hit       map[string]float64 `json:"hit"`
	MRR       float64            `json:"mrr"`
	Stage     string             `json:"stage"`
	Seconds   float64            `json:"seconds"`
}

func (s *evalStats) report(stage string, d time.Duration) evalReport {
	r := evalReport{Questions: s.N, Recall: map[string]float64{}, Hit: map[string]float64{}, Stage: stage, Seconds: round(d.Seconds(), 3)}
	if s.N == 0 {
		return r
	}
	for _, k := range evalKs {
		r.Recall[fmt.Sprintf("@%d", k)] = round(s.Recall[k]/float64(s.N), 4)
		r.Hit[fmt.Sprintf("@%d", k)] = round(s.Hit[k]/float64(s.N), 4)
	}
	r.MRR = round(s.MRR/float64(s.N), 4)
	return r
}

// evalStages names the rankings --eval scores, in pipeline order.
var evalStages = []string{"lexical", "vector", "fused", "ranked", "final", "reranked"}

// runEval answers every question of the file with the recall engine and
// prints recall@k, hit@k and MRR for every stage: lexical only, vector
// only, fused, ranked (with recency, before MMR), final (after MMR) and,
// with a rerank endpoint, reranked. With --eval-results the final ranked ids
// of each question are written as {"qid":N,"ids":[...]} lines.
func (c *RecallCmd) runEval(ctx context.Context, o *IO, ix *index.Index, st *mem.Store, q index.Query, w *warnOnce, rr *embed.Reranker) error {
	f, err := os.Open(c.Eval)
	if err != nil {
		return usagef("--eval: %v", err)
	}
	defer f.Close()
	var qs []evalQuestion
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var eq evalQuestion
		if err := json.Unmarshal(sc.Bytes(), &eq); err != nil {
			return &InputError{Name: c.Eval, Line: line, Err: fmt.Errorf("invalid JSON: %w", jsonReason(err))}
		}
		if eq.Query == "" {
			return &InputError{Name: c.Eval, Line: line, Err: errors.New(`field "query" is missing`)}
		}
		qs = append(qs, eq)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	var out io.Writer = io.Discard
	if c.EvalResults != "" {
		rf, err := os.Create(c.EvalResults)
		if err != nil {
			return err
		}
		defer rf.Close()
		out = rf
	}
	rw := newRecordWriter(out)
	// Tags of the memories, read once, for expectations given as tags.
	tagCache := map[string][]string{}
	tagsOf := func(path string) []string {
		if t, ok := tagCache[path]; ok {
			return t
		}
		e, err := st.Read(path)
		if err != nil {
			w.warn(path, err)
			return nil
		}
		tagCache[path] = e.Tags
		return e.Tags
	}
	stats := map[string]*evalStats{}
	for _, s := range evalStages {
		stats[s] = newEvalStats()
	}
	start := time.Now()
	for i, eq := range qs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		qq := q
		qq.Text = eq.Query
		if eq.Scope != "" {
			qq.Scopes = []string{eq.Scope}
		}
		want := append(append([]string{}, eq.Expect...), eq.Tags...)
		keys := func(hits []index.Hit) [][]string {
			if len(hits) > q.K {
				hits = hits[:q.K]
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
		if rr != nil {
			hits, _, err := search(ctx, ix, st, qq, rr, w)
			if err != nil {
				return err
			}
			stats["reranked"].add(keys(hits), want)
			final = hits
		}
		ids := make([]string, len(final))
		for j, h := range final {
			ids[j] = h.ID
		}
		qid := eq.ID
		if qid == nil {
			qid = i
		}
		if err := rw.Write(map[string]any{"qid": qid, "ids": ids}); err != nil {
			return err
		}
	}
	if err := rw.Flush(); err != nil {
		return err
	}
	took := time.Since(start)
	var reps []evalReport
	for _, s := range evalStages {
		if s == "reranked" && rr == nil {
			continue
		}
		reps = append(reps, stats[s].report(s, took))
	}
	if !o.textOutput(c.Output) {
		ow := newRecordWriter(o.Out)
		for _, r := range reps {
			ow.Write(r)
		}
		return ow.Flush()
	}
	fmt.Fprintf(o.Out, "%d questions, k=%d, mode %s, %.2fs\n", len(qs), q.K, cmpOr(q.Mode, "hybrid"), took.Seconds())
	fmt.Fprintf(o.Out, "%-9s %8s %8s %8s %8s %8s %8s %8s\n", "stage", "R@1", "R@5", "R@10", "hit@1", "hit@5", "hit@10", "MRR")
	for _, r := range reps {
		fmt.Fprintf(o.Out, "%-9s %8.4f %8.4f %8.4f %8.4f %8.4f %8.4f %8.4f\n", r.Stage,
			r.Recall["@1"], r.Recall["@5"], r.Recall["@10"], r.Hit["@1"], r.Hit["@5"], r.Hit["@10"], r.MRR)
	}
	return nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
