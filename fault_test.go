package mira

import (
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/miramem/mira/mem"
)

// TestDamagedIndex: whatever happens to any file under .index/ (cut
// short, zeroed, overwritten with random bytes, deleted), the next recall
// answers as before, and remember and context work. The index is derived
// data; damage costs a rebuild and a warning, never a command.
func TestDamagedIndex(t *testing.T) {
	root := filepath.Join(t.TempDir(), "home")
	fx := newFaultStore(t, root)
	open, ids, es := fx.open, fx.ids, fx.entries
	m := open(root)
	want := ids(m)
	m.Close()
	pristine := filepath.Join(root, ".index")
	var files []string
	filepath.WalkDir(pristine, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(pristine, p)
			files = append(files, rel)
		}
		return nil
	})
	if len(files) < 5 {
		t.Fatalf("index files: %v", files)
	}
	damage := map[string]func(p string) error{
		"truncate": func(p string) error { return os.Truncate(p, 0) },
		"half": func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, fi.Size()/2)
		},
		"zero": func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.WriteFile(p, make([]byte, fi.Size()), 0o644)
		},
		"random": func(p string) error {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			b := make([]byte, fi.Size())
			rand.Read(b)
			return os.WriteFile(p, b, 0o644)
		},
		"pages": func(p string) error { // random bytes over the second and third 4 KiB page
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			b := make([]byte, 8192)
			rand.Read(b)
			_, err = f.WriteAt(b, 4096)
			return err
		},
		"delete": os.Remove,
	}
	kinds := []string{"truncate", "half", "zero", "random", "pages", "delete"}
	for _, file := range files {
		for _, kind := range kinds {
			t.Run(strings.ReplaceAll(file, "/", "_")+"/"+kind, func(t *testing.T) {
				// A copy of the store with its index, one file damaged.
				home := filepath.Join(t.TempDir(), "home")
				if err := os.CopyFS(home, os.DirFS(root)); err != nil {
					t.Fatal(err)
				}
				// The copy is as the umask made it: private, as Mira keeps a store.
				if _, err := mem.MakePrivate(home); err != nil {
					t.Fatal(err)
				}
				if err := damage[kind](filepath.Join(home, ".index", file)); err != nil {
					t.Fatal(err)
				}
				fx.warnings = nil
				m := open(home)
				defer m.Close()
				if got := ids(m); !slices.Equal(got, want) {
					t.Errorf("recall after %s of %s = %v, want %v", kind, file, got, want)
				}
				if len(fx.warnings) > 1 {
					t.Errorf("more than one warning: %q", fx.warnings)
				}
				if _, err := m.Context(t.Context(), ContextRequest{Query: "cache"}); err != nil {
					t.Errorf("context: %v", err)
				}
				if _, err := m.Remember(t.Context(), []*mem.Entry{{Body: "a note after " + kind + " of " + file}}, RememberOptions{}); err != nil {
					t.Errorf("remember: %v", err)
				}
				if _, err := m.Forget(t.Context(), []string{es[0].ID}, ForgetOptions{DryRun: true}); err != nil {
					t.Errorf("forget: %v", err)
				}
			})
		}
	}
}

// TestDamagedRowsAtSearch: damage that only a search finds (a byte of the
// vector file's rows, whose checksum Open does not read) costs that
// search a rebuild, not an error: the recall answers as before, with one
// warning.
func TestDamagedRowsAtSearch(t *testing.T) {
	root := filepath.Join(t.TempDir(), "home")
	fx := newFaultStore(t, root)
	ids := fx.ids
	m := fx.open(root)
	want := ids(m)
	m.Close()
	cur, err := os.ReadFile(filepath.Join(root, ".index", "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ".index", strings.TrimSpace(string(cur)), "vectors-1")
	b, err := os.ReadFile(p)
	if err != nil || len(b) < 1000 {
		t.Fatalf("vector file: %d bytes, %v", len(b), err)
	}
	b[300] ^= 0x55 // past the header, within the rows
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fx.warnings = nil
	m = fx.open(root)
	defer m.Close()
	if got := ids(m); !slices.Equal(got, want) {
		t.Errorf("recall = %v, want %v", got, want)
	}
	if len(fx.warnings) != 1 {
		t.Errorf("warnings %q, want one", fx.warnings)
	}
}

// faultStore is a store of 60 memories for the damage tests: how to open
// it (or a copy) collecting warnings, and the ids a fixed recall returns.
type faultStore struct {
	warnings []string
	entries  []*mem.Entry
	open     func(root string) *Memory
	ids      func(*Memory) []string
}

func newFaultStore(t *testing.T, root string) *faultStore {
	fx := &faultStore{}
	fx.open = func(root string) *Memory {
		t.Helper()
		m, err := Open(t.Context(), Options{Home: root, Config: &Config{}, Getenv: func(string) string { return "" },
			Warn: func(path string, err error) { fx.warnings = append(fx.warnings, path+": "+err.Error()) }})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	fx.ids = func(m *Memory) []string {
		t.Helper()
		recs, err := m.Recall(t.Context(), Query{Text: "Memcached cache topic 3", K: 5})
		if err != nil {
			t.Fatalf("recall: %v", err)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r.ID)
		}
		return out
	}
	for i := range 60 {
		fx.entries = append(fx.entries, &mem.Entry{Body: fmt.Sprintf("memory %d about topic %d: the cache layer uses %s", i, i%7, []string{"Redis", "Memcached", "an LRU map"}[i%3])})
	}
	m := fx.open(root)
	defer m.Close()
	if _, err := m.Remember(t.Context(), fx.entries, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	return fx
}
