//go:build unix

package mira

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexDirForIsPrivate: the index of a store that cannot be written
// goes into directories of the user's own, private to them: in the cache
// directory, else under $TMPDIR in mira-<uid>, never a directory shared by
// all users. One that belongs to another user, who could have planted an
// index there to choose what searches find, is refused.
func TestIndexDirForIsPrivate(t *testing.T) {
	uid := os.Geteuid()
	root := "/some/store"
	t.Run("cache", func(t *testing.T) {
		cache := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", cache)
		os.Mkdir(filepath.Join(cache, "mira"), 0o755) // made open by an older Mira
		dir, err := indexDirFor(root, uid)
		if err != nil {
			t.Fatal(err)
		}
		checkPrivateChain(t, cache, dir)
		if _, err := indexDirFor(root, uid+1); err == nil || !strings.Contains(err.Error(), "another user") {
			t.Errorf("another user's index directory: %v, want refused", err)
		}
	})
	t.Run("tmp", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("XDG_CACHE_HOME", "")
		t.Setenv("HOME", "")
		t.Setenv("TMPDIR", tmp)
		dir, err := indexDirFor(root, uid)
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(tmp, fmt.Sprintf("mira-%d", uid)); !strings.HasPrefix(dir, want+string(filepath.Separator)) {
			t.Errorf("index directory %s, want one under %s", dir, want)
		}
		checkPrivateChain(t, tmp, dir)
		if _, err := indexDirFor(root, uid+1); err == nil || !strings.Contains(err.Error(), "another user") {
			t.Errorf("another user's index directory: %v, want refused", err)
		}
		// A link planted where the user's directory goes is refused too.
		other := fmt.Sprintf("mira-%d", uid+2)
		os.Symlink(t.TempDir(), filepath.Join(tmp, other))
		if _, err := indexDirFor(root, uid+2); err == nil {
			t.Error("a link as the user's directory was used")
		}
	})
}

// checkPrivateChain checks that every directory from base (excluded) to
// dir is 0700.
func checkPrivateChain(t *testing.T, base, dir string) {
	t.Helper()
	for d := dir; d != base && len(d) > len(base); d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a directory 0700", d, fi, err)
		}
	}
}
