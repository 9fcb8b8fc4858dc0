//go:build unix

package mira

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/miramem/mira/mem"
)

// TestRecordCache: a record is kept while its file is unchanged, and read
// again after any change, even one that keeps the size and puts the
// modification time back; a file changed just now is not kept.
func TestRecordCache(t *testing.T) {
	st, err := mem.Open(t.Context(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rel := "entries/global/notes/20260101T000000Z__01JCACHE00000000000000000.md"
	path := filepath.Join(st.Root, rel)
	write := func(body string, mtime time.Time) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("---\nkind: note\ntags: [a]\n---\n"+body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write("first text", old)
	var c RecordCache
	text := func() string {
		t.Helper()
		r, err := c.read(st, rel)
		if err != nil {
			t.Fatal(err)
		}
		return r.Text
	}
	if got := text(); got != "first text" {
		t.Fatalf("first read: %q", got)
	}
	if len(c.m) != 0 {
		t.Fatal("a file changed just now was kept")
	}

	defer func(w time.Duration) { racyWindow = w }(racyWindow)
	racyWindow = 0
	text()
	if len(c.m) != 1 {
		t.Fatal("an unchanged file was not kept")
	}
	if got := text(); got != "first text" {
		t.Errorf("kept record: %q", got)
	}
	// Same size, modification time put back: the status-change time
	// still tells.
	time.Sleep(10 * time.Millisecond)
	write("other text", old)
	if got := text(); got != "other text" {
		t.Errorf("after a same-size rewrite: %q, want the new text", got)
	}
	os.Remove(path)
	if _, err := c.read(st, rel); err == nil {
		t.Error("a removed file was read from the cache")
	}
	var none *RecordCache
	write("third text", old)
	if r, err := none.read(st, rel); err != nil || r.Text != "third text" {
		t.Errorf("without a cache: %q, %v", r.Text, err)
	}
}
