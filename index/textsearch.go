package index

import (
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/scorer"
	"github.com/blevesearch/bleve/v2/search/searcher"
	bleveapi "github.com/blevesearch/bleve_index_api"
)

// A text query (its terms OR-ed) ranks by BM25 as bleve scores a
// disjunction of term queries: each term's score, weighted by the query
// norm, summed over the terms a document has and scaled by the share of the
// query's terms it has (coordination). bleve computes that document by
// document: a searcher per term, a heap or slice merging them, a pooled
// match per document and a collector, for every document that has any of
// the terms. textTop computes the same scores term by term instead, adding
// each posting into an array indexed by document number, and picks the n
// best at the end, ties broken by document number as bleve's collector
// breaks them. Up to ten terms bleve merges them with a slice, in the
// order of their document counts, and textTop adds them in that same
// order: the same floating-point operations, so the same scores to the
// bit. With more, bleve's heap adds a document's terms in an order that
// depends on its state; textTop adds them in the query's order, and a
// score may differ from bleve's in its last bit or two, which reorders
// only documents whose scores are that close (TestTextTopMatchesBleve).

// textTerms returns the analysed terms of a text query, one per clause of
// the disjunction textQuery builds (repeats included, as there).
func (ix *Index) textTerms(text string) []string {
	a := textAnalysis()
	var terms []string
	for _, tok := range a.Analyze([]byte(text)) {
		terms = append(terms, string(tok.Term))
	}
	return append(terms, expandAbbreviations(a, text)...)
}

// textScratch is the per-document state of one textTop, reused.
type textScratch struct {
	acc     []float64 // summed term scores, by document number
	matched []uint16  // terms matched, by document number
	touched []uint32  // document numbers with a match, in the order found
	dropped []uint64  // a bit per document number the filter drops
	posts   []lexPost // the live postings of a query's terms (vecStore.textTop)
}

// dropped marks in sc the documents whose value of field (a keyword field
// every document has one value of, kind or scope) is not among allowed, by
// walking the postings of the field's other values: a filter that keeps
// most documents costs the few it drops. No allowed values: none dropped.
func dropped(ctx context.Context, is *scorch.IndexSnapshot, field string, allowed []string, sc *textScratch) error {
	if len(allowed) == 0 {
		return nil
	}
	// The field's values, from each segment's dictionary in turn: the
	// snapshot's own dictionary walks the segments in goroutines that hand
	// terms over channels, and under fifty searches at once each waited
	// there some 20 ms for the scheduler.
	values := map[string]bool{}
	for _, seg := range is.Segments() {
		d, err := seg.Segment().Dictionary(field)
		if err != nil {
			return err
		}
		it := d.AutomatonIterator(nil, nil, nil)
		for {
			e, err := it.Next()
			if err != nil {
				return err
			}
			if e == nil {
				break
			}
			if !slices.Contains(allowed, e.Term) {
				values[e.Term] = true
			}
		}
	}
	var tfd bleveapi.TermFieldDoc
	for v := range values {
		tr, err := is.TermFieldReader(ctx, []byte(v), field, false, false, false)
		if err != nil {
			return err
		}
		for {
			m, err := tr.Next(&tfd)
			if err != nil || m == nil {
				tr.Close()
				if err != nil {
					return err
				}
				break
			}
			d := binary.BigEndian.Uint64(m.ID)
			w := int(d >> 6)
			if w >= len(sc.dropped) {
				sc.dropped = append(sc.dropped, make([]uint64, w+1-len(sc.dropped))...)
			}
			sc.dropped[w] |= 1 << (d & 63)
		}
	}
	return nil
}

var textScratchPool = sync.Pool{New: func() any { return new(textScratch) }}

// textFilter keeps the documents of some kinds and scopes (nil: any).
type textFilter struct{ kinds, scopes []string }

