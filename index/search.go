package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// DefaultK is the number of results when Query.K is not positive.
const DefaultK = 10

// minCandidates is the fewest BM25 candidates a query ranks, so that
// recency and the project bonus have something to reorder even for small K.
const minCandidates = 30

// Search modes (Query.Mode).
const (
	// ModeHybrid fuses lexical (BM25) and vector candidates; the default.
	ModeHybrid = "hybrid"
	// ModeLexical ranks BM25 candidates only; it never reads vectors.
	ModeLexical = "lexical"
	// ModeVector ranks vector candidates only.
	ModeVector = "vector"
)

// Fusion methods (Query.Fusion).
const (
	// FusionWeighted sums the sides' min–max normalised scores; the
	// default.
	FusionWeighted = "weighted"
	// FusionRRF sums reciprocal ranks.
	FusionRRF = "rrf"
)

// Query is a search.
type Query struct {
	// Text is analysed like the entries and its terms OR-ed, so a question
	// in natural language works; it is embedded for the vector side.
	// Without text (or with only stop words) the newest matching entries
	// are returned.
	Text string
	K    int // results wanted; DefaultK when not positive
	// Kinds, Scopes and Tags filter: any value of a field may match, and
	// every non-empty field must. Values are matched exactly. Filters
	// apply to both sides.
	Kinds, Scopes, Tags []string
	// Project favours entries of this project with a small additive bonus
	// (Ranking.ProjectBonus); it does not filter.
	Project string
	Since   time.Time // only entries created at or after Since
	until   time.Time // only entries created before until (zero: no bound)
	// intent: what the text asks for (readIntent), set by the search.
	intent intent
	// mentions: how close the days each row's memory mentions come to
	// the times the text names (mentionCloseness), by row; set by the
	// search.
	mentions map[int]float64
	Now      time.Time // the moment recency is measured from; zero: Options.Now
	// Mode is ModeHybrid (""), ModeLexical or ModeVector. Without usable
	// vectors (none can be embedded, or they are damaged) hybrid and
	// vector searches fall back to lexical and say so through
	// Options.Warn.
	Mode string
	// Fusion is FusionWeighted ("") or FusionRRF.
	Fusion string
	// Ranking holds the weights of the score and the minimum score; nil
	// means DefaultRanking. Search checks it with Ranking.Validate.
	Ranking *Ranking
}

// Stages is a search's ranking after each stage, for evaluation and
// --explain. Every list holds Hits with the full Why, ranked 1.. within
// the list.
type Stages struct {
	// Lexical and Vector are each retriever's candidates in its own order
	// (BM25, cosine): max(3K, 30) of each at most. Vector is the ranking
	// by the query as given; in hybrid mode the fusion uses the one after
	// feedback (see Ranking.Feedback), and the hits' Why shows that one.
	Lexical, Vector []Hit
	// Fused is the union of the candidates by fused relevance alone.
	Fused []Hit
	// Ranked is the same candidates by score before MMR: fused
	// relevance, recency and the project bonus.
	Ranked []Hit
	// Final is what Search returns: the top K after MMR.
	// Ranked and Final leave out the hits below Ranking.MinScore.
	Final []Hit
}

// Search returns the K best entries for the query: max(3K, 30) candidates
// from each retriever that pass the filters, fused and ranked by
// q.Ranking (DefaultRanking when nil), then diversified by MMR.
func (ix *Index) Search(q Query) ([]Hit, error) {
	st, err := ix.SearchStages(q)
	return st.Final, err
}

// SearchStages runs a search like Search and returns its ranking after
// every stage.
func (ix *Index) SearchStages(q Query) (Stages, error) {
	if ix.lk == nil || ix.closed {
		return Stages{}, errors.New("search: index is closed")
	}
	switch q.Mode {
	case "", ModeHybrid, ModeLexical, ModeVector:
	default:
		return Stages{}, fmt.Errorf("search: unknown mode %q", q.Mode)
	}
	switch q.Fusion {
	case "", FusionWeighted, FusionRRF:
	default:
		return Stages{}, fmt.Errorf("search: unknown fusion %q", q.Fusion)
	}
	r := DefaultRanking
	if q.Ranking != nil {
		r = *q.Ranking
		if err := r.Validate(); err != nil {
			return Stages{}, fmt.Errorf("search: %w", err)
		}
	}
	st, err := ix.stages(q, r)
	if err != nil {
		return st, fmt.Errorf("search: %w", err)
	}
	st.Ranked, st.Final = r.keep(st.Ranked), r.keep(st.Final)
	return st, nil
}

