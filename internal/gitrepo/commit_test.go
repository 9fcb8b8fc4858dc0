package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestInit(t *testing.T) {
	dir := t.TempDir()
	created, err := Init(dir)
	if err != nil || !created {
		t.Fatalf("Init(new dir) = %v, %v, want true, nil", created, err)
	}
	created, err = Init(dir)
	if err != nil || created {
		t.Fatalf("Init(existing repo) = %v, %v, want false, nil", created, err)
	}
	if got := strings.TrimSpace(runGit(t, dir, "symbolic-ref", "HEAD")); got != "refs/heads/main" {
		t.Errorf("HEAD -> %q, want refs/heads/main", got)
	}
	if got := strings.TrimSpace(runGit(t, dir, "rev-parse", "--is-bare-repository")); got != "false" {
		t.Errorf("is bare = %s, want false", got)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".git-init-*"))
	if len(left) > 0 {
		t.Errorf("temporary directories left behind: %v", left)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := r.Head(); err != nil || h != "" {
		t.Errorf("Head() on unborn branch = %q, %v, want \"\", nil", h, err)
	}
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrNotRepository) {
		t.Errorf("Open(empty dir) error = %v, want ErrNotRepository", err)
	}
}

// step is one commit of a scenario: files to remove and write on disk
// first, then the changes to commit and the paths git must show as changed.
type step struct {
	name    string
	write   map[string]string
	remove  []string
	changes []Change
	want    []string
}

