package mem

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bulkStore is a store with its lock taken, and a git runner for it.
func bulkStore(t *testing.T) (*Store, func(args ...string) string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	st, err := Open(t.Context(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := st.Lock(t.Context(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Unlock() })
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", st.Root}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	return st, git
}

// bulkPart is n entries, every third a fact, the texts numbered from k.
func bulkPart(k, n int) []*Entry {
	out := make([]*Entry, n)
	for i := range out {
		kind := KindNote
		if (k+i)%3 == 0 {
			kind = KindFact
		}
		out[i] = &Entry{Kind: kind, Body: fmt.Sprintf("bulk entry %d about herons", k+i), Source: "test"}
	}
	return out
}

// journalGone fails t if a change's journal or list is left.
func journalGone(t *testing.T, st *Store) {
	t.Helper()
	for _, p := range []string{st.journalPath(), st.bulkListPath()} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is left", filepath.Base(p))
		}
	}
}

// TestBulk: a change in parts makes one commit of every part's files,
// with the subject a Tx would give it, and leaves the work tree clean.
func TestBulk(t *testing.T) {
	st, git := bulkStore(t)
	b, err := st.BeginBulk()
	if errors.Is(err, ErrNoBulk) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var ops []Op
	var paths []string
	for p := range 3 {
		part := bulkPart(40*p, 40)
		if err := b.Add(part); err != nil {
			t.Fatal(err)
		}
		for _, e := range part {
			if e.ID == "" || e.Path == "" {
				t.Fatalf("entry %q has no id or path", e.Body)
			}
			ops = append(ops, Op{Op: "add", ID: e.ID, Kind: e.Kind, Text: e.Body})
			paths = append(paths, e.Path)
		}
	}
	if b.Added() != 120 {
		t.Errorf("Added = %d, want 120", b.Added())
	}
	subject := b.Subject("remember")
	if want := Subject("remember", ops); subject != want {
		t.Errorf("Subject = %q, want %q", subject, want)
	}
	hash, err := b.Commit(subject, Trailer{Key: "Mira-Source", Value: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(git("rev-parse", "HEAD")); got != hash {
		t.Errorf("HEAD = %s, Commit said %s", got, hash)
	}
	if got := strings.Count(git("ls-tree", "-r", "--name-only", "HEAD", "entries"), "\n"); got != 120 {
		t.Errorf("the commit has %d entries, want 120", got)
	}
	if out := git("status", "--porcelain"); out != "" {
		t.Errorf("git status after the commit:\n%s", out)
	}
	msg := git("log", "-1", "--format=%B")
	if !strings.HasPrefix(msg, subject+"\n") || !strings.Contains(msg, "Mira-Source: test") {
		t.Errorf("commit message:\n%s", msg)
	}
	e, err := st.Read(paths[41])
	if err != nil {
		t.Fatal(err)
	}
	if e.Body != "bulk entry 41 about herons" {
		t.Errorf("%s holds %q", paths[41], e.Body)
	}
	journalGone(t, st)
	if err := b.Add(bulkPart(500, 1)); err == nil {
		t.Error("Add after Commit succeeded")
	}
}

// TestBulkRollback: a part that fails (an entry whose path is taken)
// removes every file the change made, the earlier parts' too, and no
// other; nothing is committed.
func TestBulkRollback(t *testing.T) {
	st, git := bulkStore(t)
	head := git("rev-parse", "HEAD")
	b, err := st.BeginBulk()
	if errors.Is(err, ErrNoBulk) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	first := bulkPart(0, 30)
	if err := b.Add(first); err != nil {
		t.Fatal(err)
	}
	// The third entry of the second part lands on a file already there.
	second := bulkPart(30, 30)
	taken := second[2]
	taken.ID = st.NewID(st.Now())
	taken.CreatedAt = st.Now().UTC().Truncate(time.Second)
	taken.Scope = DefaultScope
	theirs := filepath.Join(st.Root, filepath.FromSlash(RelPath(taken)))
	if err := os.MkdirAll(filepath.Dir(theirs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(theirs, []byte("someone else's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = b.Add(second)
	if err == nil || !strings.Contains(err.Error(), taken.ID) {
		t.Fatalf("Add of a part with a taken path = %v, want an error naming %s", err, taken.ID)
	}
	for _, e := range append(first, second[:2]...) {
		if _, err := os.Stat(filepath.Join(st.Root, filepath.FromSlash(e.Path))); err == nil {
			t.Errorf("%s is left after the roll back", e.Path)
		}
	}
	if data, err := os.ReadFile(theirs); err != nil || string(data) != "someone else's\n" {
		t.Errorf("the file that was there: %q, %v", data, err)
	}
	if got := git("rev-parse", "HEAD"); got != head {
		t.Error("a failed change committed")
	}
	journalGone(t, st)
	if _, err := b.Commit("remember: nothing"); err == nil {
		t.Error("Commit after a failed Add succeeded")
	}
}

// TestBulkRecover: a change in parts killed before its commit is undone by
// the next writer: every path of its list goes, a line cut short by the
// kill (its file never made) and a line that is no path a change may
// write are passed over.
func TestBulkRecover(t *testing.T) {
	st, git := bulkStore(t)
	head := git("rev-parse", "HEAD")
	b, err := st.BeginBulk()
	if errors.Is(err, ErrNoBulk) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	part := bulkPart(0, 25)
	if err := b.Add(part); err != nil {
		t.Fatal(err)
	}
	// Killed here, in the middle of a line: its file is not made yet.
	cut := "entries/global/notes/20260101T000000Z__01JCUT0000000000000000000.md"
	other := filepath.Join(st.Root, filepath.FromSlash(cut))
	if err := os.WriteFile(other, []byte("not the change's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(st.bulkListPath(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, ".git/config\n../outside\n%s", cut)
	f.Close()

	again, err := Open(t.Context(), st.Root, "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := again.Recover(); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	for _, e := range part {
		if _, err := os.Stat(filepath.Join(st.Root, filepath.FromSlash(e.Path))); err == nil {
			t.Errorf("%s is left after Recover", e.Path)
		}
	}
	for _, p := range []string{other, filepath.Join(st.Root, ".git", "config")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("Recover removed %s: %v", p, err)
		}
	}
	if got := git("rev-parse", "HEAD"); got != head {
		t.Error("the head moved")
	}
	journalGone(t, st)

	// A list without its journal (killed before the journal was
	// written) goes too, and nothing else.
	if err := os.WriteFile(st.bulkListPath(), []byte(cut+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ok, err := again.Recover(); ok || err != nil {
		t.Fatalf("Recover of a lone list = %v, %v", ok, err)
	}
	journalGone(t, st)
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a lone list's path was removed: %v", err)
	}
}
