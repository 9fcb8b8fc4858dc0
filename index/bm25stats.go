package index

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	bleveapi "github.com/blevesearch/bleve_index_api"
)

// BM25 needs two statistics of a field: the number of documents, and its
// number of terms (for the average length). Scorch caches the second per
// snapshot, and computes it by walking the field's whole dictionary under
// the snapshot's lock; a writer makes a new snapshot with every batch and
// every merge. In a server that writes a few turns every fraction of a
// second, each new snapshot made every search that came meanwhile queue
// behind that walk: under 50 conversations the searches spent most of their
// time there. A kept handle therefore keeps the field statistics itself and
// gives them to each search (as a distributed search gives every shard
// the same ones): the document count exact at each search, the terms
// counted again when the documents have changed by more than one in
// bm25Drift since they were last counted. An index that does not change
// is scored exactly as before. (Scorch's own count of a field's terms is
// the sum over the segments' dictionaries, so it also moves when segments
// merge, by as much as a change would; the kept count is no less exact.)
const bm25Drift = 100

// bm25Stats are a kept handle's field statistics.
type bm25Stats struct {
	// missed counts the searches the statistics could not serve (a field
	// they lack), which bleve then scored by its own count.
	missed atomic.Int64

	mu       sync.Mutex
	docs     uint64         // the document count the terms were counted at
	card     map[string]int // terms per field; nil until counted, then replaced, never changed
	counting bool           // a search is counting them again
}

// preSearch returns the statistics for a search of bi now, nil when they
// cannot be had (the search then computes them itself). Only the first
// count waits; a recount runs in one search while the others go on with
// the counts before it.
func (s *bm25Stats) preSearch(bi bleve.Index) *search.BM25Stats {
	n, err := bi.DocCount()
	if err != nil {
		return nil
	}
	s.mu.Lock()
	if s.card == nil {
		defer s.mu.Unlock()
		card, err := fieldCardinalities(bi)
		if err != nil {
			return nil
		}
		s.card, s.docs = card, n
		return &search.BM25Stats{DocCount: float64(n), FieldCardinality: card}
	}
	card := s.card
	recount := diff(n, s.docs)*bm25Drift > s.docs && !s.counting
	s.counting = s.counting || recount
	s.mu.Unlock()
	if recount {
		fresh, err := fieldCardinalities(bi)
		s.mu.Lock()
		if err == nil {
			s.card, s.docs, card = fresh, n, fresh
		}
		s.counting = false
		s.mu.Unlock()
	}
	return &search.BM25Stats{DocCount: float64(n), FieldCardinality: card}
}

// diff is |a-b|.
func diff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// fieldCardinalities counts the terms of each of bi's fields.
func fieldCardinalities(bi bleve.Index) (map[string]int, error) {
	adv, err := bi.Advanced()
	if err != nil {
		return nil, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	br, ok := r.(bleveapi.BM25Reader)
	if !ok {
		return nil, errNoBM25
	}
	fields, err := r.Fields()
	if err != nil {
		return nil, err
	}
	// A field no document has yet has no terms; a query may still name
	// it (a filter on pins before any pin).
	card := map[string]int{fieldID: 0, fieldText: 0, fieldKind: 0, fieldScope: 0, fieldProject: 0,
		fieldRole: 0, fieldTags: 0, fieldCreated: 0, fieldHash: 0, fieldPin: 0}
	// "*" is what a query that names no field (the text query's
	// disjunction) is scored against.
	for _, f := range append(fields, "*") {
		if card[f], err = br.FieldCardinality(f); err != nil {
			return nil, err
		}
	}
	return card, nil
}

var errNoBM25 = errors.New("the index reader has no BM25 statistics")
