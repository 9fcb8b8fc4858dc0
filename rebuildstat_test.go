package mira

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/mem"
)

// TestRebuildStatsAsItReads: a rebuild lists the entry files without
// stating them and takes each one's size and time from the file it reads,
// a broken one's too: the update after it finds every file as the index
// has it, and reads none again.
func TestRebuildStatsAsItReads(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	var warnings []string
	m, err := Open(t.Context(), Options{Home: home, Config: &Config{}, Getenv: func(string) string { return "" },
		Warn: func(p string, err error) { warnings = append(warnings, p+": "+err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var entries []*mem.Entry
	for i := range 40 { // more than the index loads one by one
		entries = append(entries, &mem.Entry{Body: fmt.Sprintf("note %d on the deploy of service %d", i, i%5)})
	}
	if _, err := m.Remember(t.Context(), entries, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.WalkDir(filepath.Join(home, "entries"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 40 {
		t.Fatalf("%d entry files, want 40", len(files))
	}
	if err := os.WriteFile(files[7], []byte("---\nid: [unclosed\n---\nbroken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Older than the racy window, so that nothing is read again for
	// being too recent; each its own time.
	for i, p := range files {
		at := time.Now().Add(-time.Hour - time.Duration(i)*time.Second)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	st, err := m.RebuildIndex(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 39 || st.Broken != 1 {
		t.Fatalf("rebuild: %+v, want 39 indexed and 1 broken", st)
	}
	m.Close()
	m, err = Open(t.Context(), Options{Home: home, Config: &Config{}, Getenv: func(string) string { return "" },
		Warn: func(p string, err error) { warnings = append(warnings, p+": "+err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	up, err := m.UpdateIndex(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if up.Indexed != 0 || up.Unchanged != 0 || up.Broken != 0 || up.Removed != 0 || up.Loaded != 0 {
		t.Errorf("update after the rebuild: %+v, want nothing read again", up)
	}
}
