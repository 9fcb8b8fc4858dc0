package index

import (
	"context"
	"testing"
	"time"
)

// readerPaths searches q through r and returns the paths found.
func readerPaths(t *testing.T, r *Reader, q Query) []string {
	t.Helper()
	var out []string
	err := r.Read(context.Background(), func(ix *Index) error {
		hits, err := ix.Search(q)
		for _, h := range hits {
			out = append(out, h.Path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("Read(%+v): %v", q, err)
	}
	return out
}

// TestReaderLagSeesWrote: a warm Reader whose reads lag searches the
// index as the watcher left it, yet the first read after Wrote finds what
// was committed before it, even though a lagging index from before the
// write is still held open; Close lets go of the state it kept.
func TestReaderLagSeesWrote(t *testing.T) {
	f := newFake(t)
	f.commit(f.writeDoc(t, fdoc{id: "A", created: t0, text: "an entry about herons"}))
	r := NewReader(func() Source { return f }, opts(nil), ReaderOptions{Warm: true, Lag: true})
	defer r.Close()
	if got := readerPaths(t, r, Query{Text: "herons"}); len(got) != 1 {
		t.Fatalf("first read found %v", got)
	}
	for deadline := time.Now().Add(10 * time.Second); !r.Lagging(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("reads never allowed to lag")
		}
	}
	// A lagging read: its index is held open for the reads that follow.
	if got := readerPaths(t, r, Query{Text: "herons"}); len(got) != 1 {
		t.Fatalf("lagging read found %v", got)
	}
	r.Locked()
	p := f.writeDoc(t, fdoc{id: "B", created: t0, text: "an entry about egrets"})
	f.commit(p)
	r.Unlocked()
	r.Wrote()
	if got := readerPaths(t, r, Query{Text: "egrets"}); len(got) != 1 || got[0] != p {
		t.Errorf("the read after Wrote found %v, want %s", got, p)
	}
	keep := r.Keep()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if keep.Loaded() {
		t.Error("the Reader's own kept state outlived Close")
	}
}
