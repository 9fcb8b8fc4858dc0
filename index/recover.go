package index

import (
	"errors"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
)

// The index is derived data: any damage to its files must cost a rebuild,
// never the command. bbolt and bleve do not all report damage as errors:
// a page overwritten with other bytes makes bbolt panic with an assertion
// ("Page expected to be: 2, but self identifies as ..."), and a segment cut
// short can make a slice index run out of range. safely turns such a
// panic, in the calling goroutine, into a damagedError, which Open answers
// with a rebuild.
func safely(what string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &damagedError{err: fmt.Errorf("%s: %v", what, r)}
		}
	}()
	return fn()
}

// IsDamaged reports whether err says the index's files are damaged: the
// next Open rebuilds them.
func IsDamaged(err error) bool {
	var d *damagedError
	return errors.As(err, &d) && !d.missing && !d.outdated
}

// search runs a bleve search; a panic in it (damaged files) becomes a
// damagedError, and the generation is marked for a rebuild.
func (ix *Index) search(req *bleve.SearchRequest) (res *bleve.SearchResult, err error) {
	err = safely("search", func() error {
		if ix.kb != nil && req.PreSearchData == nil && !bleveStats {
			if st := ix.kb.bm25.preSearch(ix.bi); st != nil {
				r := *req
				r.PreSearchData = map[string]any{search.BM25PreSearchDataKey: st}
				if res, err = ix.bi.Search(&r); err == nil {
					return nil
				}
				// A field the statistics do not know: let bleve count.
				ix.kb.bm25.missed.Add(1)
			}
		}
		var e error
		res, e = ix.bi.Search(req)
		return e
	})
	if err != nil {
		err = ix.markDamaged(err)
	}
	return res, err
}
