package mira

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/miramem/mira/mem"
)

// TestMemorySizeLimit: a memory larger than remember.max_bytes is refused
// naming the limit and what to do instead; the configuration moves it.
func TestMemorySizeLimit(t *testing.T) {
	m := open(t, false)
	big := strings.Repeat("a line of a log file\n", 4000) // 84 KB
	_, err := m.Remember(t.Context(), []*mem.Entry{{Body: big}}, RememberOptions{})
	var inv *InvalidError
	if !errors.As(err, &inv) || inv.Field != "text" || !strings.Contains(err.Error(), "remember.max_bytes") || !strings.Contains(err.Error(), "file of its own") {
		t.Fatalf("Remember(84 KB) = %v", err)
	}
	if err := Check([]*mem.Entry{{Body: big}}, RememberOptions{}); err == nil {
		t.Errorf("Check(84 KB) passed")
	}
	if _, err := m.Remember(t.Context(), []*mem.Entry{{Body: big}}, RememberOptions{MaxBytes: 100 << 10}); err != nil {
		t.Errorf("Remember(84 KB) under a 100 KiB limit = %v", err)
	}
	m.cfg.Remember.MaxBytes = 200 << 10
	if _, err := m.Remember(t.Context(), []*mem.Entry{{Body: big + "more"}}, RememberOptions{}); err != nil {
		t.Errorf("Remember(84 KB) under remember.max_bytes 200 KiB = %v", err)
	}
}

// TestHugeHandMadeFile: a file made by hand far beyond the limit is
// searched by its beginning, recalled whole, and costs the index only a
// bounded part of it.
func TestHugeHandMadeFile(t *testing.T) {
	m := open(t, false)
	if _, err := m.Remember(t.Context(), []*mem.Entry{{Body: "a small note about logs"}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	body := "rotation of the huge logs\n" + strings.Repeat("é filler line\n", 200000) // ~3 MB
	rel := "entries/global/notes/20260101T000000Z__01HUGE0000000000000000000.md"
	if err := os.WriteFile(filepath.Join(m.Root(), rel), []byte("---\nkind: note\n---\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := m.Recall(t.Context(), Query{Text: "rotation huge logs", K: 2})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		if strings.HasPrefix(r.Text, "rotation of the huge logs") && len(r.Text) >= len(body)-2 {
			found = true
		}
	}
	if !found {
		t.Fatalf("recall does not return the huge file whole: %d records", len(recs))
	}
	d, err := newSource(m.st).Load(rel)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Text) > maxIndexedBytes || !utf8.ValidString(d.Text) {
		t.Errorf("indexed %d bytes (valid UTF-8: %v), want at most %d", len(d.Text), utf8.ValidString(d.Text), maxIndexedBytes)
	}
	if _, err := m.Recall(t.Context(), Query{Text: "x", K: MaxK + 1}); err == nil {
		t.Errorf("k above MaxK was accepted")
	}
}