func TestCommitSequence(t *testing.T) {
	t.Parallel()
	steps := []step{
		{
			name:    "root commit",
			write:   map[string]string{".gitignore": ".index/\n", "entries/global/facts/a.md": "a1\n"},
			changes: []Change{{Path: ".gitignore"}, {Path: "entries/global/facts/a.md"}},
			want:    []string{".gitignore", "entries/global/facts/a.md"},
		},
		{
			name:    "modify and add in new nested directories",
			write:   map[string]string{"entries/global/facts/a.md": "a2\n", "entries/shop/decisions/2026/b.md": "b\n"},
			changes: []Change{{Path: "entries/global/facts/a.md"}, {Path: "entries/shop/decisions/2026/b.md"}},
			want:    []string{"entries/global/facts/a.md", "entries/shop/decisions/2026/b.md"},
		},
		{
			name:    "rename as delete plus add",
			write:   map[string]string{"entries/global/deleted/facts/a.md": "a2\ndeleted_at: now\n"},
			remove:  []string{"entries/global/facts"},
			changes: []Change{{Path: "entries/global/deleted/facts/a.md"}, {Path: "entries/global/facts/a.md", Delete: true}},
			want:    []string{"entries/global/deleted/facts/a.md", "entries/global/facts/a.md"},
		},
		{
			name:    "same path twice keeps the last change",
			write:   map[string]string{"notes.md": "n\n"},
			changes: []Change{{Path: "notes.md", Delete: true}, {Path: "notes.md"}},
			want:    []string{"notes.md"},
		},
		{
			name:    "delete a whole directory",
			remove:  []string{"entries/shop"},
			changes: []Change{{Path: "entries/shop", Delete: true}},
			want:    []string{"entries/shop/decisions/2026/b.md"},
		},
		{
			name:    "file replaced by a directory",
			write:   map[string]string{"notes.md/inner.md": "i\n"},
			remove:  []string{"notes.md"},
			changes: []Change{{Path: "notes.md", Delete: true}, {Path: "notes.md/inner.md"}},
			want:    []string{"notes.md", "notes.md/inner.md"},
		},
		{
			name:    "delete of a path that never existed is ignored",
			write:   map[string]string{"c.md": "c\n"},
			changes: []Change{{Path: "c.md"}, {Path: "nowhere/x.md", Delete: true}, {Path: "c.md/under-a-file", Delete: true}},
			want:    []string{"c.md"},
		},
		{
			// "k" sorts before "k.md" as a file and after it as a
			// directory ("k/"): the tree must be sorted again.
			name:    "a file replaced by a directory that sorts elsewhere",
			write:   map[string]string{"k": "k\n", "k.md": "m\n"},
			changes: []Change{{Path: "k"}, {Path: "k.md"}},
			want:    []string{"k", "k.md"},
		},
		{
			name:    "and back",
			remove:  []string{"k"},
			write:   map[string]string{"k/inner.md": "i\n"},
			changes: []Change{{Path: "k", Delete: true}, {Path: "k/inner.md"}},
			want:    []string{"k", "k/inner.md"},
		},
		{
			name:    "and a file again",
			remove:  []string{"k"},
			write:   map[string]string{"k": "k2\n"},
			changes: []Change{{Path: "k/inner.md", Delete: true}, {Path: "k"}},
			want:    []string{"k", "k/inner.md"},
		},
	}
	r, dir := newRepo(t)
	prev := ""
	for i, s := range steps {
		for _, name := range s.remove {
			removeFile(t, dir, name)
		}
		for name, content := range s.write {
			writeFile(t, dir, name, content)
		}
		msg := "step " + s.name + "\n\nMira-Command: test\nMira-Step: " + string(rune('0'+i)) + "\n"
		h, err := r.Commit(s.changes, msg, testSig)
		if err != nil {
			t.Fatalf("%s: Commit: %v", s.name, err)
		}
		if got := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD")); got != h {
			t.Errorf("%s: git rev-parse HEAD = %s, Commit returned %s", s.name, got, h)
		}
		if head, err := r.Head(); err != nil || head != h {
			t.Errorf("%s: Head() = %s, %v, want %s", s.name, head, err, h)
		}
		if diff := cmp.Diff(s.want, committedPaths(t, dir, h)); diff != "" {
			t.Errorf("%s: changed paths (-want +git):\n%s", s.name, diff)
		}
		got, err := r.Diff(prev, h, "")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: Diff(prev, head) (-want +got):\n%s", s.name, diff)
		}
		if body := runGit(t, dir, "log", "-1", "--format=%B", h); body != msg+"\n" {
			t.Errorf("%s: git log %%B = %q, want %q", s.name, body, msg+"\n")
		}
		raw := runGit(t, dir, "cat-file", "commit", h)
		if _, m, _ := strings.Cut(raw, "\n\n"); m != msg {
			t.Errorf("%s: stored message = %q, want %q", s.name, m, msg)
		}
		wantParents := ""
		if prev != "" {
			wantParents = prev
		}
		if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%P", h)); got != wantParents {
			t.Errorf("%s: parents = %q, want %q", s.name, got, wantParents)
		}
		assertClean(t, dir)
		prev = h
	}
	if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%an <%ae> %ad|%cn <%ce> %cd", "--date=raw")); got != "Mira Test <test@example.com> 1795251600 +0100|Mira Test <test@example.com> 1795251600 +0100" {
		t.Errorf("author|committer = %q", got)
	}
	wantTree := []string{".gitignore", "c.md", "entries/global/deleted/facts/a.md", "k", "k.md", "notes.md/inner.md"}
	if diff := cmp.Diff(wantTree, lines(runGit(t, dir, "ls-tree", "-r", "--name-only", "HEAD"))); diff != "" {
		t.Errorf("final tree (-want +got):\n%s", diff)
	}
}

