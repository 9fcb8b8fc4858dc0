//go:build unix

package mira

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/miramem/mira/mem"
)

// notPrivate lists what under root another user could reach: directories
// other than 0700, files with any group or other bit, or more than 0600.
func notPrivate(t *testing.T, root string) []string {
	t.Helper()
	var bad []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		m := fi.Mode()
		switch {
		case m&fs.ModeSymlink != 0:
		case m.IsDir() && m.Perm() != 0o700,
			!m.IsDir() && m.Perm()&^0o600 != 0:
			rel, _ := filepath.Rel(root, p)
			bad = append(bad, rel+" "+m.Perm().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bad
}

// useAll makes a store write every kind of file it has: entries, a
// tombstone, commits, the git index, the index, a logged plan.
func useAll(t *testing.T, home string) {
	t.Helper()
	m, err := Open(t.Context(), Options{Home: home, Config: &Config{}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	res, err := m.Remember(t.Context(), []*mem.Entry{{Body: "the deploy runs on Fridays"}, {Body: "the database is postgres"}}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Forget(t.Context(), []string{res.Items[0].Entry.ID}, ForgetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Recall(t.Context(), Query{Text: "database"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Context(t.Context(), ContextRequest{Query: "database", Log: true}); err != nil {
		t.Fatal(err)
	}
}

// TestStoreIsPrivate: whatever the umask, every directory Mira makes in a
// store is 0700 and every file 0600 (git's objects 0400), as a password
// store's are: memories are nobody else's to read.
func TestStoreIsPrivate(t *testing.T) {
	for _, umask := range []int{0o022, 0o077, 0} {
		old := syscall.Umask(umask)
		home := filepath.Join(t.TempDir(), "home")
		useAll(t, home)
		syscall.Umask(old)
		if _, err := os.Stat(filepath.Join(home, "plans")); err != nil {
			t.Fatalf("umask %03o: no plan logged: %v", umask, err)
		}
		if bad := notPrivate(t, home); len(bad) > 0 {
			t.Errorf("umask %03o: readable by others:\n%s", umask, strings.Join(bad, "\n"))
		}
	}
}

// TestOldStoreMadePrivate: a store made open to everyone (as Mira once
// made them, or a copy) is made private when a command opens it, said
// once on stderr; the next command finds nothing to say.
func TestOldStoreMadePrivate(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	useAll(t, home)
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() {
			os.Chmod(p, 0o755)
		} else if d.Type().IsRegular() {
			os.Chmod(p, 0o644)
		}
		return nil
	})
	for i, want := range []int{1, 0} {
		var warnings []string
		m, err := Open(t.Context(), Options{Home: home, Existing: true, Config: &Config{}, Getenv: func(string) string { return "" },
			Warn: func(_ string, err error) { warnings = append(warnings, err.Error()) }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Recall(t.Context(), Query{Text: "database"}); err != nil {
			t.Fatal(err)
		}
		m.Close()
		n := 0
		for _, w := range warnings {
			if strings.Contains(w, "made the store private") && strings.Contains(w, home) {
				n++
			}
		}
		if n != want {
			t.Errorf("open %d: %d notices of the repair, want %d: %q", i+1, n, want, warnings)
		}
	}
	if bad := notPrivate(t, home); len(bad) > 0 {
		t.Errorf("still readable by others:\n%s", strings.Join(bad, "\n"))
	}
}
