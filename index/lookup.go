package index

import (
	"errors"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// ErrNotFound is returned by Finder.PathOf for an id the index does not
// hold.
var ErrNotFound = errors.New("not in the index")

// Commit returns the commit the open index is up to date with ("" before
// the first). With Options.NoRefresh it may be behind the store's HEAD;
// a caller that needs exact answers looks at the paths changed since.
func (ix *Index) Commit() string { return ix.meta.Commit }

// StandingKinds are the kinds that stay in every context while open:
// corrections, goals and tasks.
var StandingKinds = []string{"correction", "goal", "task"}

// Standing returns the paths of the live entries in the given scopes (all
// scopes when none are given) that a context always considers: pinned
// entries of any kind, and entries of the StandingKinds. The caller reads
// the files to check status and pin expiry; n bounds the answer.
func (ix *Index) Standing(scopes []string, n int) ([]string, error) {
	if ix.bi == nil || ix.closed {
		return nil, errors.New("index is closed")
	}
	var any []query.Query
	for _, k := range StandingKinds {
		t := query.NewTermQuery(k)
		t.SetField(fieldKind)
		any = append(any, t)
	}
	for _, p := range []string{"sticky", "leased"} {
		t := query.NewTermQuery(p)
		t.SetField(fieldPin)
		any = append(any, t)
	}
	var q query.Query = query.NewDisjunctionQuery(any)
	if f := filterQuery(Query{Scopes: scopes}); f != nil {
		q = query.NewConjunctionQuery([]query.Query{q, f})
	}
	req := bleve.NewSearchRequestOptions(q, n, 0, false)
	req.SortBy([]string{"_id"})
	res, err := ix.run(req)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = h.ID
	}
	return out, nil
}