func TestCommitModes(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	writeFile(t, dir, "run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "plain.md", "p\n")
	if err := os.Symlink("plain.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit([]Change{{Path: "run.sh"}, {Path: "plain.md"}, {Path: "link.md"}}, "modes", testSig); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"100644 blob " + strings.TrimSpace(runGit(t, dir, "hash-object", "plain.md")) + "\tplain.md",
		"100755 blob " + strings.TrimSpace(runGit(t, dir, "hash-object", "run.sh")) + "\trun.sh",
	}
	got := lines(runGit(t, dir, "ls-tree", "HEAD"))
	if len(got) != 3 || !strings.HasPrefix(got[0], "120000 blob ") || got[1] != want[0] || got[2] != want[1] {
		t.Errorf("git ls-tree HEAD = %q, want a 120000 link.md, then %q", got, want)
	}
	if target := runGit(t, dir, "cat-file", "-p", "HEAD:link.md"); target != "plain.md" {
		t.Errorf("symlink blob = %q, want plain.md", target)
	}
	assertClean(t, dir)
}

func TestCommitNothing(t *testing.T) {
	r, dir := newRepo(t)
	if _, err := r.Commit(nil, "m", testSig); !errors.Is(err, ErrNothingToCommit) {
		t.Errorf("Commit(no changes) error = %v, want ErrNothingToCommit", err)
	}
	if _, err := r.Commit([]Change{{Path: "gone.md", Delete: true}}, "m", testSig); !errors.Is(err, ErrNothingToCommit) {
		t.Errorf("Commit(delete missing, unborn) error = %v, want ErrNothingToCommit", err)
	}
	writeFile(t, dir, "a.md", "a\n")
	if _, err := r.Commit([]Change{{Path: "a.md"}}, "m", testSig); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a.md", "a\n") // same bytes again
	if _, err := r.Commit([]Change{{Path: "a.md"}}, "m", testSig); !errors.Is(err, ErrNothingToCommit) {
		t.Errorf("Commit(unchanged file) error = %v, want ErrNothingToCommit", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("index.lock left behind: %v", err)
	}
	assertClean(t, dir)
}

func TestCommitDeleteEverything(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	writeFile(t, dir, "a/b.md", "b\n")
	if _, err := r.Commit([]Change{{Path: "a/b.md"}}, "add", testSig); err != nil {
		t.Fatal(err)
	}
	removeFile(t, dir, "a")
	h, err := r.Commit([]Change{{Path: "a/b.md", Delete: true}}, "rm", testSig)
	if err != nil {
		t.Fatal(err)
	}
	if tree := strings.TrimSpace(runGit(t, dir, "rev-parse", h+"^{tree}")); tree != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Errorf("tree = %s, want the empty tree", tree)
	}
	assertClean(t, dir)
}

func TestCommitInvalid(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	for _, c := range []Change{
		{Path: ""}, {Path: "/abs.md"}, {Path: "a/../b.md"}, {Path: "./a.md"}, {Path: "a//b.md"},
		{Path: ".git/config"}, {Path: "x/.GIT/y"}, {Path: "missing.md"}, {Path: "dir/"},
	} {
		if _, err := r.Commit([]Change{c}, "m", testSig); err == nil || errors.Is(err, ErrNothingToCommit) {
			t.Errorf("Commit(%q) error = %v, want a path error", c.Path, err)
		}
	}
	writeFile(t, dir, "d/f.md", "f\n")
	if _, err := r.Commit([]Change{{Path: "d"}}, "m", testSig); err == nil {
		t.Error("Commit(directory as file) succeeded")
	}
	if err := os.Symlink("d", filepath.Join(dir, "via")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit([]Change{{Path: "via/f.md"}}, "m", testSig); err == nil {
		t.Error("Commit(path through a symbolic link) succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("index.lock left behind: %v", err)
	}
	if h, _ := r.Head(); h != "" {
		t.Errorf("a failed commit moved HEAD to %s", h)
	}
}

func TestCommitSignatureSanitised(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	sig := Signature{Name: "Eve <evil>\nx", Email: "<e@x>", When: testSig.When}
	if _, err := r.Commit([]Change{{Path: "a.md"}}, "m", sig); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%an|%ae")); got != "Eve evilx|e@x" {
		t.Errorf("author = %q", got)
	}
	assertClean(t, dir)
}

func TestCommitRefMoved(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	first, err := r.Commit([]Change{{Path: "a.md"}}, "first", testSig)
	if err != nil {
		t.Fatal(err)
	}
	// Another process commits between our reading the branch and moving
	// it. git commit-tree + update-ref need no index lock, which Commit
	// holds at that moment.
	var foreign string
	testHookBeforeRef = func() {
		c := strings.TrimSpace(runGit(t, dir, "commit-tree", first+"^{tree}", "-p", first, "-m", "foreign"))
		runGit(t, dir, "update-ref", "refs/heads/main", c)
		foreign = c
	}
	t.Cleanup(func() { testHookBeforeRef = nil })
	writeFile(t, dir, "b.md", "b\n")
	_, err = r.Commit([]Change{{Path: "b.md"}}, "second", testSig)
	if !errors.Is(err, ErrRefMoved) {
		t.Fatalf("Commit with ref moved: error = %v, want ErrRefMoved", err)
	}
	testHookBeforeRef = nil
	if h, _ := r.Head(); h != foreign {
		t.Errorf("Head() = %s, want the foreign commit %s", h, foreign)
	}
	for _, lock := range []string{"index.lock", "refs/heads/main.lock"} {
		if _, err := os.Stat(filepath.Join(dir, ".git", lock)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", lock, err)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".git", "*.tmp")); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
	// A retry builds on the foreign commit.
	h, err := r.Commit([]Change{{Path: "b.md"}}, "second", testSig)
	if err != nil {
		t.Fatal(err)
	}
	if p := strings.TrimSpace(runGit(t, dir, "log", "-1", "--format=%P", h)); p != foreign {
		t.Errorf("retried commit's parent = %s, want %s", p, foreign)
	}
	assertClean(t, dir)
}

func TestCommitLocks(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	lock := filepath.Join(dir, ".git", "index.lock")
	writeFile(t, dir, ".git/index.lock", "")
	if _, err := r.Commit([]Change{{Path: "a.md"}}, "m", testSig); !errors.Is(err, ErrLocked) {
		t.Fatalf("Commit with index.lock present: error = %v, want ErrLocked", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("Commit removed a live index.lock: %v", err)
	}
	// A lock older than any live git command is left from a crash.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit([]Change{{Path: "a.md"}}, "m", testSig); err != nil {
		t.Fatalf("Commit with stale index.lock: %v", err)
	}
	// A lock marked by a process of this host that is gone is broken at
	// once; one marked by a live process is respected.
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	writeFile(t, dir, "a.md", "a2\n")
	writeFile(t, dir, ".git/index.lock", fmt.Sprintf("%s pid=1 host=%s\n", lockMarker, host))
	if _, err := r.Commit([]Change{{Path: "a.md"}}, "m", testSig); !errors.Is(err, ErrLocked) {
		t.Fatalf("Commit with index.lock of a live process: error = %v, want ErrLocked", err)
	}
	writeFile(t, dir, ".git/index.lock", fmt.Sprintf("%s pid=%d host=%s\n", lockMarker, dead.Process.Pid, host))
	if _, err := r.Commit([]Change{{Path: "a.md"}}, "m", testSig); err != nil {
		t.Fatalf("Commit with index.lock of a dead process: %v", err)
	}

	writeFile(t, dir, ".git/refs/heads/main.lock", "")
	writeFile(t, dir, "b.md", "b\n")
	if _, err := r.Commit([]Change{{Path: "b.md"}}, "m", testSig); !errors.Is(err, ErrLocked) {
		t.Errorf("Commit with main.lock present: error = %v, want ErrLocked", err)
	}
	removeFile(t, dir, ".git/refs/heads/main.lock")
	if _, err := r.Commit([]Change{{Path: "b.md"}}, "m", testSig); err != nil {
		t.Fatal(err)
	}
	assertClean(t, dir)
}

// TestCommitOverCLIRepo commits into repositories whose index and refs the
// git CLI wrote, in the forms git can leave them.
func TestCommitOverCLIRepo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		setup       []string // git commands after an initial CLI commit
		wantRebuild error    // why the index cannot be rewritten, nil if it can
	}{
		{name: "plain index with cache tree"},
		{name: "index version 4", setup: []string{"update-index --index-version 4"}},
		{name: "split index", setup: []string{"update-index --split-index"}, wantRebuild: errSplitIndex},
		{name: "end of index entries extension", setup: []string{"-c index.threads=2 -c index.recordEndOfIndexEntries=true read-tree HEAD"}},
		{name: "packed refs", setup: []string{"pack-refs --all"}},
		{name: "gc", setup: []string{"gc --quiet"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			runGit(t, dir, "init", "--quiet", "--initial-branch=main")
			writeFile(t, dir, "entries/a.md", "a\n")
			writeFile(t, dir, "entries/b.md", "b\n")
			writeFile(t, dir, "other/c.md", "c\n")
			runGit(t, dir, "add", "-A")
			runGit(t, dir, "commit", "--quiet", "-m", "cli")
			for _, s := range tt.setup {
				runGit(t, dir, strings.Fields(s)...)
			}
			st, err := readIndex(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			if !errors.Is(st.err, tt.wantRebuild) || st.usable() == (tt.wantRebuild != nil) {
				t.Errorf("reading the index: error %v, want %v", st.err, tt.wantRebuild)
			}
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "entries/a.md", "a2\n")
			writeFile(t, dir, "entries/new/d.md", "d\n")
			h, err := r.Commit([]Change{{Path: "entries/a.md"}, {Path: "entries/new/d.md"}}, "ours", testSig)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"entries/a.md", "entries/new/d.md"}, committedPaths(t, dir, h)); diff != "" {
				t.Errorf("changed paths (-want +git):\n%s", diff)
			}
			assertClean(t, dir)
			// The CLI must build its next commit from an index that
			// holds our change: a stale cache tree would lose it.
			writeFile(t, dir, "other/c.md", "c2\n")
			runGit(t, dir, "commit", "--quiet", "-am", "cli again")
			want := []string{"entries/a.md", "entries/b.md", "entries/new/d.md", "other/c.md"}
			if diff := cmp.Diff(want, lines(runGit(t, dir, "ls-tree", "-r", "--name-only", "HEAD"))); diff != "" {
				t.Errorf("tree after CLI commit (-want +got):\n%s", diff)
			}
			if got := runGit(t, dir, "show", "HEAD:entries/a.md"); got != "a2\n" {
				t.Errorf("entries/a.md after CLI commit = %q", got)
			}
			assertClean(t, dir)
		})
	}
}

