package index

import (
	"errors"
	"fmt"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// DefaultK is the number of results when Query.K is not positive.
const DefaultK = 10

// minCandidates is the fewest BM25 candidates a query ranks, so that
// recency and the project bonus have something to reorder even for small K.
const minCandidates = 30

// Query is a search.
type Query struct {
	// Text is analysed like the entries and its terms OR-ed, so a question
	// in natural language works. Without text (or with only stop words)
	// the newest matching entries are returned.
	Text string
	K    int // results wanted; DefaultK when not positive
	// Kinds, Scopes and Tags filter: any value of a field may match, and
	// every non-empty field must. Values are matched exactly.
	Kinds, Scopes, Tags []string
	// Project favours entries of this project with a small additive bonus
	// (Ranking.ProjectBonus); it does not filter.
	Project string
	Since   time.Time // only entries created at or after Since
	Now     time.Time // the moment recency is measured from; zero: Options.Now
}

// Search returns the K best entries for the query: the BM25 top
// max(3K, 30) entries that pass the filters, ranked by DefaultRanking.
func (ix *Index) Search(q Query) ([]Hit, error) {
	if ix.bi == nil || ix.closed {
		return nil, errors.New("search: index is closed")
	}
	k := q.K
	if k <= 0 {
		k = DefaultK
	}
	now := q.Now
	if now.IsZero() {
		now = ix.c.opt.Now()
	}
	n := max(3*k, minCandidates)
	lexical := ix.hasTerms(q.Text)
	var (
		res *bleve.SearchResult
		err error
	)
	if lexical {
		mq := query.NewMatchQuery(q.Text)
		mq.SetField(fieldText)
		mq.SetOperator(query.MatchQueryOperatorOr)
		var top query.Query = mq
		if filter := filterQuery(q); filter != nil {
			bq := query.NewBooleanQuery(nil, nil, nil)
			bq.AddMust(mq)
			bq.AddFilter(filter)
			top = bq
		}
		res, err = ix.run(bleve.NewSearchRequestOptions(top, n, 0, false))
	} else {
		res, err = ix.newest(q, n, now)
	}
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	cands := make([]Candidate, 0, len(res.Hits))
	for _, h := range res.Hits {
		c := Candidate{Path: h.ID}
		if lexical {
			c.BM25 = h.Score
		}
		c.ID, _ = h.Fields[fieldID].(string)
		c.Project, _ = h.Fields[fieldProject].(string)
		if s, ok := h.Fields[fieldCreated].(string); ok {
			c.CreatedAt, _ = time.Parse(time.RFC3339, s)
		}
		cands = append(cands, c)
	}
	return DefaultRanking.Rank(cands, q.Project, now, k), nil
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
	req.SortBy([]string{"-" + fieldCreated, "_id"})
	return ix.run(req)
}

// run searches, loading the stored fields ranking needs.
func (ix *Index) run(req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	req.Fields = []string{fieldID, fieldProject, fieldCreated}
	return ix.bi.Search(req)
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
	if !q.Since.IsZero() {
		inclusive := true
		r := query.NewDateRangeInclusiveQuery(q.Since, time.Time{}, &inclusive, nil)
		r.SetField(fieldCreated)
		parts = append(parts, r)
	}
	if len(parts) == 0 {
		return nil
	}
	return query.NewConjunctionQuery(parts)
}
