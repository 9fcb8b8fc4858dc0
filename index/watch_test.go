package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// watchRun runs Watch in the background and collects its events.
type watchRun struct {
	mu     sync.Mutex
	events []Event
	notify chan struct{}
	done   chan error
	cancel context.CancelFunc
	sync   *Syncer
}

func startWatch(t *testing.T, src Source, o Options) *watchRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchRun{notify: make(chan struct{}, 100), done: make(chan error, 1), cancel: cancel, sync: NewSyncer()}
	go func() {
		w.done <- Watch(ctx, src, o, func(e Event) {
			w.mu.Lock()
			w.events = append(w.events, e)
			w.mu.Unlock()
			select {
			case w.notify <- struct{}{}:
			default:
			}
		}, w.sync)
	}()
	t.Cleanup(func() { w.stop(t) })
	return w
}

// waitFor waits until some event satisfies ok.
func (w *watchRun) waitFor(t *testing.T, what string, ok func(Event) bool) Event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	seen := 0
	for {
		w.mu.Lock()
		for ; seen < len(w.events); seen++ {
			if e := w.events[seen]; ok(e) {
				w.mu.Unlock()
				return e
			}
		}
		w.mu.Unlock()
		select {
		case <-w.notify:
		case err := <-w.done:
			t.Fatalf("Watch ended waiting for %s: %v", what, err)
		case <-deadline:
			t.Fatalf("no event for %s within 10s", what)
		}
	}
}

func (w *watchRun) stop(t *testing.T) {
	t.Helper()
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.cancel = nil
	select {
	case err := <-w.done:
		if err != nil {
			t.Errorf("Watch: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("Watch did not stop within 10s")
	}
}

func TestWatch(t *testing.T) {
	f := newFake(t)
	old := f.writeDoc(t, fdoc{id: "O", created: t0, text: "existing entry about herons"})
	w := startWatch(t, f, opts(nil))
	w.waitFor(t, "the initial catch-up", func(e Event) bool { return e.Full && e.Err == nil && e.Stats.Docs == 1 })

	lease := filepath.Join(f.root, ".index", "watch")
	if _, err := os.Stat(lease); err != nil {
		t.Fatalf("no lease while watching: %v", err)
	}
	if !watcherActive(filepath.Join(f.root, ".index")) {
		t.Fatal("lease is not fresh")
	}

	// A file created right after its brand-new nested directory.
	d := fdoc{id: "N", scope: "newscope", created: t0, text: "a nested entry about egrets"}
	nested := "entries/newscope/notes/sub/deeper/x.md"
	full := filepath.Join(f.root, filepath.FromSlash(nested))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(d.encode()), 0o644); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the nested file", func(e Event) bool { return e.Err == nil && e.Stats.Docs == 2 })

	// Readers trust the lease: no stat pass (which would load the racy
	// new file again), and the file is found. The reader gets a source of
	// its own to count its loads apart from the watcher's.
	reader := &fakeSource{root: f.root}
	if got := searchPaths(t, reader, opts(nil), Query{Text: "egrets"}); len(got) != 1 || got[0] != nested {
		t.Errorf("Search(egrets) = %v, want %s", got, nested)
	}
	if n := reader.loads.Load(); n != 0 {
		t.Errorf("reader loaded %d files while the watcher runs", n)
	}

	// An edit and a removal in one burst.
	f.writeFile(t, old, fdoc{id: "O", created: t0, text: "existing entry about storks"}.encode(), oldTime.Add(time.Minute))
	f.remove(t, nested)
	w.waitFor(t, "the edit and the removal", func(e Event) bool {
		return e.Err == nil && e.Stats.Docs == 1 && e.Stats.Indexed >= 1 && e.Stats.Removed == 1
	})
	if got := searchPaths(t, f, opts(nil), Query{Text: "storks egrets herons"}); len(got) != 1 || got[0] != old {
		t.Errorf("Search = %v, want only %s", got, old)
	}

	// A directory removed with its files.
	d2 := fdoc{id: "R", scope: "gone", created: t0, text: "doomed entry"}
	p2 := f.writeDoc(t, d2)
	w.waitFor(t, "the doomed entry", func(e Event) bool { return e.Err == nil && e.Stats.Docs == 2 })
	if err := os.RemoveAll(filepath.Join(f.root, "entries", "gone")); err != nil {
		t.Fatal(err)
	}
	w.waitFor(t, "the removed directory", func(e Event) bool { return e.Err == nil && e.Stats.Docs == 1 })
	_ = p2

	// A commit is picked up by the head poll.
	f.commit(old)
	w.waitFor(t, "the commit", func(e Event) bool { return e.Err == nil && e.Stats.Commit == "c001" })

	w.stop(t)
	if _, err := os.Stat(lease); err == nil {
		t.Error("lease left behind after Watch returned")
	}
}

// TestWatchSync: an edit is searchable as soon as Sync returns, well
// before the watcher's debounce would have applied it.
func TestWatchSync(t *testing.T) {
	f := newFake(t)
	old := f.writeDoc(t, fdoc{id: "O", created: t0, text: "existing entry about herons"})
	w := startWatch(t, f, opts(nil))
	w.waitFor(t, "the initial catch-up", func(e Event) bool { return e.Full && e.Err == nil && e.Stats.Docs == 1 })
	ctx := context.Background()
	for i, word := range []string{"storks", "ibises", "cranes", "plovers", "avocets"} {
		f.writeFile(t, old, fdoc{id: "O", created: t0, text: "existing entry about " + word}.encode(), oldTime.Add(time.Duration(i+1)*time.Minute))
		p := f.writeDoc(t, fdoc{id: fmt.Sprintf("N%d", i), scope: "s", created: t0, text: "new entry about " + word + " too"})
		if err := w.sync.Sync(ctx); err != nil {
			t.Fatalf("Sync: %v", err)
		}
		got := searchPaths(t, f, Options{SkipStat: true}, Query{Text: word})
		slices.Sort(got)
		want := []string{old, p}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("right after Sync, Search(%s) = %v, want %v", word, got, want)
		}
	}
	// A commit is taken in too, without waiting for the head poll.
	f.commit(old)
	if err := w.sync.Sync(ctx); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	w.mu.Lock()
	last := w.events[len(w.events)-1]
	w.mu.Unlock()
	if last.Err != nil || last.Stats.Commit != "c001" {
		t.Errorf("after Sync, the last batch is %+v, want one at commit c001", last)
	}
	// Cookies are not left behind.
	if m, _ := filepath.Glob(filepath.Join(f.root, ".sync-*")); len(m) != 0 {
		t.Errorf("cookie files left: %v", m)
	}
	// A Sync with nobody watching waits only as long as its context.
	w.stop(t)
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := w.sync.Sync(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Sync without a watcher = %v, want the deadline", err)
	}
}