// TestCommitKeepsStagedChanges checks that, like `git commit --only`,
// Commit records only its paths and leaves other staged changes staged.
func TestCommitKeepsStagedChanges(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	writeFile(t, dir, "b.md", "b\n")
	if _, err := r.Commit([]Change{{Path: "a.md"}, {Path: "b.md"}}, "m", testSig); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "b.md", "b staged\n")
	runGit(t, dir, "add", "b.md")
	writeFile(t, dir, "a.md", "a2\n")
	h, err := r.Commit([]Change{{Path: "a.md"}}, "m", testSig)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.md"}, committedPaths(t, dir, h)); diff != "" {
		t.Errorf("changed paths (-want +git):\n%s", diff)
	}
	if st := runGit(t, dir, "status", "--porcelain"); st != "M  b.md\n" {
		t.Errorf("git status = %q, want b.md staged", st)
	}
}

func TestCommitUnmerged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runGit(t, dir, "init", "--quiet", "--initial-branch=main")
	writeFile(t, dir, "a.md", "base\n")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "--quiet", "-m", "base")
	runGit(t, dir, "checkout", "--quiet", "-b", "side")
	writeFile(t, dir, "a.md", "side\n")
	runGit(t, dir, "commit", "--quiet", "-am", "side")
	runGit(t, dir, "checkout", "--quiet", "main")
	writeFile(t, dir, "a.md", "main\n")
	runGit(t, dir, "commit", "--quiet", "-am", "main")
	if _, err := tryGit(t, dir, "merge", "--quiet", "side"); err == nil {
		t.Fatal("merge unexpectedly succeeded")
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "b.md", "b\n")
	if _, err := r.Commit([]Change{{Path: "b.md"}}, "m", testSig); !errors.Is(err, ErrUnmerged) {
		t.Errorf("Commit during a conflicted merge: error = %v, want ErrUnmerged", err)
	}
}

