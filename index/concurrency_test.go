package index

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// TestConcurrentOpeners has two goroutines open, search and close the
// index over and over while a third keeps changing files: nobody hangs,
// nobody fails, and every file ends up indexed.
func TestConcurrentOpeners(t *testing.T) {
	f := newFake(t)
	for i := range 20 {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("S%02d", i), created: t0, text: "seed entry"})
	}
	mustOpen(t, f, opts(nil)).Close()

	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 2 {
		wg.Go(func() {
			for i := range 15 {
				o := opts(nil)
				o.LockTimeout = 200 * time.Millisecond
				ix, err := Open(f, o)
				if err != nil {
					errs <- fmt.Errorf("opener %d, round %d: %w", g, i, err)
					return
				}
				if _, err := ix.Search(Query{Text: "entry"}); err != nil {
					errs <- err
				}
				ix.Close()
			}
		})
	}
	wg.Go(func() {
		for i := range 15 {
			f.writeDoc(t, fdoc{id: fmt.Sprintf("W%02d", i), created: t0, text: "written meanwhile"})
			time.Sleep(5 * time.Millisecond)
		}
	})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("concurrent openers hang")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ix := mustOpen(t, f, opts(nil))
	if st := ix.LastUpdate(); st.Docs != 35 {
		t.Errorf("LastUpdate() = %+v, want 35 docs", st)
	}
}

// TestBusyIndex holds the index in one Index while another opens it.
func TestBusyIndex(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "first"})
	mustOpen(t, f, opts(nil)).Close()
	fast := opts(nil)
	fast.LockTimeout = 50 * time.Millisecond

	// An Index that applied changes holds the index exclusively: another
	// opener gives up with ErrBusy instead of hanging.
	f.writeDoc(t, fdoc{id: "B", created: t0, text: "second"})
	holder := mustOpen(t, f, opts(nil))
	f.writeDoc(t, fdoc{id: "C", created: t0, text: "third"})
	start := time.Now()
	_, err := Open(f, fast)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("Open while held exclusively = %v, want ErrBusy", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Open took %v to give up", d)
	}
	holder.Close()

	// A reader holds it shared: an opener with changes searches without
	// them and says so.
	reader := mustOpen(t, f, opts(nil)) // applies C, then holds exclusively...
	reader.Close()
	reader = mustOpen(t, f, opts(nil)) // ...this one has nothing to do: shared
	defer reader.Close()
	f.writeFile(t, a, fdoc{id: "A", created: t0, text: "first edited"}.encode(), oldTime.Add(time.Minute))
	var w warnings
	o := fast
	o.Warn = w.warn
	ix, err := Open(f, o)
	if err != nil {
		t.Fatalf("Open beside a reader: %v", err)
	}
	defer ix.Close()
	if ix.stale != 1 || len(w.paths()) != 1 {
		t.Errorf("stale = %d, warnings %v; want 1 stale file reported", ix.stale, w.got)
	}
	hits, err := ix.Search(Query{Text: "edited"})
	if err != nil || len(hits) != 0 {
		t.Errorf("Search(edited) on the stale index = %v, %v; want nothing", hits, err)
	}
}

// TestHelperHoldIndex is not a test: TestOtherProcessHoldsIndex runs it in
// a child process to hold the index open from another process.
func TestHelperHoldIndex(t *testing.T) {
	root := os.Getenv("MIRA_INDEX_HELPER_ROOT")
	if root == "" {
		t.Skip("helper process only")
	}
	ix, err := Open(&fakeSource{root: root}, Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	time.Sleep(time.Second)
	ix.Close()
	os.Exit(0)
}

func TestOtherProcessHoldsIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "original words"})
	mustOpen(t, f, opts(nil)).Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldIndex$")
	cmd.Env = append(os.Environ(), "MIRA_INDEX_HELPER_ROOT="+f.root)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Wait()
		t.Fatalf("helper said %q, %v", line, err)
	}
	f.writeFile(t, a, fdoc{id: "A", created: t0, text: "changed words"}.encode(), oldTime.Add(time.Minute))
	var w warnings
	o := opts(&w)
	o.LockTimeout = 50 * time.Millisecond
	start := time.Now()
	ix, err := Open(f, o)
	if err != nil {
		t.Fatalf("Open while another process reads: %v", err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("Open took %v beside a reader", d)
	}
	if ix.stale != 1 || len(w.paths()) != 1 {
		t.Errorf("stale = %d, warnings %v; want the change reported as pending", ix.stale, w.got)
	}
	ix.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	if got := searchPaths(t, f, opts(nil), Query{Text: "changed"}); len(got) != 1 || got[0] != a {
		t.Errorf("after the other process let go, Search(changed) = %v, want %s", got, a)
	}
}

// TestReadersDuringRebuilds: readers opening the index as it is (as a
// server's lagging reads do) while rebuilds put in new generations and
// remove the old ones never see a generation vanish under them.
func TestReadersDuringRebuilds(t *testing.T) {
	f := newFake(t)
	for i := range 30 {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("R%02d", i), created: t0, text: "entry about herons"})
	}
	mustOpen(t, f, opts(nil)).Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	wg.Go(func() {
		defer close(stop)
		for i := range 12 {
			if _, err := Rebuild(f, opts(nil)); err != nil {
				errs <- fmt.Errorf("rebuild %d: %w", i, err)
				return
			}
		}
	})
	for g := range 2 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				o := opts(nil)
				o.NoRefresh = true
				ix, err := Open(f, o)
				if errors.Is(err, ErrBusy) {
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("reader %d, open %d: %w", g, n, err)
					return
				}
				ix.Close()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
