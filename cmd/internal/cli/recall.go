package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/miramem/mira/embed"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/mem"
)

// RecallCmd is mira-recall.
type RecallCmd struct {
	Common
	Query   []string `arg:"" optional:"" help:"What to look for, in plain words. Without it, the newest memories matching the filters."`
	K       int      `short:"k" help:"How many memories to return." default:"${recall_k}"`
	Kind    []string `help:"Only these kinds (repeatable or comma-separated)." sep:","`
	Scope   string   `short:"s" help:"Search this scope and global (default: every scope, favouring the current project)."`
	Project string   `help:"Favour this project (default: detected from the working directory, or $MIRA_PROJECT)."`
	Since   string   `help:"Only memories created at or after this time: RFC 3339, a date, or a duration ago such as 72h or 30d." placeholder:"WHEN"`
	Tag     []string `short:"t" help:"Only memories with one of these tags (repeatable or comma-separated)." sep:","`
	Mode    string   `help:"Retrieval: lexical (BM25), vector (embeddings) or hybrid (both, fused)." enum:"lexical,vector,hybrid" default:"${recall_mode}"`
	Explain bool     `help:"Show each stage's part of every score: bm25, vector, fusion, recency, project and date bonuses, MMR penalty, rerank."`

	Eval        string `help:"Measure retrieval: read JSONL questions ({\"query\",\"scope\",\"expect\":[ids] or \"expect_tags\":[tags]}) and print recall@1/5/10, hit@k and MRR." placeholder:"FILE" type:"path"`
	EvalResults string `name:"eval-results" help:"With --eval, write each question's ranked ids as {\"qid\",\"ids\"} JSONL to FILE." placeholder:"FILE" type:"path"`
}

// Recall is the main of mira-recall.
func Recall(args []string, o *IO) int {
	return Main("mira-recall", "Find memories: BM25 relevance weighted by recency, as JSONL records.", &RecallCmd{}, args, o)
}

func (c *RecallCmd) run(ctx context.Context, o *IO) error {
	if c.K <= 0 {
		return usagef("-k must be at least 1")
	}
	now := time.Now()
	q := index.Query{Text: strings.Join(c.Query, " "), K: c.K, Kinds: c.Kind, Tags: cleanTags(c.Tag), Now: now, Mode: c.Mode}
	for _, k := range c.Kind {
		if !isKind(k) {
			return usagef("--kind: unknown kind %q (want one of %s)", k, strings.Join(mem.Kinds, ", "))
		}
	}
	if c.Scope != "" {
		if err := mem.ValidScope(c.Scope); err != nil {
			return usagef("--scope: %v", err)
		}
		q.Scopes = []string{c.Scope}
		if c.Scope != mem.DefaultScope {
			q.Scopes = append(q.Scopes, mem.DefaultScope)
		}
	}
	if c.Since != "" {
		t, err := parseSince(c.Since, now)
		if err != nil {
			return usagef("--since: %v", err)
		}
		q.Since = t
	}
	q.Project = c.Project
	if q.Project == "" {
		if wd, err := o.Getwd(); err == nil {
			q.Project = mem.DetectProject(wd, o.Getenv("MIRA_PROJECT")).Name
		}
	}
	r, err := c.openReader(ctx, o, "mira-recall")
	if err != nil {
		return err
	}
	st, w := r.st, r.w
	rr, err := reranker(o.Getenv)
	if err != nil {
		return &UsageError{err}
	}
	ix, err := index.Open(r.src, r.opt)
	if err != nil {
		return fmt.Errorf("cannot open index: %w", err)
	}
	defer ix.Close()
	if c.Eval != "" {
		return c.runEval(ctx, o, ix, st, q, w, rr)
	}
	hits, reranked, err := search(ctx, ix, st, q, rr, w)
	if err != nil {
		return err
	}
	read, errs := readHits(o.records, st, hits)
	recs := make([]mem.Record, 0, len(hits))
	for i, h := range hits {
		if err := errs[i]; err != nil {
			w.warn(h.Path, err) // changed or removed since the index saw it
			continue
		}
		r := read[i]
		score := round(h.Score, 4)
		r.Score = &score
		r.Why = whyOf(h)
		if reranked != nil {
			r.Why.(map[string]any)["rerank"] = round(reranked[i], 4)
		}
		recs = append(recs, r)
	}
	return writeRecords(o, c.Output, recs, c.Explain)
}

