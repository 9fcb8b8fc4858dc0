package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBlobsCommit writes files the way a bulk load does, blobs added from
// several goroutines and stat data taken from the written file, beside a
// file recorded the usual way, in a pack (many files) and loose (a few):
// git must find the commit whole, each blob the file's, and nothing to
// re-read.
func TestBlobsCommit(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 2 * PackMin} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			r, dir := newRepo(t)
			writeFile(t, dir, "plain.md", "read back by the commit\n")
			b := r.Blobs(n)
			defer b.Close()
			changes := make([]Change, n)
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					name := fmt.Sprintf("entries/k%d/f%03d.md", i%3, i)
					data := fmt.Appendf(nil, "memory %d\n", i)
					c, err := b.Add(name, data)
					if err != nil {
						errs[i] = err
						return
					}
					p := filepath.Join(dir, filepath.FromSlash(name))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						errs[i] = err
						return
					}
					if err := os.WriteFile(p, data, 0o644); err != nil {
						errs[i] = err
						return
					}
					fi, err := os.Stat(p)
					if err == nil {
						err = c.Stat(fi)
					}
					changes[i], errs[i] = c, err
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			h, err := b.Commit(append(changes, Change{Path: "plain.md"}), "import", testSig)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(committedPaths(t, dir, h)); got != n+1 {
				t.Errorf("commit changed %d paths, want %d", got, n+1)
			}
			for _, i := range []int{0, n - 1} {
				name := fmt.Sprintf("entries/k%d/f%03d.md", i%3, i)
				if got, want := runGit(t, dir, "rev-parse", "HEAD:"+name), runGit(t, dir, "hash-object", name); got != want {
					t.Errorf("%s: committed blob %s, the file's is %s", name, got, want)
				}
			}
			assertClean(t, dir)
			// git trusts the recorded stat data: nothing is racily
			// clean enough to be re-read, and diff-files sees no change.
			if out := runGit(t, dir, "diff-files", "--name-only"); strings.TrimSpace(out) != "" {
				t.Errorf("git diff-files = %q", out)
			}
			if _, err := b.Commit(changes, "again", testSig); !errors.Is(err, errBlobsUsed) {
				t.Errorf("second commit from the same blobs: %v, want errBlobsUsed", err)
			}
		})
	}
}

// TestBlobsRefuseMissingStat checks that a change whose file was never
// recorded as written does not reach the index with empty stat data.
func TestBlobsRefuseMissingStat(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	b := r.Blobs(1)
	defer b.Close()
	c, err := b.Add("a.md", []byte("a\n"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "a.md", "a\n")
	if _, err := b.Commit([]Change{c}, "a", testSig); err == nil || !strings.Contains(err.Error(), "stat data") {
		t.Fatalf("commit without stat data: %v", err)
	}
	if _, err := tryGit(t, dir, "rev-parse", "--verify", "HEAD"); err == nil {
		t.Error("a commit was made")
	}
}

// TestBlobsCloseRemovesPack checks that blobs never committed leave no
// temporary pack behind.
func TestBlobsCloseRemovesPack(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	b := r.Blobs(PackMin)
	for i := range PackMin {
		if _, err := b.Add(fmt.Sprintf("f%d.md", i), fmt.Appendf(nil, "%d\n", i)); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	left, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*"))
	if len(left) != 0 {
		t.Errorf("left in objects/pack: %v", left)
	}
}