func TestCommitDetachedHead(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	first, err := r.Commit([]Change{{Path: "a.md"}}, "m", testSig)
	if err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "checkout", "--quiet", "--detach")
	writeFile(t, dir, "b.md", "b\n")
	h, err := r.Commit([]Change{{Path: "b.md"}}, "m", testSig)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD")); got != h {
		t.Errorf("HEAD = %s, want %s", got, h)
	}
	if got := strings.TrimSpace(runGit(t, dir, "rev-parse", "main")); got != first {
		t.Errorf("main = %s, want it untouched at %s", got, first)
	}
	assertClean(t, dir)
}

func TestManyCommits(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	const n = 30
	for i := range n {
		name := filepath.ToSlash(filepath.Join("entries", "global", string(rune('a'+i%5)), "f"+string(rune('a'+i%26))+".md"))
		writeFile(t, dir, name, strings.Repeat("x", i)+"\n")
		if _, err := r.Commit([]Change{{Path: name}}, "commit", testSig); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if got := strings.TrimSpace(runGit(t, dir, "rev-list", "--count", "HEAD")); got != "30" {
		t.Errorf("commit count = %s, want %d", got, n)
	}
	assertClean(t, dir)
}

func TestUpdateEntries(t *testing.T) {
	indexTime := time.Unix(1_000_000, 0)
	before := indexTime.Add(-time.Minute)
	entry := func(name string, mtime time.Time) *indexEntry {
		return &indexEntry{name: name, mtimeSec: uint32(mtime.Unix()), size: 5}
	}
	idx := &indexFile{version: 2, entries: []indexEntry{
		*entry("a", before),                   // becomes a directory
		*entry("b/c", before),                 // b becomes a file
		*entry("b/d", before),                 //
		*entry("b0", before),                  // sorts between b and b/c, kept
		*entry("bb", before),                  // shares a prefix with b, kept
		*entry("e", indexTime),                // racily clean: smudged
		*entry("f", indexTime.Add(time.Hour)), // racily clean: smudged
		*entry("g", before),                   // deleted
		*entry("h", before),                   // untouched
	}}
	chs := []*change{
		{path: "a/x", entry: entry("a/x", indexTime)},
		{path: "b", entry: entry("b", indexTime)},
		{path: "g", delete: true},
		{path: "z", entry: entry("z", indexTime)},
	}
	updateEntries(idx, chs, indexTime)
	type row struct {
		Name string
		Size uint32
	}
	var got []row
	for _, e := range idx.entries {
		got = append(got, row{e.name, e.size})
	}
	want := []row{{"a/x", 5}, {"b", 5}, {"b0", 5}, {"bb", 5}, {"e", 0}, {"f", 0}, {"h", 5}, {"z", 5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
}

func TestCommitManyFilesAtOnce(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	var changes []Change
	for i := range 300 {
		name := fmt.Sprintf("entries/s%d/k%d/f%03d.md", i%3, i%7, i)
		writeFile(t, dir, name, fmt.Sprintf("memory %d\n", i))
		changes = append(changes, Change{Path: name})
	}
	h, err := r.Commit(changes, "import", testSig)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(committedPaths(t, dir, h)); got != 300 {
		t.Errorf("commit changed %d paths, want 300", got)
	}
	assertClean(t, dir)
}

// TestCommitDamagedIndex checks that an index git itself would reject is
// rebuilt rather than trusted or fatal.
func TestCommitDamagedIndex(t *testing.T) {
	t.Parallel()
	for name, damage := range map[string]func([]byte) []byte{
		"truncated":    func(b []byte) []byte { return b[:len(b)/2] },
		"zeroed":       func(b []byte) []byte { return make([]byte, len(b)) },
		"bad checksum": func(b []byte) []byte { b[len(b)-1] ^= 0xff; return b },
		"empty":        func([]byte) []byte { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			r, dir := newRepo(t)
			writeFile(t, dir, "a.md", "a\n")
			writeFile(t, dir, "b/c.md", "c\n")
			if _, err := r.Commit([]Change{{Path: "a.md"}, {Path: "b/c.md"}}, "m", testSig); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, ".git", "index")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "d.md", "d\n")
			if _, err := r.Commit([]Change{{Path: "d.md"}}, "m", testSig); err != nil {
				t.Fatal(err)
			}
			assertClean(t, dir)
		})
	}
}
