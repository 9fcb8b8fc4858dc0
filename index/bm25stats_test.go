package index

import (
	"fmt"
	"slices"
	"testing"
)

// TestKeptBM25Stats: searches of a kept handle, given the handle's own
// field statistics, score exactly as bleve's own on an unchanged index,
// with filters on fields no document has (pins), and after the index
// changed.
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
	compare := func(when string) {
		t.Helper()
		a := mustOpen(t, f, kept)
		if a.kb == nil {
			t.Fatal("no kept handle")
		}
		var got [][]string
		for _, q := range queries {
			got = append(got, why(a, q))
		}
		if _, err := a.Standing([]string{"shop"}, 10); err != nil {
			t.Errorf("%s: standing material (a filter on pins, which nothing has): %v", when, err)
		}
		if a.kb.bm25.card == nil {
			t.Errorf("%s: the kept handle's searches counted no statistics", when)
		}
		a.Close()
		plain := mustOpen(t, f, opts(nil))
		for i, q := range queries {
			if want := why(plain, q); !slices.Equal(got[i], want) {
				t.Errorf("%s, %q: kept statistics\n%v\nbleve's own\n%v", when, q.Text, got[i], want)
			}
		}
		plain.Close()
	}
	compare("unchanged")
	for i := range 10 {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("C%02d", i), created: t0, text: "more herons, more sql, a longer note than the others were"})
	}
	compare("after a change")
}
