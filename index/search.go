package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	bleveapi "github.com/blevesearch/bleve_index_api"
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
	Now     time.Time // the moment recency is measured from; zero: Options.Now
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
	if ix.bi == nil || ix.closed {
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
		res, err := ix.newest(q, n, now)
		if err != nil {
			return Stages{}, err
		}
		hits := r.Rank(bleveCandidates(res, false), q.Project, now, k)
		return Stages{Ranked: hits, Final: hits}, nil
	}
	mode := cmp.Or(q.Mode, ModeHybrid)
	var vq *vecQuery
	if mode != ModeLexical {
		var err error
		if vq, err = ix.vectorQuery(q.Text); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return Stages{}, err
			}
			ix.c.warn(ix.dir, fmt.Errorf("searching by words only: %w", err))
			mode, vq = ModeLexical, nil
		}
	}
	if vq != nil {
		defer vq.release()
		vq.side.rw.RLock()
		defer vq.side.rw.RUnlock()
	}
	spans := querySpans(q.Text, now)
	if mode == ModeLexical {
		lex, err := ix.lexicalCandidates(q, n, spans, r, true, nil)
		if err != nil {
			return Stages{}, err
		}
		return lexicalStages(r, lex, q.Project, spans, now, k), nil
	}
	// The BM25 search runs beside the vector scan. Its hits take their
	// id, project and time from the vector rows (rowFields), which is
	// cheaper than loading bleve's stored fields.
	var (
		lex    []Candidate
		lexErr error
		wg     sync.WaitGroup
	)
	// Beside other searches (a server under load) the two run one after
	// the other, as nearest's parts do: the processors are busy anyway.
	alone := searches.Add(1) == 1
	defer searches.Add(-1)
	var vs *vecStore
	if vq != nil {
		vs = vq.side.vs
	}
	lexical := func() { lex, lexErr = ix.lexicalCandidates(q, n, spans, r, false, vs) }
	if mode != ModeVector && alone {
		wg.Go(lexical)
	}
	feedback := mode == ModeHybrid && r.Feedback > 0
	nv := n
	if feedback {
		nv = 2 * n // the pool the moved query is scored again over
	}
	pool, err := vq.nearest(q, nv, r.MinCosine)
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
	if err := ix.rowFields(lex, vq.side.vs); err != nil {
		return Stages{}, err
	}
	if !feedback {
		return fuse(r, q, spans, lex, pool, vq, now, k), nil
	}
	st := fuse(r, q, spans, lex, pool[:min(n, len(pool))], vq, now, k)
	if vq2 := vq.feedback(st.Fused, r.Feedback); vq2 != nil {
		first := st.Vector
		st = fuse(r, q, spans, lex, vq2.rescore(pool, n, r.MinCosine), vq2, now, k)
		st.Vector = first // the vector retriever's own ranking, for --eval
	}
	return st, nil
}