// readHits reads the hits' records, two at a time, through the cache of
// a process that keeps one (nil: none).
func readHits(cache *recordCache, st *mem.Store, hits []index.Hit) ([]mem.Record, []error) {
	recs, errs := make([]mem.Record, len(hits)), make([]error, len(hits))
	read := func(i int) { recs[i], errs[i] = cache.read(st, hits[i].Path) }
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; i < len(hits); i += 2 {
			read(i)
		}
	})
	for i := 0; i < len(hits); i += 2 {
		read(i)
	}
	wg.Wait()
	return recs, errs
}

// search runs the query and, when a rerank endpoint is configured, reorders
// the ranked candidates (before MMR, up to 3K of them) by the endpoint's
// scores. It returns the hits and, when reranked, their rerank scores.
func search(ctx context.Context, ix *index.Index, st *mem.Store, q index.Query, rr *embed.Reranker, w *warnOnce) ([]index.Hit, []float64, error) {
	stages, err := ix.SearchStages(q)
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	if rr == nil || strings.TrimSpace(q.Text) == "" || len(stages.Ranked) == 0 {
		return stages.Final, nil, nil
	}
	cands := stages.Ranked[:min(len(stages.Ranked), 3*max(q.K, 1))]
	docs := make([]string, len(cands))
	for i, h := range cands {
		if e, err := st.Read(h.Path); err == nil {
			docs[i] = e.Body
		}
	}
	scores, err := rr.Rerank(ctx, q.Text, docs)
	if err != nil {
		w.warn("rerank", fmt.Errorf("%w; results are not reranked", err))
		return stages.Final, nil, nil
	}
	order := make([]int, len(cands))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	n := min(len(order), max(q.K, 1))
	hits := make([]index.Hit, n)
	rs := make([]float64, n)
	for i := range n {
		hits[i] = cands[order[i]]
		hits[i].Why.Rank = i + 1
		rs[i] = scores[order[i]]
	}
	return hits, rs, nil
}

// whyOf is the "why" object of a recall result: always the main parts, and
// everything with --explain (text output shows it then).
func whyOf(h index.Hit) any {
	y := h.Why
	w := map[string]any{
		"bm25":        round(y.BM25, 4),
		"relevance":   round(y.Relevance, 4),
		"vector":      round(y.Vector, 4),
		"fused":       round(y.Fused, 4),
		"recency":     round(y.Recency, 4),
		"rank":        y.Rank,
		"fusion_rank": y.FusionRank,
	}
	if y.LexicalRank != 0 {
		w["lexical_rank"] = y.LexicalRank
	}
	if y.VectorRank != 0 {
		w["vector_rank"] = y.VectorRank
	}
	if y.Project != 0 {
		w["project"] = round(y.Project, 4)
	}
	if y.Date != 0 {
		w["date"] = round(y.Date, 4)
	}
	if y.MMRPenalty != 0 {
		w["mmr_penalty"] = round(y.MMRPenalty, 4)
	}
	return w
}

func explainText(why any) string {
	m, ok := why.(map[string]any)
	if !ok {
		return fmt.Sprint(why)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	order := map[string]int{"rank": 0, "bm25": 1, "lexical_rank": 2, "relevance": 3, "vector": 4, "vector_rank": 5,
		"fused": 6, "fusion_rank": 7, "recency": 8, "project": 9, "date": 10, "mmr_penalty": 11, "rerank": 12}
	sort.Slice(keys, func(i, j int) bool {
		oi, iok := order[keys[i]]
		oj, jok := order[keys[j]]
		if iok != jok {
			return iok
		}
		if oi != oj {
			return oi < oj
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	s := strings.Join(parts, " ")
	if _, ok := m["fused"]; ok {
		s += "  (score = 0.8·fused + 0.2·recency + project + date − mmr_penalty)"
	}
	return s
}

func round(x float64, places int) float64 {
	p := 1.0
	for range places {
		p *= 10
	}
	if x < 0 {
		return -float64(int64(-x*p+0.5)) / p
	}
	return float64(int64(x*p+0.5)) / p
}

func isKind(k string) bool {
	for _, x := range mem.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// parseSince reads an absolute time or a duration ago (72h, 30d).
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	var n int
	if _, err := fmt.Sscanf(s, "%dd", &n); err == nil && strings.HasSuffix(s, "d") {
		return now.AddDate(0, 0, -n), nil
	}
	return mem.ParseTime(s)
}
