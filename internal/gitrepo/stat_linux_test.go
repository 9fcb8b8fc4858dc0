//go:build linux

package gitrepo

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// TestCommitIndexStatData checks that the index entries of committed paths
// carry the files' real stat data, so git can trust them without reading
// the files.
func TestCommitIndexStatData(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "entries/x.md", "hello\n")
	if _, err := r.Commit([]Change{{Path: "entries/x.md"}}, "x", testSig); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	idx := &index.Index{}
	if err := index.NewDecoder(f).Decode(idx); err != nil {
		t.Fatal(err)
	}
	if idx.Cache != nil {
		t.Error("index has a cache-tree extension")
	}
	e, err := idx.Entry("entries/x.md")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(dir, "entries", "x.md"))
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no syscall.Stat_t on this system")
	}
	if e.Size != uint32(fi.Size()) || e.Inode != uint32(st.Ino) || !e.ModifiedAt.Equal(fi.ModTime()) || e.UID != st.Uid || e.Mode.String() != "0100644" {
		t.Errorf("index entry %+v does not match the file's stat %+v", e, st)
	}
	// git agrees that the stat data proves the file unchanged: diff-files
	// compares stat data only and reports nothing.
	if out := runGit(t, dir, "diff-files", "--name-only"); out != "" {
		t.Errorf("git diff-files = %q, want empty", out)
	}
}
