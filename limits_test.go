package mira

import (
	"errors"
	"fmt"
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

// TestRememberLimits: every field of a memory is bounded, whatever front
// end it comes through, and the error names the field and the limit;
// nothing is written.
func TestRememberLimits(t *testing.T) {
	m := open(t, false)
	tags := make([]string, 60000)
	for i := range tags {
		tags[i] = fmt.Sprint("t", i)
	}
	for _, tc := range []struct {
		name string
		e    *mem.Entry
		want string
	}{
		{"a 3 MB tag", &mem.Entry{Body: "x", Tags: []string{strings.Repeat("x", 3<<20)}}, `field "tags[0]": 3.0 MiB, more than the limit of 128 bytes`},
		{"60,000 tags", &mem.Entry{Body: "x", Tags: tags}, `field "tags": 60000 tags, more than the limit of 64 tags`},
		{"a 5 MB project", &mem.Entry{Body: "x", Project: strings.Repeat("p", 5<<20)}, `field "project": 5.0 MiB`},
		{"a 5 MB other field", &mem.Entry{Body: "x", Extra: map[string]any{"ticket": strings.Repeat("p", 5<<20)}}, `field "ticket"`},
	} {
		_, err := m.Remember(t.Context(), []*mem.Entry{tc.e}, RememberOptions{})
		var inv *InvalidError
		if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Remember = %.200v, want an *InvalidError saying %q", tc.name, err, tc.want)
		}
	}
	if head, _ := m.st.Head(); head != "" {
		if out := gitOut(t, m.Root(), "log", "--oneline"); strings.Count(out, "\n") > 1 {
			t.Errorf("refused memories made commits:\n%s", out)
		}
	}
	// The configuration may not allow a text an entry file cannot hold.
	if _, err := ParseConfig([]byte("remember:\n  max_bytes: 100000000\n")); err == nil || !strings.Contains(err.Error(), "remember.max_bytes") {
		t.Errorf("ParseConfig(max_bytes 100 MB) = %v", err)
	}
	if _, err := m.Remember(t.Context(), []*mem.Entry{{Body: strings.Repeat("a line\n", 3<<20)}}, RememberOptions{MaxBytes: 1 << 30}); err == nil {
		t.Errorf("Remember(21 MB) under a 1 GiB MaxBytes succeeded")
	}
}

// TestHandMadeFileBeyondLimits: a file made by hand with a 3 MB tag or
// 60,000 tags is reported with its path and skipped by the index and by
// recall; the rest of the store answers as before.
func TestHandMadeFileBeyondLimits(t *testing.T) {
	var warnings []string
	m, err := Open(t.Context(), Options{Home: filepath.Join(t.TempDir(), "home"), Config: &Config{},
		Getenv: func(string) string { return "" },
		Warn:   func(path string, err error) { warnings = append(warnings, path+": "+err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Remember(t.Context(), []*mem.Entry{{Body: "a small note about log rotation"}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	tags := make([]string, 60000)
	for i := range tags {
		tags[i] = fmt.Sprint("t", i)
	}
	files := map[string]string{
		"entries/global/notes/20260101T000000Z__01HUGETAG000000000000000000.md": "---\ntags: [\"" + strings.Repeat("x", 3<<20) + "\"]\n---\nrotation of the huge logs\n",
		"entries/global/notes/20260101T000001Z__01MANYTAGS00000000000000000.md": "---\ntags: [" + strings.Join(tags, ", ") + "]\n---\nrotation of the many logs\n",
	}
	for rel, data := range files {
		if err := os.WriteFile(filepath.Join(m.Root(), rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := m.Recall(t.Context(), Query{Text: "rotation logs", K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || !strings.Contains(recs[0].Text, "small note") {
		t.Errorf("recall = %d records, want the small note alone", len(recs))
	}
	for rel := range files {
		found := false
		for _, w := range warnings {
			found = found || strings.Contains(w, rel+": field \"tags") && strings.Contains(w, "more than the limit of")
		}
		if !found {
			t.Errorf("no warning names %s: %.300q", rel, warnings)
		}
	}
}
