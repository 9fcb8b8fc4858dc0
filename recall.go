package mira

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/mem"
)

// Query is what a Recall looks for.
type Query struct {
	// Text is the question in plain words. Empty: the newest memories
	// that pass the filters.
	Text string
	// K is how many memories to return; zero means the configuration's
	// recall.k, else 10.
	K int
	// Kinds keeps only these kinds (none: every kind). The turns a
	// model's tool calls leave (tool results, and assistant turns that
	// only call tools) are left out unless Kinds names turn.
	Kinds []string
	// HideToolTurns leaves the turns of tool calls out even when Kinds
	// names turn: for a front end that wants what was said in a
	// conversation, not how a memory was made or a file read.
	HideToolTurns bool
	// Scope searches this scope and global; empty searches every scope.
	Scope string
	// Project is favoured in the ranking; empty means the Memory's.
	Project string
	// Since keeps only memories created at or after it.
	Since time.Time
	// Tags keeps only memories with one of them.
	Tags []string
	// Mode is lexical (BM25), vector (embeddings) or hybrid (both,
	// fused); empty means the configuration's recall.mode, else hybrid.
	Mode string
	// Now is the clock for recency; zero means time.Now.
	Now time.Time
	// The ranking's settings; nil means the configuration's recall.*
	// keys, else the built-in default. CheckRecallSetting gives their
	// ranges.
	//
	// RecencyWeight is recency's weight w in score = (1−w)·fused +
	// w·recency (default 0.2). RecencyDays is recency's time constant:
	// recency = exp(−age in days / RecencyDays) (default 30). MMRLambda
	// is MMR's λ, 1 turning it off (default 0.7). MinScore drops the
	// memories that score below it (default 0: none).
	RecencyWeight, RecencyDays, MMRLambda, MinScore *float64
}

// ranking is the index ranking of q: the query's settings, else the
// configuration's, over the index's default.
func (m *Memory) ranking(q Query) (*index.Ranking, error) {
	r := index.DefaultRanking
	c := m.cfg.Recall
	for _, s := range []struct {
		name string
		q, c *float64
		set  func(float64)
	}{
		{"recency_weight", q.RecencyWeight, c.RecencyWeight, func(v float64) {
			if v != r.Recency {
				r.Recency, r.Relevance = v, 1-v
			}
		}},
		{"recency_days", q.RecencyDays, c.RecencyDays, func(v float64) { r.RecencyDays = v }},
		{"mmr_lambda", q.MMRLambda, c.MMRLambda, func(v float64) { r.MMRLambda = v }},
		{"min_score", q.MinScore, c.MinScore, func(v float64) { r.MinScore = v }},
	} {
		v, src := s.q, ""
		if v == nil {
			v, src = s.c, "recall."
		}
		if v == nil {
			continue
		}
		if err := CheckRecallSetting(s.name, *v); err != nil {
			return nil, invalidf("%s%v", src, err)
		}
		s.set(*v)
	}
	return &r, nil
}

// MaxK is the most memories one recall returns: a search's work and memory
// grow with k, and no prompt holds more.
const MaxK = 10000

// RecallModes are the retrieval modes a Query may name.
var RecallModes = []string{index.ModeLexical, index.ModeVector, index.ModeHybrid}

// Recall returns the memories that answer q, best first, as records with
// their score and why: lexical (BM25) and vector candidates fused,
// weighted by recency, with small bonuses for the current project, for
// memories of a time the query names and for decisions when the query
// asks what was chosen, near-copies held back by MMR, and
// reordered by the rerank endpoint when one is configured. Tool calls and
// results stored as turns are left out unless q.Kinds names turn and
// q.HideToolTurns is not set. A file that changed or broke since the index
// saw it is reported through Options.Warn and left out.
func (m *Memory) Recall(ctx context.Context, q Query) ([]mem.Record, error) {
	iq, err := m.indexQuery(q)
	if err != nil {
		return nil, err
	}
	// Tool traffic is left out unless turns are asked for by kind; the
	// search then asks for more until k are left, or there are no more.
	hideTools := q.HideToolTurns || !slices.Contains(q.Kinds, mem.KindTurn)
	want := iq.K
	var (
		hits     []index.Hit
		reranked []float64
		read     []mem.Record
		errs     []error
	)
	for {
		err = m.readIndex(ctx, func(ix *index.Index) error {
			var err error
			hits, reranked, err = m.search(ctx, ix, iq)
			return err
		})
		if err != nil {
			return nil, err
		}
		read, errs = m.readHits(hits)
		if !hideTools {
			break
		}
		hidden := 0
		for i := range hits {
			if errs[i] == nil && toolTraffic(read[i]) {
				hidden++
			}
		}
		if hidden == 0 {
			break
		}
		if len(hits)-hidden >= want || len(hits) < iq.K || iq.K >= MaxK {
			hits, reranked, read, errs = dropToolTraffic(hits, reranked, read, errs, want)
			break
		}
		// As many more as were left out, and as many again as are
		// still missing.
		iq.K = min(MaxK, iq.K+hidden+want-(len(hits)-hidden))
	}
	recs := make([]mem.Record, 0, len(hits))
	for i, h := range hits {
		if err := errs[i]; err != nil {
			m.warn(h.Path, err) // changed or removed since the index saw it
			continue
		}
		r := read[i]
		score := Round(h.Score, 4)
		r.Score = &score
		why := whyOf(h)
		if r := iq.Ranking; r.Relevance != index.DefaultRanking.Relevance || r.Recency != index.DefaultRanking.Recency {
			// The weights, for ExplainText, when they are not the
			// default ones.
			why["fused_weight"], why["recency_weight"] = Round(r.Relevance, 4), Round(r.Recency, 4)
		}
		if reranked != nil {
			why["rerank"] = Round(reranked[i], 4)
		}
		r.Why = why
		recs = append(recs, r)
	}
	return recs, nil
}

