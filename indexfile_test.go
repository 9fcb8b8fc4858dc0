package mira

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miramem/mira/mem"
)

// TestIndexNotADirectory: a file where the index directory belongs (a
// stray copy, a hand mistake) is removed with one warning, by a recall as
// by a rebuild, and the index is made again: .index is disposable.
func TestIndexNotADirectory(t *testing.T) {
	for _, how := range []string{"recall", "rebuild"} {
		t.Run(how, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			var warnings []string
			m, err := Open(t.Context(), Options{Home: home, Config: &Config{}, Getenv: func(string) string { return "" },
				Warn: func(p string, err error) { warnings = append(warnings, p+": "+err.Error()) }})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if _, err := m.Remember(t.Context(), []*mem.Entry{{Body: "the deploy runs on Fridays"}}, RememberOptions{}); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(home, ".index")
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, []byte("not an index\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				switch how {
				case "recall":
					recs, err := m.Recall(t.Context(), Query{Text: "deploy"})
					if err != nil || len(recs) != 1 {
						t.Fatalf("recall: %d records, %v", len(recs), err)
					}
				case "rebuild":
					if _, err := m.RebuildIndex(t.Context()); err != nil {
						t.Fatalf("rebuild: %v", err)
					}
				}
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				t.Errorf(".index after a %s: %v, %v; want a directory", how, fi, err)
			}
			n := 0
			for _, w := range warnings {
				if strings.Contains(w, "not a directory") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d warnings of the removal, want 1: %q", n, warnings)
			}
		})
	}
}
