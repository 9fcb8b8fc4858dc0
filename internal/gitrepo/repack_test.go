package gitrepo

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// countObjects returns git's own count of loose and packed objects.
func countObjects(t *testing.T, dir string) (loose, packed, packs string) {
	t.Helper()
	for _, l := range lines(runGit(t, dir, "count-objects", "-v")) {
		k, v, _ := strings.Cut(l, ": ")
		switch k {
		case "count":
			loose = v
		case "in-pack":
			packed = v
		case "packs":
			packs = v
		}
	}
	return loose, packed, packs
}

func TestRepack(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	var commits []string
	commitN := func(i int) {
		t.Helper()
		name := fmt.Sprintf("entries/global/facts/f%02d.md", i)
		writeFile(t, dir, name, strings.Repeat("line of text\n", i+1))
		h, err := r.Commit([]Change{{Path: name}}, fmt.Sprintf("commit %d", i), testSig)
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, h)
	}
	for i := range 5 {
		commitN(i)
	}
	// An object only the index refers to must survive every repack.
	writeFile(t, dir, "staged.md", "staged but never committed\n")
	runGit(t, dir, "add", "staged.md")

	// A second handle reads before the repack, so its pack list is stale.
	other, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Diff(commits[0], commits[4], ""); err != nil {
		t.Fatal(err)
	}

	n, err := r.LooseObjectCount()
	if err != nil {
		t.Fatal(err)
	}
	// 5 commits × (blob + 4 trees + commit) + the staged blob.
	if n != 31 {
		t.Errorf("LooseObjectCount() = %d, want 31", n)
	}
	if err := r.Repack(); err != nil {
		t.Fatal(err)
	}
	if n, err := r.LooseObjectCount(); err != nil || n != 0 {
		t.Errorf("LooseObjectCount() after Repack = %d, %v, want 0", n, err)
	}
	if loose, packed, packs := countObjects(t, dir); loose != "0" || packed != "31" || packs != "1" {
		t.Errorf("git count-objects: loose %s, in-pack %s, packs %s; want 0, 31, 1", loose, packed, packs)
	}
	runGit(t, dir, "status", "--porcelain") // must not complain about a missing blob
	assertCleanExceptStaged(t, dir)

	got, err := other.Diff(commits[0], commits[4], "")
	if err != nil {
		t.Fatalf("Diff through a handle opened before Repack: %v", err)
	}
	if len(got) != 4 {
		t.Errorf("Diff after Repack = %v, want 4 paths", got)
	}

	// Each further repack adds a pack until there are MaxPacks; the next
	// one folds them all into one.
	for i := 5; i < 5+MaxPacks; i++ {
		commitN(i)
		if err := r.Repack(); err != nil {
			t.Fatal(err)
		}
	}
	packs, err := r.packs()
	if err != nil {
		t.Fatal(err)
	}
	if len(packs) != 1 {
		t.Errorf("packs after %d repacks = %d, want 1 after folding", MaxPacks+1, len(packs))
	}
	wantObjects := fmt.Sprint(31 + 6*MaxPacks)
	if loose, packed, _ := countObjects(t, dir); loose != "0" || packed != wantObjects {
		t.Errorf("git count-objects: loose %s, in-pack %s; want 0, %s", loose, packed, wantObjects)
	}
	assertCleanExceptStaged(t, dir)

	// Both handles keep working on the folded pack.
	for _, h := range []*Repo{r, other} {
		got, err := h.Diff("", commits[len(commits)-1], "entries/")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(commits) {
			t.Errorf("Diff from empty = %d paths, want %d", len(got), len(commits))
		}
	}
	writeFile(t, dir, "after.md", "after\n")
	if _, err := other.Commit([]Change{{Path: "after.md"}}, "after repack", testSig); err != nil {
		t.Fatal(err)
	}
	if err := r.Repack(); err != nil {
		t.Fatal(err)
	}
	assertCleanExceptStaged(t, dir)
	if got := runGit(t, dir, "show", "HEAD~3:entries/global/facts/f01.md"); got != strings.Repeat("line of text\n", 2) {
		t.Errorf("old content after repacks = %q", got)
	}
}

