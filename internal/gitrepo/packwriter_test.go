package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCommitWritesPack: a commit of PackMin files or more puts its objects
// into one new pack that git reads, verifies and finds every object in;
// a smaller commit stays loose; both kinds build on each other, and
// Repack still gathers everything.
func TestCommitWritesPack(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	// Contents of several sizes, so entry headers take one to four
	// bytes, and two files alike, so one object serves both paths.
	content := func(i int) string {
		switch i {
		case 0:
			return ""
		case 1:
			return "x"
		case 2:
			return strings.Repeat("long line of memory\n", 2000) // 40 kB
		case 3:
			return "same\n"
		case 4:
			return "same\n"
		}
		return fmt.Sprintf("memory %d\n%s", i, strings.Repeat("w ", i))
	}
	// One file is committed loose first, so the pack holds a copy of an
	// object that exists already.
	writeFile(t, dir, "entries/dup.md", content(5))
	if _, err := r.Commit([]Change{{Path: "entries/dup.md"}}, "one", testSig); err != nil {
		t.Fatal(err)
	}
	if got := looseCount(t, r); got != 4 {
		t.Fatalf("%d loose objects after a commit of one file, want 4 (blob, two trees, commit)", got)
	}

	var changes []Change
	for i := range PackMin {
		name := fmt.Sprintf("entries/s%d/f%03d.md", i%3, i)
		writeFile(t, dir, name, content(i))
		changes = append(changes, Change{Path: name})
	}
	h, err := r.Commit(changes, "import", testSig)
	if err != nil {
		t.Fatal(err)
	}
	if got := looseCount(t, r); got != 4 {
		t.Errorf("%d loose objects after a commit of %d files, want the 4 from before", got, PackMin)
	}
	packs, err := r.packs()
	if err != nil || len(packs) != 1 {
		t.Fatalf("packs = %v, %v; want one", packs, err)
	}
	idx := filepath.Join(dir, ".git", "objects", "pack", packs[0]+".idx")
	// PackMin blobs, two of them alike; 5 trees (the root, entries, s0, s1,
	// s2); the commit.
	out := runGit(t, dir, "verify-pack", "-v", idx)
	if !strings.Contains(out, fmt.Sprintf("non delta: %d objects", PackMin-1+5+1)) {
		t.Errorf("git verify-pack -v:\n%s", out)
	}
	for _, f := range []string{idx, strings.TrimSuffix(idx, ".idx") + ".pack"} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o400 {
			t.Errorf("%s: %v, %v; want read-only, private", f, fi, err)
		}
	}
	if got := len(committedPaths(t, dir, h)); got != PackMin {
		t.Errorf("commit changed %d paths, want %d", got, PackMin)
	}
	for i := range PackMin {
		name := fmt.Sprintf("entries/s%d/f%03d.md", i%3, i)
		if got := runGit(t, dir, "cat-file", "blob", "HEAD:"+name); got != content(i) {
			t.Errorf("%s reads back as %.40q, want %.40q", name, got, content(i))
		}
	}
	assertClean(t, dir)

	// A small commit on top reads its parent's trees from the pack.
	writeFile(t, dir, "entries/s1/f001.md", "changed\n")
	os.Remove(filepath.Join(dir, "entries/s2/f002.md"))
	if _, err := r.Commit([]Change{{Path: "entries/s1/f001.md"}, {Path: "entries/s2/f002.md", Delete: true}}, "edit", testSig); err != nil {
		t.Fatal(err)
	}
	if got := len(lines(runGit(t, dir, "ls-files"))); got != PackMin { // dup.md in, f002.md out
		t.Errorf("%d files tracked, want %d", got, PackMin)
	}
	assertClean(t, dir)

	// A temporary file a killed writer left in the pack directory is
	// ignored by git and by the next commit.
	os.WriteFile(filepath.Join(dir, ".git", "objects", "pack", "tmp_pack_killed"), []byte("PACK\x00"), 0o444)
	if err := r.Repack(); err != nil {
		t.Fatal(err)
	}
	if got := looseCount(t, r); got != 0 {
		t.Errorf("%d loose objects after Repack", got)
	}
	assertClean(t, dir)
}