// toolTraffic reports whether a record is what a model's tool call left in
// a conversation: a tool's result (role tool), or an assistant turn that
// only called tools (no_text, its text a line per call). Such turns are
// how a memory was made or a file read, not what was said: Recall leaves
// them out unless turns are asked for by kind.
func toolTraffic(r mem.Record) bool {
	if r.Kind != mem.KindTurn {
		return false
	}
	if r.Role == "tool" {
		return true
	}
	noText, _ := r.Extra["no_text"].(bool)
	return r.Role == "assistant" && noText
}

// dropToolTraffic leaves out the hits whose records are tool traffic, keeps
// the first k of the rest and ranks them again from 1.
func dropToolTraffic(hits []index.Hit, reranked []float64, read []mem.Record, errs []error, k int) ([]index.Hit, []float64, []mem.Record, []error) {
	var (
		h  []index.Hit
		rr []float64
		rd []mem.Record
		er []error
	)
	for i := range hits {
		if errs[i] == nil && toolTraffic(read[i]) {
			continue
		}
		if len(h) == k {
			break
		}
		hit := hits[i]
		hit.Why.Rank = len(h) + 1
		h, rd, er = append(h, hit), append(rd, read[i]), append(er, errs[i])
		if reranked != nil {
			rr = append(rr, reranked[i])
		}
	}
	return h, rr, rd, er
}

// Check reports the first part of q that no recall can take, as an
// *InvalidError whose Field is the part's name (k, kinds, scope, mode,
// recency_weight, recency_days, mmr_lambda, min_score): it needs no store,
// so a front end can check its arguments before it opens one, and name
// its own flag for the field. Recall checks q the same way.
func (q Query) Check() error {
	if q.K < 0 {
		return invalidField("k", errors.New("must be at least 1"))
	}
	if q.K > MaxK {
		return invalidField("k", fmt.Errorf("must be at most %d: narrow the recall with a query, kinds, a scope or a time instead", MaxK))
	}
	if q.Mode != "" && !slices.Contains(RecallModes, q.Mode) {
		return invalidField("mode", fmt.Errorf("unknown mode %q (want one of %s)", q.Mode, strings.Join(RecallModes, ", ")))
	}
	for _, kind := range q.Kinds {
		if !slices.Contains(mem.Kinds, kind) {
			return invalidField("kinds", fmt.Errorf("unknown kind %q (want one of %s)", kind, strings.Join(mem.Kinds, ", ")))
		}
	}
	if q.Scope != "" {
		if err := mem.ValidScope(q.Scope); err != nil {
			return invalidField("scope", err)
		}
	}
	for _, s := range []struct {
		name string
		v    *float64
	}{{"recency_weight", q.RecencyWeight}, {"recency_days", q.RecencyDays}, {"mmr_lambda", q.MMRLambda}, {"min_score", q.MinScore}} {
		if s.v == nil {
			continue
		}
		if err := CheckRecallSetting(s.name, *s.v); err != nil {
			return invalidField(s.name, errors.Unwrap(err))
		}
	}
	return nil
}

// indexQuery checks q and turns it into the index's query.
func (m *Memory) indexQuery(q Query) (index.Query, error) {
	if err := q.Check(); err != nil {
		return index.Query{}, err
	}
	k := q.K
	if k == 0 {
		k = cmp.Or(m.cfg.Recall.K, 10)
	}
	if k > MaxK {
		return index.Query{}, invalidField("k", fmt.Errorf("%d is more than one recall returns (%d): narrow it with a query, kinds, a scope or a time instead", k, MaxK))
	}
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	mode := cmp.Or(q.Mode, m.cfg.Recall.Mode, index.ModeHybrid)
	if !slices.Contains(RecallModes, mode) {
		return index.Query{}, invalidf("unknown mode %q (want one of %s)", mode, strings.Join(RecallModes, ", "))
	}
	iq := index.Query{Text: q.Text, K: k, Kinds: q.Kinds, Tags: cleanTags(q.Tags), Now: now, Mode: mode, Since: q.Since}
	if q.Scope != "" {
		iq.Scopes = []string{q.Scope}
		if q.Scope != mem.DefaultScope {
			iq.Scopes = append(iq.Scopes, mem.DefaultScope)
		}
	}
	iq.Project = cmp.Or(q.Project, m.opt.Project)
	r, err := m.ranking(q)
	if err != nil {
		return index.Query{}, err
	}
	iq.Ranking = r
	return iq, nil
}

