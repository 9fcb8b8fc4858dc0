package index

import (
	"fmt"
	"slices"
	"testing"
)

// TestKeptBM25Stats: searches of a kept handle, given the handle's own
// field statistics, score exactly as bleve's own on an unchanged index,
// with filters on fields no document has (pins); after a change of more
// than 1% the statistics are counted again. (Scorch's own term count sums
// the segments' dictionaries, so it moves with merges too: after a change
// the two agree only once the segments are the same.)
func TestKeptBM25Stats(t *testing.T) {
	f := newFake(t)
	for i := range 40 {
		d := fdoc{id: fmt.Sprintf("B%02d", i), created: t0, text: fmt.Sprintf("note %d about sql databases, herons and the payment queue %d", i, i%7)}
		if i%3 == 0 {
			d.kind, d.scope = "decision", "shop"
		}
		f.writeDoc(t, d)
	}
	var keep Keep
	kept := opts(nil)
	kept.Keep = &keep
	defer keep.Release()
	queries := []Query{
		{Text: "sql herons", Now: t0, Mode: ModeLexical},
		{Text: "payment queue 3", Now: t0, Mode: ModeLexical, Kinds: []string{"decision"}},
		{Text: "databases", Now: t0, Scopes: []string{"shop"}},
		{Text: "herons in the queue", Now: t0, Kinds: []string{"decision", "note"}, Scopes: []string{"shop", "global"}},
	}
	why := func(ix *Index, q Query) []string {
		t.Helper()
		hits, err := ix.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, fmt.Sprintf("%s %.9f", h.Path, h.Why.BM25))
		}
		return out
	}
	a := mustOpen(t, f, kept)
	if a.kb == nil {
		t.Fatal("no kept handle")
	}
	var got [][]string
	for _, q := range queries {
		got = append(got, why(a, q))
	}
	if _, err := a.Standing([]string{"shop"}, 10); err != nil {
		t.Errorf("standing material (a filter on pins, which nothing has): %v", err)
	}
	if n := a.kb.bm25.missed.Load(); n > 0 {
		t.Errorf("%d searches were not served by the kept statistics", n)
	}
	if a.kb.bm25.card == nil || a.kb.bm25.docs != 40 {
		t.Errorf("the kept handle's statistics: %d documents, %v", a.kb.bm25.docs, a.kb.bm25.card)
	}
	kb := a.kb
	a.Close()
	plain := mustOpen(t, f, opts(nil))
	for i, q := range queries {
		if want := why(plain, q); !slices.Equal(got[i], want) {
			t.Errorf("%q: kept statistics\n%v\nbleve's own\n%v", q.Text, got[i], want)
		}
	}
	plain.Close()

	// One more document in 40 is more than 1%: counted again. The
	// handle is the same one only while it is kept; either way the
	// statistics must be of 41 documents.
	f.writeDoc(t, fdoc{id: "C00", created: t0, text: "more herons, more sql, a longer note than the others were"})
	b := mustOpen(t, f, kept)
	defer b.Close()
	why(b, queries[0])
	if b.kb.bm25.docs != 41 {
		t.Errorf("after a change: statistics of %d documents, want 41 (same handle: %v)", b.kb.bm25.docs, b.kb == kb)
	}
}
