package mira

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/secret/secrettest"
	"github.com/miramem/mira/mem"
)

// newRemote makes a bare repository to sync through.
func newRemote(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "--initial-branch=main", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return dir
}

func openHome(t *testing.T, home string, cfg *Config, warm bool) *Memory {
	t.Helper()
	if cfg == nil {
		cfg = &Config{}
	}
	m, err := Open(t.Context(), Options{Home: home, Config: cfg, Index: index.ReaderOptions{Warm: warm}, Command: "mira-test",
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// firstStore makes a store whose remote origin is remote and syncs it.
func firstStore(t *testing.T, remote string, cfg *Config) *Memory {
	t.Helper()
	m := openHome(t, filepath.Join(t.TempDir(), "a"), cfg, false)
	gitOut(t, m.Root(), "remote", "add", "origin", remote)
	mustSync(t, m)
	return m
}

// cloneStore starts a store from remote.
func cloneStore(t *testing.T, remote string, cfg *Config) *Memory {
	t.Helper()
	home := filepath.Join(t.TempDir(), "clone")
	if err := Clone(t.Context(), remote, home, CloneOptions{}); err != nil {
		t.Fatal(err)
	}
	return openHome(t, home, cfg, false)
}

func mustSync(t *testing.T, m *Memory) *SyncResult {
	t.Helper()
	res, err := m.Sync(t.Context(), SyncOptions{})
	if err != nil {
		t.Fatalf("sync %s: %v", m.Root(), err)
	}
	return res
}

func remember(t *testing.T, m *Memory, text string) *mem.Entry {
	t.Helper()
	res, err := m.Remember(t.Context(), []*mem.Entry{{Kind: mem.KindFact, Body: text}}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Entries()[0]
}

// files returns every entry file of a store, path to content.
func files(t *testing.T, m *Memory) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := m.Root()
	err := filepath.WalkDir(filepath.Join(root, "entries"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkHealthy: no conflict markers, git status clean, fsck clean, and the
// store takes a new memory.
func checkHealthy(t *testing.T, m *Memory) {
	t.Helper()
	for p, c := range files(t, m) {
		if strings.Contains(c, "<<<<<<<") || strings.Contains(c, ">>>>>>>") {
			t.Errorf("%s has conflict markers:\n%s", p, c)
		}
	}
	if out := gitOut(t, m.Root(), "status", "--porcelain", "--untracked-files=all"); out != "" {
		t.Errorf("git status in %s not clean:\n%s", m.Root(), out)
	}
	if out := gitOut(t, m.Root(), "fsck", "--no-dangling"); strings.TrimSpace(out) != "" {
		t.Errorf("git fsck in %s: %s", m.Root(), out)
	}
	remember(t, m, fmt.Sprintf("written after the sync in %s", filepath.Base(m.Root())))
}

func liveIDs(t *testing.T, m *Memory) []string {
	t.Helper()
	var ids []string
	if err := m.st.Walk(func(e *mem.Entry) error { ids = append(ids, e.ID); return nil }, nil); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

// TestSyncThreeWriters: three stores add 50 memories each while syncing
// in a loop; afterwards all hold the same 150 and find each other's.
func TestSyncThreeWriters(t *testing.T) {
	remote := newRemote(t)
	stores := []*Memory{firstStore(t, remote, nil)}
	stores = append(stores, cloneStore(t, remote, nil), cloneStore(t, remote, nil))
	animals := []string{"otter", "heron", "badger"}
	var wg sync.WaitGroup
	errs := make(chan error, 3*60)
	for i, m := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 50 {
				body := fmt.Sprintf("The %s team note number %d mentions topic%dx%d", animals[i], n, i, n)
				if _, err := m.Remember(t.Context(), []*mem.Entry{{Kind: mem.KindFact, Body: body}}, RememberOptions{}); err != nil {
					errs <- err
					return
				}
				if n%5 == 4 {
					if _, err := m.Sync(t.Context(), SyncOptions{Attempts: 10}); err != nil && !errors.Is(err, ErrRemoteBusy) {
						errs <- fmt.Errorf("store %d: %w", i, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for range 2 {
		for _, m := range stores {
			mustSync(t, m)
		}
	}
	want := liveIDs(t, stores[0])
	if len(want) != 150 {
		t.Fatalf("store a holds %d memories, want 150", len(want))
	}
	for i, m := range stores[1:] {
		if got := liveIDs(t, m); !slices.Equal(got, want) {
			t.Errorf("store %d holds %d memories, not the same as store a's %d", i+1, len(got), len(want))
		}
	}
	for i, m := range stores {
		j := (i + 1) % 3
		recs, err := m.Recall(t.Context(), Query{Text: fmt.Sprintf("topic%dx%d", j, 33), K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 || !strings.Contains(recs[0].Text, fmt.Sprintf("The %s team note number 33", animals[j])) {
			t.Errorf("store %d: recall of store %d's memory 33 = %v", i, j, recs)
		}
	}
	for _, m := range stores {
		checkHealthy(t, m)
	}
	if out, err := exec.Command("git", "-C", remote, "fsck", "--no-dangling").CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("git fsck of the remote: %v %s", err, out)
	}
}

// pair gives two stores sharing one memory.
func pair(t *testing.T, text string, pin bool) (a, b *Memory, id string) {
	t.Helper()
	remote := newRemote(t)
	a = firstStore(t, remote, nil)
	e := remember(t, a, text)
	if pin {
		if _, err := a.Pin(t.Context(), e.ID, mem.PinSticky, zeroTime); err != nil {
			t.Fatal(err)
		}
	}
	mustSync(t, a)
	b = cloneStore(t, remote, nil)
	return a, b, e.ID
}

// handEdit replaces the text of a memory in its file, as an editor would,
// and commits it with git when asked.
func handEdit(t *testing.T, m *Memory, id, from, to string, commit bool) {
	t.Helper()
	e, err := m.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(m.Root(), filepath.FromSlash(e.Path))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), from) {
		t.Fatalf("%s does not hold %q", e.Path, from)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), from, to, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if commit {
		gitOut(t, m.Root(), "-c", "user.name=Ed", "-c", "user.email=ed@example.com", "commit", "-q", "-am", "edited by hand")
	}
}

// settle syncs a, b, a: after it both hold the same entries.
func settle(t *testing.T, a, b *Memory) []mem.Decision {
	t.Helper()
	var ds []mem.Decision
	for _, m := range []*Memory{a, b, a} {
		ds = append(ds, mustSync(t, m).Decisions...)
	}
	fa, fb := files(t, a), files(t, b)
	if len(fa) != len(fb) {
		t.Errorf("after sync a has %d entry files, b %d", len(fa), len(fb))
	}
	for p, c := range fa {
		if fb[p] != c {
			t.Errorf("%s differs after sync:\na: %q\nb: %q", p, c, fb[p])
		}
	}
	return ds
}

// entryState returns the live entry with id and the tombstones that name
// it in replaced_by.
func entryState(t *testing.T, m *Memory, id string) (*mem.Entry, []*mem.Entry) {
	t.Helper()
	var live *mem.Entry
	var copies []*mem.Entry
	for p, c := range files(t, m) {
		e, err := mem.Parse(p, []byte(c))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case e.ID == id && !e.Deleted():
			live = e
		case e.ID == id:
			t.Errorf("tombstone of %s left beside it: %s", id, p)
		case e.ReplacedBy == id:
			copies = append(copies, e)
		}
	}
	if live == nil {
		t.Fatalf("no live entry %s", id)
	}
	return live, copies
}

func hasRule(ds []mem.Decision, rule string) bool {
	return slices.ContainsFunc(ds, func(d mem.Decision) bool { return d.Rule == rule })
}

func TestSyncConflicts(t *testing.T) {
	const orig = "Deploys happen on Tuesday"
	t.Run("edit-edit", func(t *testing.T) {
		a, b, id := pair(t, orig, false)
		handEdit(t, a, id, "Tuesday", "Wednesday after lunch", false) // not committed
		handEdit(t, b, id, "Tuesday", "Thursday morning", true)       // committed with git
		ds := settle(t, a, b)
		live, copies := entryState(t, a, id)
		if len(copies) != 1 {
			t.Fatalf("%d copies replaced by %s, want 1", len(copies), id)
		}
		got := []string{live.Body, copies[0].Body}
		slices.Sort(got)
		if want := []string{"Deploys happen on Thursday morning", "Deploys happen on Wednesday after lunch"}; !slices.Equal(got, want) {
			t.Errorf("texts = %q, want %q", got, want)
		}
		if !copies[0].Deleted() || !hasRule(ds, "edit-edit") {
			t.Errorf("copy deleted=%v, decisions %v", copies[0].Deleted(), ds)
		}
		checkHealthy(t, a)
		checkHealthy(t, b)
	})
	t.Run("edit-forget", func(t *testing.T) {
		a, b, id := pair(t, orig, false)
		if _, err := a.Forget(t.Context(), []string{id}, ForgetOptions{Reason: "obsolete"}); err != nil {
			t.Fatal(err)
		}
		handEdit(t, b, id, "Tuesday", "Friday", false)
		ds := settle(t, a, b)
		live, _ := entryState(t, a, id)
		if live.Body != "Deploys happen on Friday" || !hasRule(ds, "edit-forget") {
			t.Errorf("live text %q, decisions %v", live.Body, ds)
		}
		checkHealthy(t, a)
		checkHealthy(t, b)
	})
	t.Run("hand-edit-vs-mira-edit", func(t *testing.T) {
		a, b, id := pair(t, orig, false)
		if _, err := a.Pin(t.Context(), id, mem.PinSticky, zeroTime); err != nil {
			t.Fatal(err)
		}
		handEdit(t, b, id, "Tuesday", "Monday", true)
		settle(t, a, b)
		live, copies := entryState(t, b, id)
		if live.Body != "Deploys happen on Monday" || live.Pin != mem.PinSticky || len(copies) != 0 {
			t.Errorf("got text %q pin %q and %d copies; want the edit and the pin in one entry", live.Body, live.Pin, len(copies))
		}
		checkHealthy(t, a)
		checkHealthy(t, b)
	})
	t.Run("pinned", func(t *testing.T) {
		a, b, id := pair(t, orig, true)
		handEdit(t, a, id, "Tuesday", "Saturday", false)
		handEdit(t, b, id, "Tuesday", "Sunday", false)
		settle(t, a, b)
		live, copies := entryState(t, a, id)
		if live.Pin != mem.PinSticky || len(copies) != 1 {
			t.Fatalf("pin %q, %d copies", live.Pin, len(copies))
		}
		got := []string{live.Body, copies[0].Body}
		slices.Sort(got)
		if want := []string{"Deploys happen on Saturday", "Deploys happen on Sunday"}; !slices.Equal(got, want) {
			t.Errorf("texts = %q, want %q", got, want)
		}
		checkHealthy(t, a)
		checkHealthy(t, b)
	})
	t.Run("stuck-git-pull", func(t *testing.T) {
		// The user pulled by hand and git stopped with a conflict: every
		// write fails until the merge is resolved. A sync undoes git's
		// merge and merges by the rules instead.
		a, b, id := pair(t, orig, false)
		handEdit(t, a, id, "Tuesday", "Wednesday", true)
		mustSync(t, a)
		handEdit(t, b, id, "Tuesday", "Thursday", true)
		cmd := exec.Command("git", "-C", b.Root(), "-c", "user.name=Ed", "-c", "user.email=ed@example.com", "pull", "-q", "--no-rebase", "origin", "main")
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "CONFLICT") {
			t.Fatalf("git pull = %v, want a conflict:\n%s", err, out)
		}
		if _, err := b.Remember(t.Context(), []*mem.Entry{{Kind: "note", Body: "refused while git is stuck"}}, RememberOptions{}); err == nil {
			t.Fatal("a remember during git's unfinished merge succeeded")
		}
		res := mustSync(t, b)
		if res.AbortedMerge == "" || !hasRule(res.Decisions, "edit-edit") {
			t.Errorf("aborted merge %q, decisions %v", res.AbortedMerge, res.Decisions)
		}
		settle(t, a, b)
		live, copies := entryState(t, b, id)
		if len(copies) != 1 {
			t.Fatalf("%d copies replaced by %s, want 1", len(copies), id)
		}
		got := []string{live.Body, copies[0].Body}
		slices.Sort(got)
		if want := []string{"Deploys happen on Thursday", "Deploys happen on Wednesday"}; !slices.Equal(got, want) {
			t.Errorf("texts = %q, want %q", got, want)
		}
		checkHealthy(t, a)
		checkHealthy(t, b)
	})
}

// TestSyncScopes: a scope that is not shared, and conversation turns,
// never reach the remote, not even as objects.
func TestSyncScopes(t *testing.T) {
	cfg := &Config{}
	cfg.Sync.Scopes = []string{"global", "team-*"}
	remote := newRemote(t)
	a := firstStore(t, remote, cfg)
	if _, err := a.Remember(t.Context(), []*mem.Entry{
		{Kind: mem.KindNote, Scope: "chat", Body: "private chat musing about marmalade"},
		{Kind: mem.KindTurn, Role: "user", Scope: "global", Body: "a turn spoken about quinces"},
		{Kind: mem.KindDecision, Scope: "team-web", Body: "We chose htmx for the admin pages"},
	}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	mustSync(t, a)
	objects, err := exec.Command("git", "-C", remote, "cat-file", "--batch-all-objects", "--batch").CombinedOutput()
	if err != nil {
		t.Fatalf("cat-file: %v\n%s", err, objects)
	}
	for _, w := range []string{"marmalade", "quinces", "chat"} {
		if strings.Contains(string(objects), w) {
			t.Errorf("the remote holds %q", w)
		}
	}
	if !strings.Contains(string(objects), "htmx") {
		t.Errorf("the shared decision did not reach the remote")
	}
	b := cloneStore(t, remote, cfg)
	if ids := liveIDs(t, b); len(ids) != 1 {
		t.Errorf("clone holds %d memories, want the shared one", len(ids))
	}
	// The private ones stay at home, through later syncs too.
	mustSync(t, a)
	if ids := liveIDs(t, a); len(ids) != 3 {
		t.Errorf("store holds %d memories after sync, want 3", len(ids))
	}
}

// TestSyncRefusesSecret: a memory that looks like a credential (stored
// with AllowSecret) is never pushed; the refusal names it.
func TestSyncRefusesSecret(t *testing.T) {
	remote := newRemote(t)
	a := firstStore(t, remote, nil)
	key := "AKIA" + secrettest.Fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16, 3)
	res, err := a.Remember(t.Context(), []*mem.Entry{{Kind: mem.KindFact, Body: "the deploy key is " + key}}, RememberOptions{AllowSecret: true})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Entries()[0].ID
	_, err = a.Sync(t.Context(), SyncOptions{})
	var pr *PushRefusedError
	if !errors.As(err, &pr) || !strings.Contains(err.Error(), id) {
		t.Fatalf("sync = %v, want a refusal naming %s", err, id)
	}
	objects, _ := exec.Command("git", "-C", remote, "cat-file", "--batch-all-objects", "--batch").CombinedOutput()
	if strings.Contains(string(objects), key) {
		t.Error("the secret reached the remote")
	}
	checkHealthy(t, a)
}

// TestSyncWarmIndex: a running warm Memory finds what a sync pulled.
func TestSyncWarmIndex(t *testing.T) {
	remote := newRemote(t)
	a := firstStore(t, remote, nil)
	b := cloneStore(t, remote, nil)
	warm := openHome(t, b.Root(), nil, true)
	if _, err := warm.Recall(t.Context(), Query{Text: "anything"}); err != nil {
		t.Fatal(err)
	}
	remember(t, a, "The zebra migration finishes in March")
	mustSync(t, a)
	mustSync(t, b)
	recs, err := warm.Recall(t.Context(), Query{Text: "zebra migration", K: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || !strings.Contains(recs[0].Text, "zebra") {
		t.Errorf("warm recall after sync = %v", recs)
	}
}

// TestSyncNothingToDo: a second sync with no change is quiet and makes
// no commit.
func TestSyncNothingToDo(t *testing.T) {
	remote := newRemote(t)
	a := firstStore(t, remote, nil)
	head, _ := a.st.Head()
	res := mustSync(t, a)
	if h, _ := a.st.Head(); !res.UpToDate() || h != head {
		t.Errorf("sync with nothing to do: %+v, head moved %v", res, h != head)
	}
}

// TestSyncRemovedOnRemote: a memory a teammate removed with a plain git rm
// and pushed with git comes back from a sync as a tombstone, with when and
// where it was removed, in both stores and on the remote.
func TestSyncRemovedOnRemote(t *testing.T) {
	a, b, id := pair(t, "Deploys happen on Tuesday", false)
	e, err := b.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	gitOut(t, b.Root(), "rm", "-q", e.Path)
	gitOut(t, b.Root(), "-c", "user.name=Ed", "-c", "user.email=ed@example.com", "commit", "-q", "-m", "remove by hand")
	gitOut(t, b.Root(), "push", "-q", "origin", "main")

	res := mustSync(t, a)
	if !hasRule(res.Decisions, "remove") {
		t.Errorf("decisions = %v, want a remove", res.Decisions)
	}
	tomb := mem.DeletedPath(e.Path)
	got, ok := files(t, a)[tomb]
	if !ok {
		t.Fatalf("no tombstone %s; files %v", tomb, slices.Sorted(maps.Keys(files(t, a))))
	}
	te, err := mem.Parse(tomb, []byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if te.ID != id || !te.Deleted() || te.DeletedAt.IsZero() || !strings.Contains(te.DeletedReason, "removed on the remote") || te.Body != "Deploys happen on Tuesday" {
		t.Errorf("tombstone:\n%s", got)
	}
	if _, ok := files(t, a)[e.Path]; ok {
		t.Errorf("%s is still live", e.Path)
	}
	settle(t, a, b)
	if _, ok := files(t, b)[tomb]; !ok {
		t.Errorf("the tombstone did not reach the other store")
	}
	checkHealthy(t, a)
	checkHealthy(t, b)
}

// TestSyncRemoteSymlink: a remote whose tree turns a directory of the
// store into a symbolic link is refused with an error naming the path;
// nothing is written through the link, and the store stays as it was.
func TestSyncRemoteSymlink(t *testing.T) {
	for _, tc := range []struct{ name, path, target string }{
		{"scope", "entries/global", "/etc"},
		{"kind", "entries/global/facts", "../../.."},
		{"entries", "entries", "/tmp"},
		{"file", "entries/global/facts/20260101T000000Z__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md", "/etc/passwd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, _ := pair(t, "Deploys happen on Tuesday", false)
			remember(t, a, "Deploys happen on Wednesday")
			gitOut(t, b.Root(), "rm", "-r", "-q", "--ignore-unmatch", tc.path)
			full := filepath.Join(b.Root(), filepath.FromSlash(tc.path))
			os.RemoveAll(full)
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.Symlink(tc.target, full); err != nil {
				t.Fatal(err)
			}
			gitOut(t, b.Root(), "add", tc.path)
			gitOut(t, b.Root(), "-c", "user.name=Ed", "-c", "user.email=ed@example.com", "commit", "-q", "-m", "a link")
			gitOut(t, b.Root(), "push", "-q", "origin", "main")

			before := files(t, a)
			head, _ := a.st.Head()
			_, err := a.Sync(t.Context(), SyncOptions{})
			var inv *InvalidError
			if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.path+" is a symbolic link") {
				t.Fatalf("sync with a link at %s: %v, want an invalid remote naming it", tc.path, err)
			}
			if h, _ := a.st.Head(); h != head {
				t.Errorf("the store moved")
			}
			if after := files(t, a); !maps.Equal(before, after) {
				t.Errorf("entry files changed: %v", slices.Sorted(maps.Keys(after)))
			}
			checkHealthy(t, a)
		})
	}
}