// readHits reads the hits' records, two at a time, through the record
// cache of a warm Memory.
func (m *Memory) readHits(hits []index.Hit) ([]mem.Record, []error) {
	recs, errs := make([]mem.Record, len(hits)), make([]error, len(hits))
	read := func(i int) { recs[i], errs[i] = m.cache.read(m.st, hits[i].Path) }
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
func (m *Memory) search(ctx context.Context, ix *index.Index, q index.Query) ([]index.Hit, []float64, error) {
	stages, err := ix.SearchStages(q)
	if err != nil {
		return nil, nil, fmt.Errorf("search: %w", err)
	}
	if m.rr == nil || strings.TrimSpace(q.Text) == "" || len(stages.Ranked) == 0 {
		return stages.Final, nil, nil
	}
	cands := stages.Ranked[:min(len(stages.Ranked), 3*max(q.K, 1))]
	docs := make([]string, len(cands))
	for i, h := range cands {
		if e, err := m.st.Read(h.Path); err == nil {
			docs[i] = e.Body
		}
	}
	scores, err := m.rr.Rerank(ctx, q.Text, docs)
	if err != nil {
		m.warn("rerank", fmt.Errorf("%w; results are not reranked", err))
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

// scoreParts are the parts of a recall score, in the order ExplainText
// shows them: each one's key in the "why" object, and its value in a hit,
// or nil where the hit has no such part. A reranker's score ("rerank")
// comes after them.
var scoreParts = []struct {
	key   string
	value func(index.Why) any
}{
	{"rank", func(y index.Why) any { return y.Rank }},
	{"bm25", func(y index.Why) any { return Round(y.BM25, 4) }},
	{"lexical_rank", func(y index.Why) any { return ifSet(y.LexicalRank, y.LexicalRank) }},
	{"relevance", func(y index.Why) any { return Round(y.Relevance, 4) }},
	{"vector", func(y index.Why) any { return Round(y.Vector, 4) }},
	{"vector_rank", func(y index.Why) any { return ifSet(y.VectorRank, y.VectorRank) }},
	{"fused", func(y index.Why) any { return Round(y.Fused, 4) }},
	{"fusion_rank", func(y index.Why) any { return y.FusionRank }},
	{"recency", func(y index.Why) any { return Round(y.Recency, 4) }},
	{"project", func(y index.Why) any { return ifSet(y.Project, Round(y.Project, 4)) }},
	{"date", func(y index.Why) any { return ifSet(y.Date, Round(y.Date, 4)) }},
	{"decision", func(y index.Why) any { return ifSet(y.Decision, Round(y.Decision, 4)) }},
	{"mmr_penalty", func(y index.Why) any { return ifSet(y.MMRPenalty, Round(y.MMRPenalty, 4)) }},
	{"rerank", nil},
}

// ifSet is shown, or nil for a part that is left out when its value is 0.
func ifSet[T int | float64](value T, shown any) any {
	if value == 0 {
		return nil
	}
	return shown
}

// whyOf is the "why" object of a recall result: the parts of its score.
func whyOf(h index.Hit) map[string]any {
	w := make(map[string]any, len(scoreParts))
	for _, p := range scoreParts {
		if p.value == nil {
			continue
		}
		if v := p.value(h.Why); v != nil {
			w[p.key] = v
		}
	}
	return w
}

// ExplainText renders a recall result's why as one line: each part of the
// score, in pipeline order, and the formula that adds them up with the
// weights in effect (the why's own, else the default ranking's).
func ExplainText(why any) string {
	m, ok := why.(map[string]any)
	if !ok {
		return fmt.Sprint(why)
	}
	weights := map[string]string{
		"fused_weight":   fmt.Sprint(index.DefaultRanking.Relevance),
		"recency_weight": fmt.Sprint(index.DefaultRanking.Recency),
	}
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if _, ok := weights[k]; ok {
			weights[k] = fmt.Sprint(v)
			continue
		}
		keys = append(keys, k)
	}
	order := make(map[string]int, len(scoreParts))
	for i, p := range scoreParts {
		order[p.key] = i
	}
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
		s += fmt.Sprintf("  (score = %s·fused + %s·recency + project + date + decision − mmr_penalty)", weights["fused_weight"], weights["recency_weight"])
	}
	return s
}

// Round rounds x to places decimals, half away from zero, as recall
// scores are printed.
func Round(x float64, places int) float64 {
	p := 1.0
	for range places {
		p *= 10
	}
	if x < 0 {
		return -float64(int64(-x*p+0.5)) / p
	}
	return float64(int64(x*p+0.5)) / p
}