func looseCount(t *testing.T, r *Repo) int {
	t.Helper()
	n, err := r.LooseObjectCount()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRepackKeepsBigPack: once MaxPacks packs have piled up, a repack
// folds the small ones and the loose objects into one and leaves the big
// pack of an earlier large commit as it is; packs of like sizes are all
// folded.
func TestRepackKeepsBigPack(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	var changes []Change
	for i := range 2 * PackMin {
		name := fmt.Sprintf("entries/big/f%03d.md", i)
		writeFile(t, dir, name, fmt.Sprintf("memory %d\n%s", i, strings.Repeat("some words of text ", 50)))
		changes = append(changes, Change{Path: name})
	}
	if _, err := r.Commit(changes, "import", testSig); err != nil {
		t.Fatal(err)
	}
	packs, err := r.packs()
	if err != nil || len(packs) != 1 {
		t.Fatalf("packs after a large commit = %v, %v", packs, err)
	}
	big := packs[0]
	// Small commits, each repacked into a small pack of its own.
	for i := 1; ; i++ {
		name := fmt.Sprintf("entries/small/f%02d.md", i)
		writeFile(t, dir, name, fmt.Sprintf("small %d\n", i))
		if _, err := r.Commit([]Change{{Path: name}}, "small", testSig); err != nil {
			t.Fatal(err)
		}
		if err := r.Repack(); err != nil {
			t.Fatal(err)
		}
		n, err := r.PackCount()
		if err != nil {
			t.Fatal(err)
		}
		if i < MaxPacks {
			if n != i+1 {
				t.Fatalf("after %d small repacks: %d packs, want %d", i, n, i+1)
			}
			continue
		}
		// The MaxPacks-th small repack found MaxPacks packs: the small
		// ones and the new loose objects became one pack, beside the big.
		if n != 2 {
			t.Fatalf("after the folding repack: %d packs, want 2", n)
		}
		break
	}
	packs, _ = r.packs()
	if !slices.Contains(packs, big) {
		t.Errorf("packs after folding = %v; the big pack %s is gone", packs, big)
	}
	if n := looseCount(t, r); n != 0 {
		t.Errorf("%d loose objects after the repacks", n)
	}
	assertClean(t, dir)
}

// TestFailedPackCommitLeavesNoTemp: a commit of a pack's worth of files
// that fails after its objects were streamed to a temporary pack file (a
// file vanished under it) removes that file, and the next commit works.
func TestFailedPackCommitLeavesNoTemp(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	var changes []Change
	for i := range PackMin + 1 {
		name := fmt.Sprintf("entries/f%03d.md", i)
		writeFile(t, dir, name, fmt.Sprintf("memory %d\n", i))
		changes = append(changes, Change{Path: name})
	}
	os.Remove(filepath.Join(dir, "entries", fmt.Sprintf("f%03d.md", PackMin))) // the last, after the others' blobs
	if _, err := r.Commit(changes, "import", testSig); err == nil {
		t.Fatal("commit of a missing file succeeded")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "tmp_*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if _, err := r.Commit(changes[:PackMin], "import", testSig); err != nil {
		t.Fatal(err)
	}
}

// TestLeftoverPackRemoved: a writer killed while it streamed a commit's
// pack (a million files make a file of hundreds of megabytes) leaves its
// temporary pack and index behind; the next writer to take the store's
// lock removes them (RemoveLeftovers), and leaves alone a temporary file
// of git's own, which a `git gc` running beside may still be writing.
func TestLeftoverPackRemoved(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	writeFile(t, dir, "entries/a.md", "a\n")
	if _, err := r.Commit([]Change{{Path: "entries/a.md"}}, "one", testSig); err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(dir, ".git", "objects", "pack")
	os.MkdirAll(pack, 0o755)
	ours := []string{packTempPrefix + "123", idxTempPrefix + "456"}
	for _, n := range append(ours, "tmp_pack_git") {
		if err := os.WriteFile(filepath.Join(pack, n), []byte("PACK\x00"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	r.RemoveLeftovers()
	for _, n := range ours {
		if _, err := os.Stat(filepath.Join(pack, n)); err == nil {
			t.Errorf("%s left after RemoveLeftovers", n)
		}
	}
	if _, err := os.Stat(filepath.Join(pack, "tmp_pack_git")); err != nil {
		t.Errorf("git's own temporary pack was removed: %v", err)
	}
}
