package mem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/internal/gitrepo"
)

func TestAddFileCommitsAnArtifact(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	st, err := Open(context.Background(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The tool wrote the artifact already; the turn's commit includes it.
	rel := "artifacts/chat/01ABC.txt"
	abs := filepath.Join(st.Root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte("a long tool output\n")
	if err := os.WriteFile(abs, data, 0o644); err != nil {
		t.Fatal(err)
	}
	lock, err := st.Lock(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	tx := st.Begin(false)
	if err := tx.Add(&Entry{Kind: KindTurn, Role: "tool", Scope: "chat", Body: "see artifact://01ABC"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.AddFile(rel, data); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit("agent: tool turn"); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", st.Root}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got := git("show", "HEAD:"+rel); got != string(data) {
		t.Errorf("committed artifact = %q, want %q", got, data)
	}
	if out := git("status", "--porcelain"); out != "" {
		t.Errorf("git status after the commit:\n%s", out)
	}
	for _, bad := range []string{"entries/chat/notes/x.md", "artifacts/x.txt", "artifacts/chat/../../x", "artifacts/Bad Scope/x.txt", "/etc/passwd"} {
		if err := st.Begin(false).AddFile(bad, data); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("AddFile(%q) = %v, want an error naming it", bad, err)
		}
	}
}

// TestRecoverRemovesTemps: the temporary files of a writer killed in the
// middle of a change, beside the journal's paths and the journal itself,
// are removed by the next writer; other files are not.
func TestRecoverRemovesTemps(t *testing.T) {
	st, err := Open(t.Context(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	head, err := st.Head()
	if err != nil {
		t.Fatal(err)
	}
	rel := "entries/global/notes/20260101T000000Z__01JTEMP000000000000000000.md"
	dir := filepath.Join(st.Root, "entries", "global", "notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(journal{Head: head, Files: []journalEntry{{Path: rel, Absent: true}}})
	if err := os.WriteFile(st.journalPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	temps := []string{
		filepath.Join(dir, ".20260101T000000Z__01JTEMP000000000000000000.md.123456.tmp"),
		filepath.Join(st.Root, ".git", ".mira-journal.987.tmp"),
	}
	keep := []string{
		filepath.Join(dir, ".other.md.1.tmp"), // not this change's
		filepath.Join(dir, "20260101T000000Z__01JKEEP000000000000000000.md"),
	}
	for _, p := range append(temps, keep...) {
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := st.Recover(); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	for _, p := range temps {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

func newTestStore(t *testing.T) *Store {
	t.Helper()
	st, err := Open(t.Context(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRecoverHeadNotMoved: a writer killed after writing its files but
// before its commit: the next writer puts the files back as they were.
func TestRecoverHeadNotMoved(t *testing.T) {
	st := newTestStore(t)
	tx := st.Begin(false)
	old := &Entry{Kind: KindNote, Body: "before"}
	if err := tx.Add(old); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit("seed"); err != nil {
		t.Fatal(err)
	}
	head, _ := st.Head()
	newRel := "entries/global/notes/20260101T000000Z__01JNEW000000000000000000.md"
	data, _ := json.Marshal(journal{Head: head, Files: []journalEntry{
		{Path: newRel, Absent: true},
		{Path: old.Path, Before: mustRead(t, st, old.Path)},
	}})
	os.WriteFile(st.journalPath(), data, 0o644)
	os.WriteFile(filepath.Join(st.Root, newRel), []byte("---\nkind: note\n---\nhalf done\n"), 0o644)
	os.WriteFile(filepath.Join(st.Root, old.Path), []byte("---\nkind: note\n---\nchanged\n"), 0o644)
	if ok, err := st.Recover(); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(st.Root, newRel)); err == nil {
		t.Errorf("the uncommitted new file is still there")
	}
	if e, err := st.Read(old.Path); err != nil || e.Body != "before" {
		t.Errorf("the changed file was not put back: %v, %v", e, err)
	}
	if _, err := os.Stat(st.journalPath()); err == nil {
		t.Errorf("the journal is still there")
	}
}

// TestRecoverHeadMoved: a writer killed after its commit: its change
// stands.
func TestRecoverHeadMoved(t *testing.T) {
	st := newTestStore(t)
	before, _ := st.Head()
	tx := st.Begin(false)
	e := &Entry{Kind: KindNote, Body: "committed"}
	if err := tx.Add(e); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit("the change"); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(journal{Head: before, Files: []journalEntry{{Path: e.Path, Absent: true}}})
	os.WriteFile(st.journalPath(), data, 0o644)
	if ok, err := st.Recover(); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	if got, err := st.Read(e.Path); err != nil || got.Body != "committed" {
		t.Errorf("a committed change was undone: %v, %v", got, err)
	}
}

// TestCommitFailureRollsBack: when the git step fails, the files are put
// back and the error is reported, with no hash.
func TestCommitFailureRollsBack(t *testing.T) {
	st := newTestStore(t)
	objects := filepath.Join(st.Root, ".git", "objects")
	if err := os.Rename(objects, objects+".away"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(objects, []byte("not a directory"), 0o644)
	tx := st.Begin(false)
	e := &Entry{Kind: KindNote, Body: "lost?"}
	if err := tx.Add(e); err != nil {
		t.Fatal(err)
	}
	hash, err := tx.Commit("doomed")
	if err == nil || hash != "" {
		t.Fatalf("Commit with a broken repository = %q, %v; want an error", hash, err)
	}
	if _, serr := os.Stat(filepath.Join(st.Root, e.Path)); serr == nil {
		t.Errorf("the file of a failed commit is still there")
	}
	if _, serr := os.Stat(st.journalPath()); serr == nil {
		t.Errorf("the journal of a rolled-back commit is still there")
	}
}

// TestPlanRefusesStrayPaths: a change never writes outside entries/ and
// artifacts/, nor through "..".
func TestPlanRefusesStrayPaths(t *testing.T) {
	st := newTestStore(t)
	for _, rel := range []string{"entries/../.git/config", "../outside.md", "/etc/passwd", ".git/HEAD", "entries/global/./x.md", "README.md"} {
		tx := st.Begin(false)
		e := &Entry{ID: "01JX", Kind: KindNote, Scope: DefaultScope, Body: "x", Path: rel}
		if err := tx.Rewrite(e); err == nil {
			t.Errorf("Rewrite(%q) was planned", rel)
		}
	}
}

func mustRead(t *testing.T, st *Store, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(st.Root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMaybeRepackMergesPacks: large commits write a pack each, and once
// there are gitrepo.MaxPacks of them MaybeRepack merges them into one,
// with few loose objects about; below that, and with few loose objects,
// it leaves the store alone.
func TestMaybeRepackMergesPacks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	st, err := Open(context.Background(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := st.Lock(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	packs := func() int {
		n, err := st.Repo().PackCount()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range gitrepo.MaxPacks {
		tx := st.Begin(false)
		for j := range gitrepo.PackMin {
			if err := tx.Add(&Entry{Kind: KindNote, Scope: DefaultScope, Body: fmt.Sprintf("note %d of batch %d", j, i)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tx.Commit("import"); err != nil {
			t.Fatal(err)
		}
		if got := packs(); got != i+1 {
			t.Fatalf("after %d large commits: %d packs", i+1, got)
		}
		if i+1 < gitrepo.MaxPacks {
			if did, err := st.MaybeRepack(); did || err != nil {
				t.Fatalf("MaybeRepack with %d packs = %v, %v; want nothing done", i+1, did, err)
			}
		}
	}
	if did, err := st.MaybeRepack(); !did || err != nil {
		t.Fatalf("MaybeRepack with %d packs = %v, %v; want a repack", gitrepo.MaxPacks, did, err)
	}
	if got := packs(); got != 1 {
		t.Errorf("%d packs after MaybeRepack, want 1", got)
	}
	out, err := exec.Command("git", "-C", st.Root, "fsck", "--full", "--strict", "--no-dangling").CombinedOutput()
	if err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	out, _ = exec.Command("git", "-C", st.Root, "ls-files", "entries").Output()
	if got, want := strings.Count(string(out), "\n"), gitrepo.MaxPacks*gitrepo.PackMin; got != want {
		t.Errorf("%d files tracked, want %d", got, want)
	}
}

// TestAddOwnedWritesWhatAddWould: entries handed over with AddOwned (their
// bytes made as the files are written) land in the same files, byte for
// byte, as with Add, in one commit that git finds clean and sound: enough
// of them for the commit's objects to go into a pack.
func TestAddOwnedWritesWhatAddWould(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	st := newTestStore(t)
	n := gitrepo.PackMin + 10
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tx := st.Begin(false)
	var want [][]byte
	var owned []*Entry
	for i := range n {
		e := &Entry{Kind: KindNote, Body: fmt.Sprintf("memory number %d", i), Tags: []string{"t"}, CreatedAt: at}
		c := *e
		c.ID = st.NewID(at)
		e.ID = c.ID
		c.Scope = DefaultScope
		c.Path = RelPath(&c)
		data, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, data)
		if err := tx.AddOwned(e); err != nil {
			t.Fatal(err)
		}
		owned = append(owned, e)
	}
	if _, err := tx.Commit("import"); err != nil {
		t.Fatal(err)
	}
	for i, e := range owned {
		if got := mustRead(t, st, e.Path); string(got) != string(want[i]) {
			t.Fatalf("%s:\n%s\nwant\n%s", e.Path, got, want[i])
		}
	}
	for _, args := range [][]string{{"fsck", "--strict"}, {"status", "--porcelain"}} {
		out, err := exec.Command("git", append([]string{"-C", st.Root}, args...)...).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("git %s: %v\n%s", args[0], err, out)
		}
	}
	packs, _ := filepath.Glob(filepath.Join(st.Root, ".git", "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Errorf("packs %v, want one", packs)
	}
}

// TestFreshPathTakenBeforeCommit: a file that appears at a new entry's path
// between planning and committing (a hand, another tool) is refused, kept
// as it was, and the rest of the change is undone; in a batch, whose new
// files are created in place, and in a small change.
func TestFreshPathTakenBeforeCommit(t *testing.T) {
	// A batch makes its files out of order: the path taken in its middle
	// leaves files both before and after it to remove.
	for _, c := range []struct{ n, at int }{{batchSync + 4, batchSync + 3}, {batchSync + 4, batchSync / 2}, {2, 1}} {
		n := c.n
		t.Run(fmt.Sprint(n, "/", c.at), func(t *testing.T) {
			st := newTestStore(t)
			at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			tx := st.Begin(false)
			var added []*Entry
			for i := range n {
				e := &Entry{Kind: KindNote, Body: fmt.Sprintf("memory number %d", i), CreatedAt: at}
				add := tx.Add
				if i%2 == 0 {
					add = tx.AddOwned
				}
				if err := add(e); err != nil {
					t.Fatal(err)
				}
				added = append(added, e)
			}
			taken := added[c.at]
			name := filepath.Join(st.Root, filepath.FromSlash(taken.Path))
			if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, []byte("someone else's\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := tx.Commit("import")
			if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), taken.ID) {
				t.Fatalf("Commit = %v, want the taken path refused", err)
			}
			if got, err := os.ReadFile(name); err != nil || string(got) != "someone else's\n" {
				t.Errorf("the file at the taken path: %q, %v; want it kept", got, err)
			}
			for _, e := range added {
				if e == taken {
					continue
				}
				if _, err := os.Stat(filepath.Join(st.Root, filepath.FromSlash(e.Path))); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s: %v after the refused change, want it gone", e.Path, err)
				}
			}
			if _, err := os.Stat(st.journalPath()); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("journal left behind: %v", err)
			}
		})
	}
}

// TestJournalMarshal: the journal written by hand is the bytes
// json.Marshal writes, whatever its paths hold.
func TestJournalMarshal(t *testing.T) {
	for _, j := range []journal{
		{Head: "abc"},
		{Head: "", Files: []journalEntry{}},
		{Head: "0123", Files: []journalEntry{
			{Path: "entries/global/notes/01KEJR535R16BDZ0CREHQ123YD.md", Absent: true},
			{Path: "entries/global/notes/x.md", Before: []byte("---\nid: x\n---\n")},
			{Path: "entries/global/notes/empty.md", Before: []byte{}},
			{Path: `a "quoted" \ path.md`, Absent: true},
			{Path: "a<b>&c.md", Absent: true},
			{Path: "été.md", Absent: true},
			{Path: "tab\there.md", Absent: true},
			{Path: "plain.md"},
		}},
	} {
		got, err := j.marshal()
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("marshal:\n%s\njson.Marshal:\n%s", got, want)
		}
	}
}
