package index

import (
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
)

// BM25 needs two statistics of a field: the number of documents, and its
// number of terms (for the average length), which scorch takes as the sum
// of the field's dictionary sizes over the snapshot's segments. It caches
// that per snapshot, but computes it by opening an iterator over each
// segment's whole dictionary, under the snapshot's lock; a writer makes a
// new snapshot with every batch and merge. In a server that writes a few
// turns every fraction of a second, every search that came after a new
// snapshot queued behind that: under 50 conversations the searches spent
// most of their time there. The sum itself needs no iterator, only each
// segment's dictionary size, so a kept handle computes the same numbers
// for each search, without the lock, and gives them to it (as a
// distributed search gives every shard the same statistics): the scores
// are bleve's own.

// bleveStats, set by a test, leaves the statistics to bleve.
var bleveStats bool

// bm25Stats counts, for tests, the searches of a kept handle that were
// scored with statistics of their own.
type bm25Stats struct {
	given, missed atomic.Int64
}

// preSearch returns the statistics of bi's current snapshot, nil when they
// cannot be had (the search then computes them itself).
func (s *bm25Stats) preSearch(bi bleve.Index) *search.BM25Stats {
	adv, err := bi.Advanced()
	if err != nil {
		return nil
	}
	r, err := adv.Reader()
	if err != nil {
		return nil
	}
	defer r.Close()
	is, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil
	}
	n, err := is.DocCount()
	if err != nil {
		return nil
	}
	fields, err := is.Fields()
	if err != nil {
		return nil
	}
	// A field no document has yet has no terms; a query may still name it
	// (a filter on pins before any pin). "*" is what the filters of a
	// boolean query are scored against.
	card := map[string]int{fieldID: 0, fieldText: 0, fieldKind: 0, fieldScope: 0, fieldProject: 0,
		fieldRole: 0, fieldTags: 0, fieldCreated: 0, fieldPin: 0, fieldTime: 0, "*": 0}
	for _, l := range spans {
		card[l.field] = 0
	}
	for _, f := range fields {
		card[f] = 0
	}
	for _, seg := range is.Segments() {
		for f := range card {
			d, err := seg.Segment().Dictionary(f)
			if err != nil {
				return nil
			}
			card[f] += d.Cardinality()
		}
	}
	s.given.Add(1)
	return &search.BM25Stats{DocCount: float64(n), FieldCardinality: card}
}