func (ix *Index) stages(q Query, r Ranking) (Stages, error) {
	k := q.K
	if k <= 0 {
		k = DefaultK
	}
	now := q.Now
	if now.IsZero() {
		now = ix.c.opt.Now()
	}
	n := max(3*k, minCandidates)
	if !ix.hasTerms(q.Text) {
		vs, done, err := ix.rowsFor()
		if err != nil {
			return Stages{}, err
		}
		defer done()
		hits := r.Rank(vs.newest(q, n), q.Project, now, k)
		return Stages{Ranked: hits, Final: hits}, nil
	}
	mode := cmp.Or(q.Mode, ModeHybrid)
	var (
		vq       *vecQuery
		fallback error // why a search with vectors searches by words only
	)
	if mode != ModeLexical {
		var err error
		if vq, err = ix.vectorQuery(q.Text); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return Stages{}, err
			}
			fallback = err
			mode, vq = ModeLexical, nil
		}
	}
	if vq != nil {
		defer vq.release()
		vq.side.rw.RLock()
		defer vq.side.rw.RUnlock()
	}
	spans := querySpans(q.Text, now)
	if r.DecisionBonus > 0 {
		q.intent = readIntent(q.Text)
	}
	if mode == ModeLexical {
		vs, done, err := ix.rowsFor()
		if err != nil {
			return Stages{}, err
		}
		defer done()
		if fallback != nil && !ix.rowsPartial {
			// Said once the rows answer (else the error says it), and
			// not again after rowsFor said they answer in part.
			ix.c.warn(ix.dir, fmt.Errorf("searching by words only: %w", fallback))
		}
		q.mentions = ix.mentions(vs, spans, r)
		lex, err := ix.lexicalCandidates(q, n, spans, r, vs)
		if err != nil {
			return Stages{}, err
		}
		for i := range lex {
			lex[i].mention = q.mentions[lex[i].vrow-1]
		}
		return lexicalStages(r, lex, q.Project, spans, q.intent, now, k), nil
	}
	// The BM25 search runs beside the vector scan, over the same rows.
	var (
		lex    []Candidate
		lexErr error
		wg     sync.WaitGroup
	)
	// Beside other searches (a server under load) the two run one after
	// the other, as nearest's parts do: the processors are busy anyway.
	alone := searches.Add(1) == 1
	defer searches.Add(-1)
	vs := vq.side.vs
	q.mentions = ix.mentions(vs, spans, r)
	lexical := func() { lex, lexErr = ix.lexicalCandidates(q, n, spans, r, vs) }
	if mode != ModeVector && alone {
		wg.Go(lexical)
	}
	feedback := mode == ModeHybrid && r.Feedback > 0
	nv := n
	if feedback {
		nv = 2 * n // the pool the moved query is scored again over
	}
	pool, err := vq.nearest(q, nv, r.MinCosine)
	var facts []vecHit // keys of the rows they name (facts.go)
	if err == nil {
		if facts, err = vq.factHits(q, nv, r.MinCosine); err == nil {
			pool = vq.withKeys(q, pool, facts, nv, r.MinCosine)
		}
	}
	if mode != ModeVector && !alone {
		lexical()
	}
	wg.Wait()
	if err != nil {
		return Stages{}, err
	}
	if lexErr != nil {
		return Stages{}, lexErr
	}
	if !feedback {
		return fuse(r, q, spans, lex, pool, vq, now, k), nil
	}
	st := fuse(r, q, spans, lex, pool[:min(n, len(pool))], vq, now, k)
	if vq2 := vq.feedback(st.Fused, r.Feedback); vq2 != nil {
		first := st.Vector
		moved := vq2.rescore(pool, n, r.MinCosine)
		if len(facts) > 0 {
			moved = vq2.withKeys(q, moved, vq2.rescore(facts, n, r.MinCosine), n, r.MinCosine)
		}
		st = fuse(r, q, spans, lex, moved, vq2, now, k)
		st.Vector = first // the vector retriever's own ranking, for --eval
	}
	return st, nil
}

// mentions returns mentionCloseness of the spans, when the date bonus is on.
func (ix *Index) mentions(vs *vecStore, spans []span, r Ranking) map[int]float64 {
	if len(spans) == 0 || r.DateBonus <= 0 || r.DateWindow <= 0 {
		return nil
	}
	return vs.mentionCloseness(spans, r.DateWindow)
}