// lexicalCandidates returns the n best BM25 matches that pass the
// filters, best first; when the query names times, the n best of those
// times and the days around them (Ranking.DateWindow) are candidates too, so that the date
// bonus has them to lift.
func (ix *Index) lexicalCandidates(q Query, n int, spans []span, r Ranking, fields bool, vs *vecStore) ([]Candidate, error) {
	lex, err := ix.lexical(q, n, fields, vs)
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
	more, err := ix.lexical(wq, n, fields, vs)
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

// rowFields gives the BM25 candidates, found without bleve's stored
// fields, their id, project and time from their vector rows, and notes
// each row for fuse. A candidate with no row (an index caught half-way)
// has its fields loaded from bleve instead.
func (ix *Index) rowFields(lex []Candidate, vs *vecStore) error {
	var ids []string
	for i := range lex {
		c := &lex[i]
		r := vs.find(c.Path)
		if r < 0 {
			c.vrow = -1
			ids = append(ids, c.Path)
			continue
		}
		c.vrow = r + 1
		vs.fields(r, c)
	}
	if len(ids) == 0 {
		return nil
	}
	res, err := ix.run(bleve.NewSearchRequestOptions(query.NewDocIDQuery(ids), len(ids), 0, false))
	if err != nil {
		return err
	}
	byPath := make(map[string]Candidate, len(res.Hits))
	for _, c := range bleveCandidates(res, false) {
		byPath[c.Path] = c
	}
	for i := range lex {
		if f, ok := byPath[lex[i].Path]; ok {
			lex[i].ID, lex[i].Project, lex[i].CreatedAt = f.ID, f.Project, f.CreatedAt
		}
	}
	return nil
}

// lexical returns the n best BM25 matches that pass the filters, best
// first, with their fields when fields is set. Given the vector store, its
// rows and postings answer (vecStore.textTop).
func (ix *Index) lexical(q Query, n int, fields bool, vs *vecStore) ([]Candidate, error) {
	if vs != nil {
		hits, err := vs.textTop(ix.textTerms(q.Text), n, newRowFilter(vs, q))
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
	res, err := ix.bleveLexical(q, n, fields, vs)
	if err != nil {
		return nil, err
	}
	return bleveCandidates(res, true), nil
}

// bleveLexical is lexical by bleve's index.
func (ix *Index) bleveLexical(q Query, n int, fields bool, vs *vecStore) (*bleve.SearchResult, error) {
	filter := filterQuery(q)
	if filter == nil && !fields {
		return ix.textSearch(q.Text, n, nil)
	}
	text := ix.textQuery(q.Text)
	top := text
	if filter != nil {
		if res, ok, err := ix.broadly(q, n, fields, vs); ok || err != nil {
			return res, err
		}
		top = &filteredQuery{text: text, filter: filter}
	}
	req := bleve.NewSearchRequestOptions(top, n, 0, false)
	if !fields {
		return ix.search(req)
	}
	return ix.run(req)
}

// broadFilter is the share of the documents a filter must let through for
// broadly to take it: the documents it drops are walked one by one.
const broadFilter = 0.8

// broadly runs the text query with a filter of kinds and scopes that the
// vector rows say lets most documents through (a conversation's searches,
// its scope and global, are such) by textTop: every matching document is
// scored anyway, and the filter only drops some of them, found from the
// postings of the values it does not allow. The scores and the order are
// those of the filtered search. ok is false for a narrow filter, one of
// tags or times, or one the rows cannot count (a document without a kind
// or a scope): bleve's filtered search then runs.
func (ix *Index) broadly(q Query, n int, fields bool, vs *vecStore) (res *bleve.SearchResult, ok bool, err error) {
	if vs == nil || fields || len(q.Tags) > 0 || !q.Since.IsZero() || !q.until.IsZero() {
		return nil, false, nil
	}
	f := newRowFilter(vs, q)
	if f == nil {
		return nil, false, nil
	}
	share, counted := vs.shareOf(f)
	if !counted || share < broadFilter || vs.hasEmptyKindOrScope() {
		return nil, false, nil
	}
	res, err = ix.textSearch(q.Text, n, &textFilter{kinds: q.Kinds, scopes: q.Scopes})
	return res, err == nil, err
}

// filteredQuery is a scored query restricted to the documents of an
// unscored one. bleve's BooleanQuery does the same with a filter clause,
// but wraps its must clause in a conjunction and a boolean searcher: two
// more layers that every matching document passes through, a third of a
// filtered search's time, for the same score (TestFilteredQuery).
type filteredQuery struct {
	text, filter query.Query
}

// Searcher walks the filter's documents alongside the text's, each
// advanced to the other's next, as BooleanQuery's filter does.
func (q *filteredQuery) Searcher(ctx context.Context, r bleveapi.IndexReader, m mapping.IndexMapping, opt search.SearcherOptions) (search.Searcher, error) {
	ts, err := q.text.Searcher(ctx, r, m, opt)
	if err != nil {
		return nil, err
	}
	fs, err := q.filter.Searcher(ctx, r, m, search.SearcherOptions{Score: "none"})
	if err != nil {
		ts.Close()
		return nil, err
	}
	var (
		started bool
		ref     *search.DocumentMatch
	)
	accept := func(sctx *search.SearchContext, d *search.DocumentMatch) bool {
		var err error
		if !started {
			started = true
			if ref, err = fs.Next(sctx); err != nil {
				ref = nil
			}
		}
		if ref == nil {
			return false
		}
		c := ref.IndexInternalID.Compare(d.IndexInternalID)
		if c < 0 {
			sctx.DocumentMatchPool.Put(ref)
			if ref, err = fs.Advance(sctx, d.IndexInternalID); err != nil || ref == nil {
				ref = nil
				return false
			}
			c = ref.IndexInternalID.Compare(d.IndexInternalID)
		}
		return c == 0
	}
	return &filtering{FilteringSearcher: searcher.NewFilteringSearcher(ctx, ts, accept), filter: fs}, nil
}

// filtering closes the filter's searcher with the text's.
type filtering struct {
	*searcher.FilteringSearcher
	filter search.Searcher
}

func (f *filtering) Close() error {
	return errors.Join(f.FilteringSearcher.Close(), f.filter.Close())
}

// textQuery is the BM25 query for text: its terms OR-ed. When a term is
// one of the abbreviations (see abbreviations), the other forms of its
// group are OR-ed in beside the query's own terms, so they add matches;
// the entries that match none of them keep their order (bleve scales
// every score of one query by the same coordination factor).
func (ix *Index) textQuery(text string) query.Query {
	a := ix.bi.Mapping().AnalyzerNamed(textAnalyzer)
	extra := expandAbbreviations(a, text)
	if len(extra) == 0 {
		mq := query.NewMatchQuery(text)
		mq.SetField(fieldText)
		mq.SetOperator(query.MatchQueryOperatorOr)
		return mq
	}
	var terms []query.Query
	add := func(t string) {
		tq := query.NewTermQuery(t)
		tq.SetField(fieldText)
		terms = append(terms, tq)
	}
	for _, tok := range a.Analyze([]byte(text)) {
		add(string(tok.Term))
	}
	for _, t := range extra {
		add(t)
	}
	dq := query.NewDisjunctionQuery(terms)
	dq.SetMin(1)
	return dq
}

// bleveCandidates turns bleve's hits into candidates, with their scores
// when scored is set.
func bleveCandidates(res *bleve.SearchResult, scored bool) []Candidate {
	cands := make([]Candidate, 0, len(res.Hits))
	for _, h := range res.Hits {
		c := Candidate{Path: h.ID}
		if scored {
			c.BM25 = h.Score
		}
		c.ID, _ = h.Fields[fieldID].(string)
		c.Project, _ = h.Fields[fieldProject].(string)
		if s, ok := h.Fields[fieldCreated].(string); ok {
			c.CreatedAt, _ = time.Parse(time.RFC3339, s)
		}
		cands = append(cands, c)
	}
	return cands
}

// lexicalStages ranks BM25 candidates alone, as the index did before it
// had vectors: relevance is BM25 over the best BM25, and there is no MMR.
func lexicalStages(r Ranking, lex []Candidate, project string, spans []span, now time.Time, k int) Stages {
	ranked := r.rank(lex, project, spans, now, 0)
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

// recentWindows are the spans of recent time a query without text looks
// in before it looks at everything: the newest entries of a large store
// are usually recent, and sorting a day's entries is much cheaper than
// sorting all of them (the sort reads every candidate's creation time).
var recentWindows = []time.Duration{24 * time.Hour, 7 * 24 * time.Hour, 90 * 24 * time.Hour}

// newest finds the n newest entries that pass the query's filters: ranked
// by recency alone, they are the best, so the index sorts by creation time
// instead of scoring.
func (ix *Index) newest(q Query, n int, now time.Time) (*bleve.SearchResult, error) {
	for _, w := range recentWindows {
		since := now.Add(-w)
		if !since.After(q.Since) {
			break // the query's own Since is narrower
		}
		wq := q
		wq.Since = since
		res, err := ix.sorted(wq, n)
		if err != nil || len(res.Hits) >= n {
			return res, err
		}
	}
	return ix.sorted(q, n)
}

func (ix *Index) sorted(q Query, n int) (*bleve.SearchResult, error) {
	top := filterQuery(q)
	if top == nil {
		top = query.NewMatchAllQuery()
	}
	req := bleve.NewSearchRequestOptions(top, n, 0, false)
	req.SortBy([]string{"-" + fieldTime, "_id"})
	return ix.run(req)
}

// run searches, loading the stored fields ranking needs.
func (ix *Index) run(req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	req.Fields = []string{fieldID, fieldProject, fieldCreated}
	return ix.search(req)
}

// hasTerms reports whether text has any term left after analysis: a query
// of stop words ("what is it") would match nothing and is treated as no
// text at all.
func (ix *Index) hasTerms(text string) bool {
	if text == "" {
		return false
	}
	a := ix.bi.Mapping().AnalyzerNamed(textAnalyzer)
	if a == nil {
		return true
	}
	return len(a.Analyze([]byte(text))) > 0
}

// filterQuery is the conjunction of the query's filters, nil when it has
// none. It runs as a bleve filter, which does not touch the scores.
func filterQuery(q Query) query.Query {
	var parts []query.Query
	anyOf := func(field string, values []string) {
		if len(values) == 0 {
			return
		}
		terms := make([]query.Query, len(values))
		for i, v := range values {
			t := query.NewTermQuery(v)
			t.SetField(field)
			terms[i] = t
		}
		parts = append(parts, query.NewDisjunctionQuery(terms))
	}
	anyOf(fieldKind, q.Kinds)
	anyOf(fieldScope, q.Scopes)
	anyOf(fieldTags, q.Tags)
	if !q.Since.IsZero() || !q.until.IsZero() {
		parts = append(parts, timeRange(q.Since, q.until))
	}
	if len(parts) == 0 {
		return nil
	}
	return query.NewConjunctionQuery(parts)
}

// timeRange matches the entries created at or after since and before
// until (a zero time: no bound). Each entry has a term for its time key
// and one for each of its prefixes (spans, bleveDoc), the spans of time
// it falls in. A range is covered by the longest spans that fit in it,
// then, at each end, by the shorter spans that fit in what is left, and
// at last by the time keys left over: at most 15 spans of each length at
// each end, and the entries of two spans of 4.9 hours, however long the
// range. A bleve date field does the same with sixteen terms an entry,
// most of them unique: a quarter of a rebuild's time. With one length of
// span, 4.9 hours, a filter of nine years over ten years of entries took
// 34 ms instead of 2.6 ms (BenchmarkLongTimeRange).
func timeRange(since, until time.Time) query.Query {
	var lo, hi string // time keys; empty: no bound
	if !since.IsZero() {
		lo = timeKey(since)
	}
	if !until.IsZero() {
		hi = timeKey(until)
	}
	if lo != "" && hi != "" && lo >= hi {
		return keyRange(fieldTime, lo, lo) // matches nothing
	}
	parts := coverRange(lo, hi, 0)
	if len(parts) == 1 {
		return parts[0]
	}
	return query.NewDisjunctionQuery(parts)
}

// coverRange covers the time keys from lo up to hi (exclusive; an empty
// bound is none) with ranges of the terms of spans[level] and after.
func coverRange(lo, hi string, level int) []query.Query {
	if level == len(spans) {
		return []query.Query{keyRange(fieldTime, lo, hi)}
	}
	d, field := spans[level].digits, spans[level].field
	if lo != "" && hi != "" && lo[:d] == hi[:d] {
		return coverRange(lo, hi, level+1) // within one span
	}
	var parts []query.Query
	first := "" // the first whole span; empty: from the first there is
	if lo != "" {
		first = lo[:d]
		if strings.TrimLeft(lo[d:], "0") != "" {
			// lo's span is partial: its end, then the spans after it.
			next, ok := nextSpan(first)
			if !ok {
				return coverRange(lo, hi, level+1)
			}
			parts = coverRange(lo, next+strings.Repeat("0", 16-d), level+1)
			first = next
		}
	}
	end := "" // the span after the last whole one; empty: to the last
	if hi != "" {
		end = hi[:d]
		if strings.TrimLeft(hi[d:], "0") != "" {
			parts = append(parts, coverRange(end+strings.Repeat("0", 16-d), hi, level+1)...)
		}
	}
	if first == "" || end == "" || first < end {
		parts = append(parts, keyRange(field, first, end))
	}
	return parts
}

// keyRange matches the terms of field from from up to to, exclusive (an
// empty bound is none).
func keyRange(field, from, to string) query.Query {
	yes, no := true, false
	r := query.NewTermRangeInclusiveQuery(from, to, &yes, &no)
	r.SetField(field)
	return r
}

// nextSpan is the span after s, of as many hex digits; false after the
// last.
func nextSpan(s string) (string, bool) {
	n, err := strconv.ParseUint(s, 16, 64)
	if err != nil || n+1 >= 1<<(4*len(s)) {
		return "", false
	}
	return fmt.Sprintf("%0*x", len(s), n+1), true
}
