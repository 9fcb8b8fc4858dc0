package index

import (
	"sync"
	"testing"
	"time"
)

// TestKeepLock: a Keep holds the generation's lock between Opens of an
// unchanged generation, and lets go of it whenever a writer needs the
// lock: at once for a writer in this process, when idle for one
// elsewhere, and when released.
func TestKeepLock(t *testing.T) {
	f, o, keep := keptNotes(t, 3, "D", "herons")
	o.LockTimeout = 5 * time.Second
	plain := opts(nil)
	plain.LockTimeout = 5 * time.Second
	count := func(ix *Index) int {
		t.Helper()
		hits, err := ix.Search(Query{Text: "herons", K: 10, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}

	a := mustOpen(t, f, o)
	first := a.lk
	if a.kb == nil || count(a) != 3 {
		t.Fatalf("first Open: kept %v, %d hits", a.kb != nil, count(a))
	}
	a.Close()
	b := mustOpen(t, f, o)
	if b.lk != first {
		t.Error("the second Open of an unchanged generation took the lock again")
	}
	if count(b) != 3 {
		t.Error("searching the kept index")
	}
	b.Close()

	// A writer in this process: the handle is dropped, the change applied,
	// and the next Open keeps the updated index.
	f.writeDoc(t, fdoc{id: "D3", created: t0, text: "a fourth heron"})
	c := mustOpen(t, f, o)
	if c.last.Indexed != 1 || c.stale != 0 {
		t.Fatalf("the update with a kept handle: indexed %d, stale %d", c.last.Indexed, c.stale)
	}
	if count(c) != 4 {
		t.Error("the update is not searched")
	}
	c.Close()
	d := mustOpen(t, f, o)
	if d.kb == nil || d.lk == first {
		t.Error("after the update: not kept, or the old handle")
	}

	// A writer while the kept handle is being searched waits for that
	// search to end, then gets the lock.
	f.writeDoc(t, fdoc{id: "D4", created: t0, text: "a fifth heron"})
	done := make(chan *Index)
	go func() {
		ix, err := Open(f, o)
		if err != nil {
			t.Error(err)
		}
		done <- ix
	}()
	time.Sleep(100 * time.Millisecond)
	d.Close()
	e := <-done
	if e == nil || e.last.Indexed != 1 || e.stale != 0 {
		t.Fatalf("the writer behind a search: %+v", e)
	}
	e.Close()

	// A writer that must wait for the searches of a read-only handle
	// says so (WriterOpening, WriterComing): a server holding the handle
	// open for its reads lets go then.
	time.Sleep(10 * keepIdleWritable) // the writable handle idles out
	r := mustOpen(t, f, o)
	if r.kb == nil || r.kb.writable {
		t.Fatalf("after the writer idled out: kept %v", r.kb != nil)
	}
	coming := keep.WriterComing()
	if keep.WriterOpening() || isClosed(coming) {
		t.Fatal("a writer is said to be opening before one is")
	}
	f.writeDoc(t, fdoc{id: "D4b", created: t0, text: "another heron"})
	go func() {
		ix, err := Open(f, o)
		if err != nil {
			t.Error(err)
		}
		done <- ix
	}()
	select {
	case <-coming:
	case <-time.After(5 * time.Second):
		t.Error("WriterComing not closed while a writer waits for the handle")
	}
	if !keep.WriterOpening() || !isClosed(keep.WriterComing()) {
		t.Error("WriterOpening or WriterComing does not say the writer is opening")
	}
	r.Close()
	if e := <-done; e == nil || e.last.Indexed != 1 {
		t.Fatalf("the writer behind a read-only handle: %+v", e)
	} else {
		e.Close()
	}
	if keep.WriterOpening() || isClosed(keep.WriterComing()) {
		t.Error("a writer is still said to be opening once it has opened")
	}

	// A writer without the Keep (another process) waits for the idle
	// handle to be closed.
	g := mustOpen(t, f, o)
	g.Close()
	f.writeDoc(t, fdoc{id: "D5", created: t0, text: "a sixth heron"})
	start := time.Now()
	h := mustOpen(t, f, plain)
	if h.last.Indexed != 1 || h.stale != 0 {
		t.Fatalf("the other writer: indexed %d, stale %d", h.last.Indexed, h.stale)
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Errorf("the other writer waited %v for an idle kept handle", waited)
	}
	h.Close()
	keepMu.Lock()
	left := keep.held
	keepMu.Unlock()
	if left != nil {
		t.Error("an idle kept handle was not closed")
	}

	// Release closes the handle at once.
	i := mustOpen(t, f, o)
	i.Close()
	keep.Release()
	f.writeDoc(t, fdoc{id: "D6", created: t0, text: "a seventh heron"})
	quick := plain
	quick.LockTimeout = 50 * time.Millisecond
	j := mustOpen(t, f, quick)
	if j.last.Indexed != 1 || j.stale != 0 {
		t.Errorf("after Release: indexed %d, stale %d", j.last.Indexed, j.stale)
	}
	j.Close()
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestAttachWhileApplying: a search that attaches while a writer of this
// process applies a batch (holding the kept handle's gate) takes the meta
// the writer found matching the index before it began, and goes on rather
// than wait the batch out; a handle that never matched one waits.
func TestAttachWhileApplying(t *testing.T) {
	f := newFake(t)
	f.writeNotes(t, 3, "D", "herons")
	o := opts(nil)
	o.LockTimeout = 5 * time.Second
	mustOpen(t, f, o).Close()
	var keep Keep
	o.Keep = &keep
	type opened struct {
		ix  *Index
		err error
	}
	openWith := func(src Source, o Options) <-chan opened {
		done := make(chan opened, 1)
		go func() {
			ix, err := Open(src, o)
			done <- opened{ix, err}
		}()
		return done
	}
	attach := func() <-chan opened {
		lo := o
		lo.NoRefresh = true
		return openWith(f, lo)
	}

	// A writer of this process opens a new writable handle and stalls
	// in the middle of its batch, reading the new file.
	f.writeDoc(t, fdoc{id: "D3", created: t0, text: "a fourth heron"})
	stall := &stallSource{fakeSource: f, entered: make(chan struct{}), resume: make(chan struct{})}
	writer := openWith(stall, o)
	select {
	case <-stall.entered:
	case got := <-writer:
		t.Fatalf("the writer did not load the new file: %v", got.err)
	}
	var got opened
	select {
	case got = <-attach():
		if got.err != nil {
			t.Fatal(got.err)
		}
	case <-time.After(10 * time.Second):
		close(stall.resume)
		t.Fatal("the attaching search waited for the writer's batch")
	}
	if got.ix.meta.Docs != 3 || got.ix.kb == nil || !got.ix.kb.writable {
		t.Errorf("attached during the batch with %d documents in the meta (writable handle %v), want the 3 before it",
			got.ix.meta.Docs, got.ix.kb != nil && got.ix.kb.writable)
	}
	got.ix.Close()
	close(stall.resume)
	w := <-writer
	if w.err != nil {
		t.Fatal(w.err)
	}
	if w.ix.meta.Docs != 4 {
		t.Errorf("the writer's batch: %d documents, want 4", w.ix.meta.Docs)
	}

	// Without a meta known to match, an attach waits for the gate.
	kb := w.ix.kb
	kb.gate.Lock()
	kb.knownMu.Lock()
	kb.known = nil
	kb.knownMu.Unlock()
	done := attach()
	select {
	case <-done:
		t.Error("an attach with no known meta did not wait for the gate")
	case <-time.After(50 * time.Millisecond):
	}
	kb.gate.Unlock()
	if got := <-done; got.err != nil {
		t.Fatal(got.err)
	} else if got.ix.meta.Docs != 4 {
		t.Errorf("attached after the batch with %d documents in the meta, want 4", got.ix.meta.Docs)
	} else {
		got.ix.Close()
	}
	w.ix.Close()
}

// stallSource stalls its first Load until resume is closed, having
// closed entered.
type stallSource struct {
	*fakeSource
	once            sync.Once
	entered, resume chan struct{}
}

func (s *stallSource) Load(path string) (Doc, error) {
	s.once.Do(func() {
		close(s.entered)
		<-s.resume
	})
	return s.fakeSource.Load(path)
}