// textTop returns the n best documents for terms by BM25, as bleve's search
// of the same disjunction returns them, with their scores; with a filter,
// the n best of those it keeps, as the filtered search returns them (a
// filter does not change scores). ok is false when the index is not one it
// can read this way; the caller then asks bleve.
func (ix *Index) textTop(ctx context.Context, terms []string, n int, filter *textFilter) (hits []*search.DocumentMatch, ok bool, err error) {
	if len(terms) == 0 || len(terms) > math.MaxUint16 || n <= 0 {
		return nil, false, nil
	}
	adv, err := ix.bi.Advanced()
	if err != nil {
		return nil, false, nil
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, false, nil
	}
	defer r.Close()
	is, isScorch := r.(*scorch.IndexSnapshot)
	if !isScorch {
		return nil, false, nil
	}
	// The statistics bleve would use: the kept handle's, else the
	// snapshot's own.
	var docs uint64
	var card int
	if st := ix.textStats(); st != nil {
		c, known := st.FieldCardinality[fieldText]
		if !known {
			return nil, false, nil
		}
		docs, card = uint64(st.DocCount), c
	} else {
		if docs, err = is.DocCount(); err != nil {
			return nil, false, err
		}
		if card, err = is.FieldCardinality(fieldText); err != nil {
			return nil, false, err
		}
	}
	if docs == 0 {
		return nil, false, nil
	}
	avg := math.Ceil(float64(card) / float64(docs))
	if avg <= 0 {
		return nil, false, nil // bleve would score by TF-IDF
	}

	clauses := make(byCount, len(terms))
	defer func() {
		for _, c := range clauses {
			if c.r != nil {
				c.r.Close()
			}
		}
	}()
	for i, t := range terms {
		tr, err := is.TermFieldReader(ctx, []byte(t), fieldText, true, true, false)
		if err != nil {
			return nil, false, err
		}
		df := tr.Count()
		clauses[i] = clause{r: tr, df: df, idf: math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))}
	}
	if len(clauses) <= searcher.DisjunctionHeapTakeover {
		sort.Sort(clauses) // as bleve's slice searcher orders its terms
	}
	sumSq := 0.0
	for _, c := range clauses {
		w := 1.0 * c.idf // the term query's boost is 1
		sumSq += w * w
	}
	norm := 1.0 / math.Sqrt(sumSq)

	sc := textScratchPool.Get().(*textScratch)
	defer func() {
		for _, d := range sc.touched {
			sc.acc[d], sc.matched[d] = 0, 0
		}
		sc.touched = sc.touched[:0]
		clear(sc.dropped)
		textScratchPool.Put(sc)
	}()
	if filter != nil {
		if err := dropped(ctx, is, fieldKind, filter.kinds, sc); err != nil {
			return nil, false, err
		}
		if err := dropped(ctx, is, fieldScope, filter.scopes, sc); err != nil {
			return nil, false, err
		}
	}
	var tfd bleveapi.TermFieldDoc
	for _, c := range clauses {
		tr, idf := c.r, c.idf
		weight := 1.0 * idf * norm
		for {
			m, err := tr.Next(&tfd)
			if err != nil {
				return nil, false, err
			}
			if m == nil {
				break
			}
			if len(m.ID) != 8 {
				return nil, false, nil
			}
			d := binary.BigEndian.Uint64(m.ID)
			if d >= math.MaxUint32 {
				return nil, false, nil
			}
			if int(d) >= len(sc.acc) {
				// Room for the index's documents at once (numbers
				// run past their count where some are deleted), not
				// twice the highest number seen: 2 MB at 100,000.
				grow := max(int(d)+1, int(docs), len(sc.acc)+len(sc.acc)/8)
				sc.acc = append(sc.acc, make([]float64, grow-len(sc.acc))...)
				sc.matched = append(sc.matched, make([]uint16, grow-len(sc.matched))...)
			}
			var tf float64
			if m.Freq < scorer.MaxSqrtCache {
				tf = scorer.SqrtCache[int(m.Freq)]
			} else {
				tf = math.Sqrt(float64(m.Freq))
			}
			fieldLength := 1 / (m.Norm * m.Norm)
			score := idf * (tf * search.BM25_k1) /
				(tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/avg)))
			score = score * weight
			if sc.matched[d] == 0 {
				sc.touched = append(sc.touched, uint32(d))
			}
			sc.acc[d] += score
			sc.matched[d]++
		}
	}

	// The n best, by score and then document number, as bleve's
	// collector orders them.
	type hit struct {
		doc   uint32
		score float64
	}
	better := func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	}
	total := float64(len(terms))
	// A few best are kept in order as they come; for many (a recall of
	// -k 1000), all are sorted once instead.
	insert := n <= 256
	top := make([]hit, 0, min(n, len(sc.touched))+1)
	for _, d := range sc.touched {
		if w := int(d >> 6); w < len(sc.dropped) && sc.dropped[w]&(1<<(d&63)) != 0 {
			continue
		}
		h := hit{d, sc.acc[d] * (float64(sc.matched[d]) / total)}
		if !insert {
			top = append(top, h)
			continue
		}
		if len(top) == n && better(h, top[n-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, h, better)
		top = slices.Insert(top, i, h)
		if len(top) > n {
			top = top[:n]
		}
	}
	if !insert {
		slices.SortFunc(top, better)
		top = top[:min(n, len(top))]
	}
	hits = make([]*search.DocumentMatch, len(top))
	for i, h := range top {
		id := make(bleveapi.IndexInternalID, 8)
		binary.BigEndian.PutUint64(id, uint64(h.doc))
		ext, err := is.ExternalID(id)
		if err != nil {
			return nil, false, err
		}
		hits[i] = &search.DocumentMatch{ID: ext, Score: h.score, IndexInternalID: id}
	}
	return hits, true, nil
}

// clause is one term of a text query: its postings, its document count and
// its inverse document frequency.
type clause struct {
	r   bleveapi.TermFieldReader
	df  uint64
	idf float64
}

// byCount orders clauses by document count with the same comparisons as
// bleve's OrderedSearcherList, so sort.Sort leaves them in the same order.
type byCount []clause

func (c byCount) Len() int           { return len(c) }
func (c byCount) Less(i, j int) bool { return c[i].df < c[j].df }
func (c byCount) Swap(i, j int)      { c[i], c[j] = c[j], c[i] }

// textStats returns the BM25 statistics a search of the kept handle gives
// bleve (see bm25Stats), nil when bleve counts them itself.
func (ix *Index) textStats() *search.BM25Stats {
	if ix.kb == nil || bleveStats {
		return nil
	}
	return ix.kb.bm25.preSearch(ix.bi)
}

// textSearch runs the text query for the n best hits (that filter keeps,
// when not nil): textTop where it can, else bleve.
func (ix *Index) textSearch(text string, n int, filter *textFilter) (*bleve.SearchResult, error) {
	if !textByBleve {
		var hits []*search.DocumentMatch
		var ok bool
		err := safely("search", func() error {
			var e error
			hits, ok, e = ix.textTop(ix.c.ctx(), ix.textTerms(text), n, filter)
			return e
		})
		if err != nil {
			return nil, ix.markDamaged(err)
		}
		if ok {
			return &bleve.SearchResult{Hits: hits}, nil
		}
	}
	var q query.Query = ix.textQuery(text)
	if filter != nil {
		q = &filteredQuery{text: q, filter: filterQuery(Query{Kinds: filter.kinds, Scopes: filter.scopes})}
	}
	return ix.search(bleve.NewSearchRequestOptions(q, n, 0, false))
}

// textByBleve, set by a test, leaves text searches to bleve.
var textByBleve bool
