//go:build linux

package mira

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miramem/mira/mem"
)

// TestReadOnlyStore: a store on a read-only mount (a snapshot, a
// colleague's store) answers recall and context through an index in the
// cache directory, says so once, and writes nothing into the store.
func TestReadOnlyStore(t *testing.T) {
	src := filepath.Join(t.TempDir(), "home")
	m, err := Open(t.Context(), Options{Home: src, Config: &Config{}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	var es []*mem.Entry
	for i := range 20 {
		es = append(es, &mem.Entry{Body: fmt.Sprintf("note %d: the deploy runs on %s", i, []string{"Fridays", "Mondays"}[i%2]), Pin: []string{"", mem.PinSticky}[i/19]})
	}
	if _, err := m.Remember(t.Context(), es, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	for _, withIndex := range []bool{false, true} {
		t.Run(fmt.Sprintf("index=%v", withIndex), func(t *testing.T) {
			if withIndex {
				m, _ := Open(t.Context(), Options{Home: src, Config: &Config{}, Getenv: func(string) string { return "" }})
				if _, err := m.Recall(t.Context(), Query{Text: "deploy"}); err != nil {
					t.Fatal(err)
				}
				m.Close()
			}
			ro := filepath.Join(t.TempDir(), "ro")
			os.Mkdir(ro, 0o755)
			if out, err := exec.Command("mount", "--bind", src, ro).CombinedOutput(); err != nil {
				t.Skipf("cannot bind-mount here (%v: %s); a read-only store is not tested", err, strings.TrimSpace(string(out)))
			}
			t.Cleanup(func() { exec.Command("umount", ro).Run() })
			if out, err := exec.Command("mount", "-o", "remount,bind,ro", ro).CombinedOutput(); err != nil {
				t.Skipf("cannot remount read-only (%v: %s)", err, strings.TrimSpace(string(out)))
			}
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			before := gitOut(t, src, "status", "--porcelain", "--ignored")
			var warnings []string
			m, err := Open(t.Context(), Options{Home: ro, Existing: true, Config: &Config{}, Getenv: func(string) string { return "" },
				Warn: func(p string, err error) { warnings = append(warnings, err.Error()) }})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for range 2 {
				recs, err := m.Recall(t.Context(), Query{Text: "deploy Fridays", K: 3})
				if err != nil || len(recs) != 3 || !strings.Contains(recs[0].Text, "Fridays") {
					t.Fatalf("recall on a read-only store = %v, %v", recs, err)
				}
			}
			p, err := m.Context(t.Context(), ContextRequest{Query: "deploy"})
			if err != nil || !strings.Contains(p.Prompt(), "note 19") {
				t.Errorf("context on a read-only store: %v\n%s", err, p.Prompt())
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "cannot be written") {
				t.Errorf("warnings = %q, want one saying the store cannot be written", warnings)
			}
			if after := gitOut(t, src, "status", "--porcelain", "--ignored"); after != before {
				t.Errorf("the store changed:\n%s\nthen\n%s", before, after)
			}
		})
	}
}

// TestReadOnlyStoreIndexNotShared: without a cache directory, the index of
// a read-only store goes under $TMPDIR in a directory of the user's own,
// 0700, not in one that every user shares and could plant an index in.
func TestReadOnlyStoreIndexNotShared(t *testing.T) {
	src := filepath.Join(t.TempDir(), "home")
	m, err := Open(t.Context(), Options{Home: src, Config: &Config{}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Remember(t.Context(), []*mem.Entry{{Body: "the deploy runs on Fridays"}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	ro := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(ro, 0o700)
	if out, err := exec.Command("mount", "--bind", src, ro).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount here (%v: %s); a read-only store is not tested", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("umount", ro).Run() })
	if out, err := exec.Command("mount", "-o", "remount,bind,ro", ro).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only (%v: %s)", err, strings.TrimSpace(string(out)))
	}
	tmp := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	t.Setenv("TMPDIR", tmp)
	m, err = Open(t.Context(), Options{Home: ro, Existing: true, Config: &Config{}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := m.Recall(t.Context(), Query{Text: "deploy"})
	m.Close()
	if err != nil || len(recs) != 1 {
		t.Fatalf("recall on a read-only store = %v, %v", recs, err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "mira")); err == nil {
		t.Errorf("the index went into %s, which every user shares", filepath.Join(tmp, "mira"))
	}
	own := filepath.Join(tmp, fmt.Sprintf("mira-%d", os.Geteuid()))
	if fi, err := os.Stat(own); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want the user's own directory, 0700", own, fi, err)
	}
	// Another user's directory there is refused, not searched.
	if err := os.Chown(own, 4242, 4242); err != nil {
		t.Fatalf("chown: %v", err)
	}
	if m, err := Open(t.Context(), Options{Home: ro, Existing: true, Config: &Config{}, Getenv: func(string) string { return "" }}); err == nil {
		m.Close()
		t.Error("an index directory of another user's was used")
	} else if !strings.Contains(err.Error(), "another user") {
		t.Errorf("open: %v, want it to say the directory is another user's", err)
	}
}