// TestRepackGitPacks folds packs written by git, keeps a pack marked with
// .keep, and leaves nothing for fsck to complain about.
func TestRepackGitPacks(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	for i := range MaxPacks + 1 {
		name := fmt.Sprintf("f%d.md", i)
		writeFile(t, dir, name, name+"\n")
		if _, err := r.Commit([]Change{{Path: name}}, name, testSig); err != nil {
			t.Fatal(err)
		}
		runGit(t, dir, "repack", "-d", "-q") // a new pack of the loose objects
		if i == 0 {
			first, err := filepath.Glob(filepath.Join(packDir, "pack-*.pack"))
			if err != nil || len(first) != 1 {
				t.Fatalf("packs after the first git repack: %v, %v", first, err)
			}
			writeFile(t, dir, ".git/objects/pack/"+strings.TrimSuffix(filepath.Base(first[0]), ".pack")+".keep", "")
		}
	}
	before, err := r.packs()
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != MaxPacks {
		t.Fatalf("setup made %d packs without .keep, want %d", len(before), MaxPacks)
	}
	if err := r.Repack(); err != nil {
		t.Fatal(err)
	}
	after, err := r.packs()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 {
		t.Errorf("packs after folding = %v, want one", after)
	}
	all, _ := filepath.Glob(filepath.Join(packDir, "pack-*.pack"))
	keeps, _ := filepath.Glob(filepath.Join(packDir, "pack-*.keep"))
	if len(all) != 2 || len(keeps) != 1 {
		t.Errorf("pack files = %v, keep files = %v; want the kept pack and the folded one", all, keeps)
	}
	leftovers, _ := filepath.Glob(filepath.Join(packDir, "tmp_*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	assertClean(t, dir)
}

// assertCleanExceptStaged is assertClean for a repository with a staged
// file: fsck must be clean, status shows just that file.
func assertCleanExceptStaged(t *testing.T, dir string) {
	t.Helper()
	if st := runGit(t, dir, "status", "--porcelain"); st != "A  staged.md\n" {
		t.Errorf("git status = %q, want only the staged file", st)
	}
	runGit(t, dir, "fsck", "--full", "--strict", "--no-progress", "--no-dangling")
}

// TestCommitDuringGitGC commits while `git gc` repacks, prunes empty
// fan-out directories and packs refs in the same repository, as a user's
// git or an automatic gc may do at any time.
func TestCommitDuringGitGC(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	writeFile(t, dir, "seed.md", "seed\n")
	if _, err := r.Commit([]Change{{Path: "seed.md"}}, "seed", testSig); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	gcErr := make(chan error, 1)
	go func() {
		defer close(gcErr)
		for {
			select {
			case <-done:
				return
			default:
			}
			if out, err := tryGit(t, dir, "gc", "--quiet"); err != nil && !strings.Contains(out, "lock") {
				gcErr <- fmt.Errorf("git gc: %v\n%s", err, out)
				return
			}
		}
	}()
	for i := range 25 {
		name := fmt.Sprintf("entries/k%d/f%d.md", i%4, i)
		writeFile(t, dir, name, fmt.Sprintf("memory %d\n", i))
		for attempt := 0; ; attempt++ {
			_, err := r.Commit([]Change{{Path: name}}, "m", testSig)
			if err == nil {
				break
			}
			if (!errors.Is(err, ErrLocked) && !errors.Is(err, ErrRefMoved)) || attempt == 50 {
				close(done)
				t.Fatalf("commit %d: %v", i, err)
			}
			time.Sleep(5 * time.Millisecond) // git holds a lock for a moment
		}
	}
	close(done)
	if err := <-gcErr; err != nil {
		t.Fatal(err)
	}
	assertClean(t, dir)
	if got := strings.TrimSpace(runGit(t, dir, "rev-list", "--count", "HEAD")); got != "26" {
		t.Errorf("commit count = %s, want 26", got)
	}
}
