package index

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestKeptBM25Stats: searches of a kept handle, given statistics the
// handle computes itself, score exactly as bleve's own on the same index,
// with filters on several kinds and scopes and on fields no document has
// (pins), before and after a change.
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
		if n := a.kb.bm25.missed.Load(); n > 0 || a.kb.bm25.given.Load() == 0 {
			t.Errorf("%s: %d searches given statistics, %d not served by them", when, a.kb.bm25.given.Load(), n)
		}
		// bleve's own count, on the same handle and snapshot.
		bleveStats = true
		for i, q := range queries {
			if want := why(a, q); !slices.Equal(got[i], want) {
				t.Errorf("%s, %q: kept statistics\n%v\nbleve's own\n%v", when, q.Text, got[i], want)
			}
		}
		bleveStats = false
		a.Close()
	}
	compare("built")
	for i := range 3 {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("C%02d", i), created: t0, text: "more herons, more sql, a longer note than the others were"})
	}
	f.writeFile(t, fdoc{id: "B05", created: t0}.path(), fdoc{id: "B05", created: t0, text: "an entirely different text now, about kestrels and ravens"}.encode(), oldTime.Add(time.Minute))
	compare("after a change and an edit")
}