// lexicalCandidates returns the n best BM25 matches that pass the
// filters, best first; when the query names times, the n best of those
// times and the days around them (Ranking.DateWindow) are candidates too, so that the date
// bonus has them to lift.
func (ix *Index) lexicalCandidates(q Query, n int, spans []span, r Ranking, vs *vecStore) ([]Candidate, error) {
	lex, err := ix.lexical(q, n, vs)
	if err != nil {
		return nil, err
	}
	if len(spans) == 0 || r.DateBonus <= 0 || r.DateWindow <= 0 {
		return lex, nil
	}
	win := time.Duration(r.DateWindow * float64(24*time.Hour))
	wq := q
	wq.Since, wq.until = spans[0].from, spans[0].to
	for _, d := range spans[1:] {
		if d.from.Before(wq.Since) {
			wq.Since = d.from
		}
		if d.to.After(wq.until) {
			wq.until = d.to
		}
	}
	wq.Since, wq.until = wq.Since.Add(-win), wq.until.Add(win)
	if q.Since.After(wq.Since) {
		wq.Since = q.Since
	}
	if !wq.until.After(wq.Since) {
		return lex, nil
	}
	more, err := ix.lexical(wq, n, vs)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(lex))
	for _, c := range lex {
		seen[c.Path] = true
	}
	for _, c := range more {
		if !seen[c.Path] {
			lex = append(lex, c)
		}
	}
	// The same query scores both lists alike: merged by BM25, ties in
	// the order found.
	slices.SortStableFunc(lex, func(a, b Candidate) int { return cmp.Compare(b.BM25, a.BM25) })
	return lex, nil
}

// lexical returns the n best BM25 matches that pass the filters, best
// first, from the rows and postings of vs (vecStore.textTop).
func (ix *Index) lexical(q Query, n int, vs *vecStore) ([]Candidate, error) {
	terms, groups := textTerms(q.Text)
	hits, err := vs.textTopGroups(terms, groups, n, newRowFilter(vs, q))
	if err != nil {
		return nil, ix.markDamaged(damaged("vectors: %w", err))
	}
	lex := make([]Candidate, len(hits))
	for i, h := range hits {
		c := &lex[i]
		c.Path, c.BM25, c.vrow = vs.rows[h.row].path, h.score, h.row+1
		vs.fields(h.row, c)
	}
	return lex, nil
}

// lexicalStages ranks BM25 candidates alone, as the index did before it
// had vectors: relevance is BM25 over the best BM25, and there is no MMR.
func lexicalStages(r Ranking, lex []Candidate, project string, spans []span, in intent, now time.Time, k int) Stages {
	ranked := r.rank(lex, project, spans, in, now, 0)
	lexRank := make(map[string]int, len(lex))
	for i, c := range lex {
		lexRank[c.Path] = i + 1
	}
	for i := range ranked {
		w := &ranked[i].Why
		w.Fused, w.LexicalRank = w.Relevance, lexRank[ranked[i].Path]
	}
	fused := slices.Clone(ranked)
	slices.SortStableFunc(fused, func(a, b Hit) int { return cmp.Compare(a.Why.LexicalRank, b.Why.LexicalRank) })
	for i := range fused {
		fused[i].Why.FusionRank = i + 1
	}
	byPath := make(map[string]int, len(fused))
	for _, h := range fused {
		byPath[h.Path] = h.Why.FusionRank
	}
	for i := range ranked {
		ranked[i].Why.FusionRank = byPath[ranked[i].Path]
	}
	lexical := slices.Clone(fused)
	for i := range fused {
		fused[i].Score = fused[i].Why.Fused
		fused[i].Why.Rank = i + 1
		lexical[i].Score = lexical[i].Why.BM25
		lexical[i].Why.Rank = i + 1
	}
	final := slices.Clone(ranked[:min(k, len(ranked))])
	return Stages{Lexical: lexical, Fused: fused, Ranked: ranked, Final: final}
}

// hasTerms reports whether text has any term left after analysis: a query
// of stop words ("what is it") would match nothing and is treated as no
// text at all.
func (ix *Index) hasTerms(text string) bool {
	if text == "" {
		return false
	}
	return len(textAnalysis().Analyze([]byte(text))) > 0
}
