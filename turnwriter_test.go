package mira

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/mem"
)

// TestTurnWriter: turns added from many goroutines are each stored once,
// in far fewer commits than turns, repeated text included, in the order
// they were added within a conversation.
func TestTurnWriter(t *testing.T) {
	m := open(t, false)
	var commits atomic.Int32
	w := m.NewTurnWriter(TurnWriterOptions{Delay: 50 * time.Millisecond, Source: "test",
		Committed: func([]*mem.Entry) { commits.Add(1) }})
	const convs, turns = 20, 6
	var wg sync.WaitGroup
	for c := range convs {
		wg.Go(func() {
			for i := range turns {
				role := []string{"user", "assistant"}[i%2]
				body := "yes" // the same text again and again: each is a turn of its own
				if i%3 == 0 {
					body = fmt.Sprintf("turn %d of conversation %d", i, c)
				}
				if err := w.Add(&mem.Entry{Scope: fmt.Sprintf("c%d", c), Role: role, Body: body}); err != nil {
					t.Errorf("Add: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if err := w.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for c := range convs {
		got, err := m.Turns(t.Context(), fmt.Sprintf("c%d", c), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != turns {
			t.Fatalf("conversation %d has %d turns, want %d", c, len(got), turns)
		}
		for i, e := range got {
			if want := []string{"user", "assistant"}[i%2]; e.Role != want {
				t.Errorf("conversation %d turn %d: role %s, want %s (out of order)", c, i, e.Role, want)
			}
		}
	}
	if n := commits.Load(); n < 1 || n > convs*turns/4 {
		t.Errorf("%d commits for %d turns: want them batched", n, convs*turns)
	}
	log := gitOut(t, m.Root(), "log", "--format=%s")
	if !strings.Contains(log, "turns: ") {
		t.Errorf("no turns commit:\n%s", log)
	}
	gitOut(t, m.Root(), "fsck", "--strict")
	if st := gitOut(t, m.Root(), "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(&mem.Entry{Scope: "c0", Role: "user", Body: "late"}); !errors.Is(err, ErrWriterClosed) {
		t.Errorf("Add after Close = %v, want ErrWriterClosed", err)
	}
}

// TestTurnWriterRefuses: a secret or a turn without a role is refused at
// Add, and nothing of it reaches the store.
func TestTurnWriterRefuses(t *testing.T) {
	m := open(t, false)
	w := m.NewTurnWriter(TurnWriterOptions{Delay: time.Millisecond})
	defer w.Close(t.Context())
	err := w.Add(&mem.Entry{Scope: "c", Role: "user", Body: "my key is AKIAZ7QW3ERTYUIOP4AB"})
	var se *SecretError
	if !errors.As(err, &se) {
		t.Errorf("a secret: %v, want a SecretError", err)
	}
	if err := w.Add(&mem.Entry{Scope: "c", Body: "who said this?"}); err == nil {
		t.Errorf("a turn without a role was accepted")
	}
	if err := w.Add(&mem.Entry{Scope: "c", Role: "user", Body: "kept"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, _ := m.Turns(t.Context(), "c", 0)
	if len(got) != 1 || got[0].Body != "kept" {
		t.Errorf("turns = %v, want only the one kept", got)
	}
}

// lagMemory opens a warm Memory whose reads lag, in a new store.
func lagMemory(t *testing.T) *Memory {
	t.Helper()
	return lagMemoryOpen(t, nil)
}

// lagMemoryOpen is lagMemory whose index opens go through open (nil:
// index.Open).
func lagMemoryOpen(t *testing.T, open func(index.Source, index.Options) (*index.Index, error)) *Memory {
	t.Helper()
	m, err := Open(t.Context(), Options{Home: filepath.Join(t.TempDir(), "home"), Config: &Config{}, Index: index.ReaderOptions{Warm: true, Lag: true, Open: open},
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestLagSeesOwnWrites: with Options.Index.Lag a read does not wait for the
// watcher to take in stored turns, yet a memory this Memory remembered is
// found by the very next recall, while turns keep being committed.
func TestLagSeesOwnWrites(t *testing.T) {
	m := lagMemory(t)
	w := m.NewTurnWriter(TurnWriterOptions{Delay: 50 * time.Millisecond, Source: "test"})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			w.Add(&mem.Entry{Scope: "chat", Role: "user", Body: fmt.Sprintf("chatter %d about nothing", i)})
			time.Sleep(10 * time.Millisecond)
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
		w.Close(t.Context())
	}()
	words := []string{"aubergine", "bergamot", "cardamom", "dragonfruit", "elderflower"}
	for _, word := range words {
		if _, err := m.Remember(t.Context(), []*mem.Entry{{Kind: "fact", Body: "The team's mascot is a " + word + "."}}, RememberOptions{}); err != nil {
			t.Fatal(err)
		}
		recs, err := m.Recall(t.Context(), Query{Text: word, K: 3, Mode: "lexical"})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 || !strings.Contains(recs[0].Text, word) {
			t.Fatalf("the recall right after remembering %q found %v", word, recs)
		}
	}
}

// TestLagSeesOthersWrites: a lagging Memory (a server's) finds at once
// what another process remembered, while its own turns keep it lagging.
func TestLagSeesOthersWrites(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	opt := Options{Home: home, Config: &Config{}, Index: index.ReaderOptions{Warm: true, Lag: true}, Getenv: func(string) string { return "" }}
	m, err := Open(t.Context(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	w := m.NewTurnWriter(TurnWriterOptions{Delay: 20 * time.Millisecond, Source: "test"})
	defer w.Close(t.Context())
	if err := m.Prepare(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	// Another process: a Memory of its own, neither warm nor lagging.
	other, err := Open(t.Context(), Options{Home: home, Config: &Config{}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for i, word := range []string{"aubergine", "bergamot", "cardamom"} {
		w.Add(&mem.Entry{Scope: "chat", Role: "user", Body: fmt.Sprintf("chatter %d about nothing", i)})
		if err := w.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Recall(t.Context(), Query{Text: "chatter", K: 3, Mode: "lexical"}); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Remember(t.Context(), []*mem.Entry{{Kind: "fact", Body: "The team's mascot is a " + word + "."}}, RememberOptions{}); err != nil {
			t.Fatal(err)
		}
		recs, err := m.Recall(t.Context(), Query{Text: word, K: 3, Mode: "lexical"})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 || !strings.Contains(recs[0].Text, word) {
			t.Fatalf("the recall right after another process remembered %q found %v", word, recs)
		}
	}
}

// TestLagSearchesPreviousWhileOpening: while the next lagging index opens
// (it waits while the watcher applies a batch), the one before it is held
// open, even when nobody searches it any more, and reads search it instead
// of waiting; once the next one is open they search that. After a write,
// reads search the index the write brought along, and none from before.
func TestLagSearchesPreviousWhileOpening(t *testing.T) {
	var (
		mu      sync.Mutex
		gate    chan struct{} // when set, the next open waits for it
		opening = make(chan struct{}, 1)
		opens   atomic.Int32
	)
	m := lagMemoryOpen(t, func(src index.Source, o index.Options) (*index.Index, error) {
		opens.Add(1)
		mu.Lock()
		g := gate
		mu.Unlock()
		if g != nil {
			opening <- struct{}{}
			<-g
		}
		return index.Open(src, o)
	})
	if _, err := m.Remember(t.Context(), []*mem.Entry{{Kind: "fact", Body: "The team's mascot is a bergamot."}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Recall(t.Context(), Query{Text: "mascot", K: 1}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !m.ix.Lagging(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("reads never allowed to lag")
		}
	}
	// read searches the lagging index, telling which one on in (if set)
	// and holding it until release is closed.
	read := func(in chan *index.Index, release chan struct{}) (*index.Index, error) {
		var got *index.Index
		err := m.withIndex(t.Context(), func(ix *index.Index) error {
			got = ix
			if in != nil {
				in <- ix
			}
			if release != nil {
				<-release
			}
			return nil
		})
		return got, err
	}
	releaseA := make(chan struct{})
	gotA := make(chan *index.Index, 1)
	var wg, wgA sync.WaitGroup
	wgA.Go(func() {
		if _, err := read(gotA, releaseA); err != nil {
			t.Error(err)
		}
	})
	// A is searching. Once its index is too old to take new reads, B
	// opens the next one, which waits.
	time.Sleep(2 * index.LagShare)
	// stall starts a read whose open of the next index waits until the
	// returned channel is closed, once that open has begun.
	stall := func(in chan *index.Index, release chan struct{}) chan struct{} {
		g := make(chan struct{})
		mu.Lock()
		gate = g
		mu.Unlock()
		wg.Go(func() {
			if _, err := read(in, release); err != nil {
				t.Error(err)
			}
		})
		<-opening
		mu.Lock()
		gate = nil
		mu.Unlock()
		return g
	}
	gotB := make(chan *index.Index, 1)
	releaseB := make(chan struct{})
	g := stall(gotB, releaseB)
	// A is done; its index stays open while B's opens. C comes
	// meanwhile: it searches A's, at once.
	a := <-gotA
	close(releaseA)
	wgA.Wait()
	done := make(chan *index.Index, 1)
	go func() {
		ix, err := read(nil, nil)
		if err != nil {
			t.Error(err)
		}
		done <- ix
	}()
	var c *index.Index
	select {
	case c = <-done:
	case <-time.After(5 * time.Second):
		close(g)
		close(releaseB)
		wg.Wait()
		t.Fatal("a read waited for the next index to open")
	}
	close(g)
	b := <-gotB
	if c != a {
		t.Errorf("the read during the open searched %p, want the index before it %p", c, a)
	}
	if b == a {
		t.Errorf("the read that opened the next index searched the old one")
	}
	// Now the new index takes the reads.
	if d, err := read(nil, nil); err != nil || d != b {
		t.Errorf("the read after the open searched %p (%v), want the new index %p", d, err, b)
	}
	close(releaseB)
	wg.Wait()

	// A write of this Memory: no read after it searches an index from
	// before it, not even while the next one opens.
	releaseF, gotF := make(chan struct{}), make(chan *index.Index, 1)
	wg.Go(func() {
		if _, err := read(gotF, releaseF); err != nil {
			t.Error(err)
		}
	})
	f := <-gotF
	time.Sleep(2 * index.LagShare)
	g = stall(nil, nil)
	_, err := m.Remember(t.Context(), []*mem.Entry{{Kind: "fact", Body: "The team's mascot is a cardamom."}}, RememberOptions{})
	lagging := m.ix.Lagging() // the write brought the index along itself
	if err != nil || !lagging {
		// A read now would wait for the stalled one: end it first.
		close(g)
		close(releaseF)
		wg.Wait()
		t.Fatalf("after the write (%v), reads no longer lag: the case is not tested", err)
	}
	before := opens.Load()
	e, rerr := read(nil, nil) // the index the write brought along, at once
	after := opens.Load()
	close(g)
	close(releaseF)
	wg.Wait()
	if rerr != nil {
		t.Fatal(rerr)
	}
	if e == f {
		t.Error("a read after a write searched the index from before it")
	}
	if after != before {
		t.Errorf("the read after the write opened the index again (%d opens) instead of searching the one the write opened", after-before)
	}
}

// TestTurnWriterRoom: Room holds its caller while more turns wait than
// the writer commits in Backlog, so that a burst of turns makes its
// callers slower instead of piling up turns a kill would lose.
func TestTurnWriterRoom(t *testing.T) {
	m := open(t, false)
	// Commits are held until the test lets them go: the pace is zero.
	release := make(chan struct{})
	var once sync.Once
	w := m.NewTurnWriter(TurnWriterOptions{Delay: time.Millisecond, MaxBatch: 10, Source: "test",
		Committed: func([]*mem.Entry) { <-release }})
	defer func() { once.Do(func() { close(release) }); w.Close(t.Context()) }()
	for i := range 200 {
		if err := w.Add(&mem.Entry{Scope: "burst", Role: "user", Body: fmt.Sprintf("turn %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	roomed := make(chan [2]int, 1)
	go func() {
		w.Room(t.Context())
		w.mu.Lock()
		roomed <- [2]int{int(w.added - w.settled), w.roomLocked()}
		w.mu.Unlock()
	}()
	select {
	case n := <-roomed:
		t.Fatalf("Room let its caller go with %d turns pending and none committed", n[0])
	case <-time.After(200 * time.Millisecond):
	}
	once.Do(func() { close(release) })
	// The room is what the measured pace commits in Backlog.
	if n := <-roomed; n[0] > n[1] || n[0] == 200 {
		t.Errorf("Room let its caller go with %d turns pending, room for %d", n[0], n[1])
	}
}

// A turn keeps its text as said, indentation included; the artifacts
// given with it are committed with it, and nothing outside the store's
// artifacts is taken.
func TestAppendTurnsTextAndArtifacts(t *testing.T) {
	m := open(t, false)
	e := &mem.Entry{Scope: "chat", Role: "tool", Body: "\n    1\tpackage main\n    2\t\n"}
	art := "artifacts/chat/out.txt"
	if err := os.MkdirAll(filepath.Join(m.Root(), "artifacts", "chat"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.Root(), filepath.FromSlash(art)), []byte("the whole output\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	head, err := m.AppendTurns(t.Context(), []*mem.Entry{e}, TurnOptions{Source: "test", Artifacts: []string{art},
		Subject: func(es []*mem.Entry) string { return "tool turn " + es[0].ID }})
	if err != nil {
		t.Fatal(err)
	}
	back, err := m.st.Read(e.Path)
	if err != nil || back.Body != "    1\tpackage main\n    2\t" {
		t.Fatalf("read back %q, %v", back.Body, err)
	}
	files := gitOut(t, m.Root(), "show", "--format=%s", "--name-only", head)
	if !strings.Contains(files, "tool turn "+e.ID) || !strings.Contains(files, art) || !strings.Contains(files, e.Path) {
		t.Errorf("commit:\n%s", files)
	}
	for _, bad := range []string{"../outside", "entries/../../x", "artifacts/../config.yaml"} {
		e := &mem.Entry{Scope: "chat", Role: "tool", Body: "x"}
		if _, err := m.AppendTurns(t.Context(), []*mem.Entry{e}, TurnOptions{Artifacts: []string{bad}}); err == nil {
			t.Errorf("artifact %q was taken", bad)
		}
	}
	// A link planted under artifacts/, to a file or through a directory,
	// does not bring a file from outside the store into its history.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "private.txt"), []byte("not the store's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "private.txt"), filepath.Join(m.Root(), "artifacts", "chat", "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(m.Root(), "artifacts", "linked")); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"artifacts/chat/link.txt", "artifacts/linked/private.txt"} {
		e := &mem.Entry{Scope: "chat", Role: "tool", Body: "x"}
		if _, err := m.AppendTurns(t.Context(), []*mem.Entry{e}, TurnOptions{Artifacts: []string{bad}}); err == nil {
			t.Errorf("artifact %q, a symbolic link out of the store, was taken", bad)
		}
	}
}
