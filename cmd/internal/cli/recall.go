package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

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
	Explain bool     `help:"Show each part of every score (bm25, relevance, recency, project bonus, rank)."`

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
	q := index.Query{Text: strings.Join(c.Query, " "), K: c.K, Kinds: c.Kind, Tags: cleanTags(c.Tag), Now: now}
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
	st, err := c.openStore(ctx, "mira-recall")
	if err != nil {
		return err
	}
	w := &warnOnce{o: o}
	ix, err := index.Open(storeSource{st}, indexOptions(o, w))
	if err != nil {
		return fmt.Errorf("cannot open index: %w", err)
	}
	defer ix.Close()
	if c.Eval != "" {
		return c.runEval(o, ix, st, q, w)
	}
	hits, err := ix.Search(q)
	if err != nil {
		return fmt.Errorf("search: %w", err)
	}
	recs := make([]mem.Record, 0, len(hits))
	for _, h := range hits {
		e, err := st.Read(h.Path)
		if err != nil {
			w.warn(h.Path, err) // changed or removed since the index saw it
			continue
		}
		r := e.Record()
		score := round(h.Score, 4)
		r.Score = &score
		r.Why = whyOf(h)
		recs = append(recs, r)
	}
	return writeRecords(o, c.Output, recs, c.Explain)
}

// whyOf is the "why" object of a recall result: always the main parts, and
// everything with --explain (text output shows it then).
func whyOf(h index.Hit) map[string]any {
	w := map[string]any{
		"bm25":      round(h.Why.BM25, 4),
		"relevance": round(h.Why.Relevance, 4),
		"recency":   round(h.Why.Recency, 4),
		"rank":      h.Why.Rank,
	}
	if h.Why.Project != 0 {
		w["project"] = round(h.Why.Project, 4)
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
	order := map[string]int{"rank": 0, "bm25": 1, "relevance": 2, "recency": 3, "project": 4}
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
	if _, ok := m["relevance"]; ok {
		s += "  (score = 0.8·relevance + 0.2·recency + project)"
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