func TestWatchRefusesSecondWatcher(t *testing.T) {
	f := newFake(t)
	dir := filepath.Join(f.root, ".index")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// pid 1 is alive on any Unix host.
	l := lease{PID: 1, Host: hostname(), Started: time.Now(), Heartbeat: time.Now()}
	if err := writeLease(dir, l); err != nil {
		t.Fatal(err)
	}
	err := Watch(context.Background(), f, opts(nil), nil, nil)
	if !errors.Is(err, ErrWatching) {
		t.Fatalf("Watch with a fresh foreign lease = %v, want ErrWatching", err)
	}
	// A stale lease is ignored by readers.
	l.Heartbeat = time.Now().Add(-time.Minute)
	if err := writeLease(dir, l); err != nil {
		t.Fatal(err)
	}
	if watcherActive(dir) {
		t.Error("a lease a minute old counts as active")
	}
	// So is a lease of a dead process.
	l.Heartbeat, l.PID = time.Now(), 1<<30
	if err := writeLease(dir, l); err != nil {
		t.Fatal(err)
	}
	if watcherActive(dir) {
		t.Error("a dead process's lease counts as active")
	}
}

// listingSource is a source that lists its files apart from stating them
// (as the store does), counting its listings.
type listingSource struct {
	*fakeSource
	lists atomic.Int64
}

func (s *listingSource) List() ([]FileStat, error) {
	s.lists.Add(1)
	return ListFiles(s.root)
}

func (s *listingSource) LoadStat(p string) (Doc, FileStat, error) {
	d, err := s.Load(p)
	st := FileStat{Path: p, Size: -1}
	if fi, serr := os.Stat(filepath.Join(s.root, filepath.FromSlash(p))); serr == nil {
		st.Size, st.ModTime = fi.Size(), fi.ModTime().UnixNano()
	}
	return d, st, err
}

// TestWatchListsForRebuild: a watcher that starts without an index hands
// the files it listed while adding its watches to the rebuild, which does
// not list them again, and indexes what a rebuild of its own would: live
// regular entry files, not a hidden one, a symbolic link or a deleted one.
func TestWatchListsForRebuild(t *testing.T) {
	src := &listingSource{fakeSource: newFake(t)}
	var want []string
	for i, scope := range []string{"global", "proj", "proj"} {
		want = append(want, src.writeDoc(t, fdoc{id: fmt.Sprintf("E%d", i), scope: scope, created: t0.Add(time.Duration(i) * time.Second), text: "an entry about herons"}))
	}
	slices.Sort(want)
	dir := filepath.Join(src.root, "entries", "proj", "notes")
	if err := os.WriteFile(filepath.Join(dir, ".hidden.md"), []byte("id: H\n---\nhidden herons\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(src.root, filepath.FromSlash(want[0])), filepath.Join(dir, "20260101T000000Z__L.md")); err != nil {
		t.Fatal(err)
	}
	src.writeFile(t, "entries/proj/deleted/notes/20260101T000000Z__D.md", fdoc{id: "D", scope: "proj", created: t0, text: "deleted herons"}.encode(), oldTime)

	w := startWatch(t, src, opts(nil))
	ev := w.waitFor(t, "the initial catch-up", func(e Event) bool { return e.Full && e.Err == nil })
	w.stop(t)
	if !ev.Stats.Rebuilt || ev.Stats.Docs != len(want) {
		t.Errorf("catch-up: %+v, want a rebuild of %d entries", ev.Stats, len(want))
	}
	if n := src.lists.Load(); n != 0 {
		t.Errorf("the rebuild listed the files %d times, after the watcher had", n)
	}
	if got := src.loadedPaths(); !slices.Equal(got, want) {
		t.Errorf("the watcher's rebuild loaded %v, want %v", got, want)
	}

	// A rebuild of its own lists them once and loads the same.
	src.resetLoads()
	st, err := Rebuild(src, opts(nil))
	if err != nil {
		t.Fatal(err)
	}
	if n := src.lists.Load(); n != 1 || st.Docs != len(want) {
		t.Errorf("rebuild: %d listings, %d entries", n, st.Docs)
	}
	if got := src.loadedPaths(); !slices.Equal(got, want) {
		t.Errorf("a rebuild loaded %v, want %v", got, want)
	}
}
