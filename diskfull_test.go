package mira

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/mem"
)

// checkDiskFull: on a store whose disk is full, recalls and contexts
// still answer from the index as it is, with one warning, and a remember
// fails saying why and leaves the store as it was. full makes the disk
// full; nothing may be written after it.
func checkDiskFull(t *testing.T, home string, full func()) {
	t.Helper()
	m, err := Open(t.Context(), Options{Home: home, Config: &Config{}, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Remember(t.Context(), []*mem.Entry{{Body: "the deploy runs on Fridays"}, {Body: "the database is postgres", Pin: mem.PinSticky}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Recall(t.Context(), Query{Text: "deploy"}); err != nil {
		t.Fatal(err)
	}
	// A change the index has not taken in yet: taking it in would write.
	if _, err := m.Remember(t.Context(), []*mem.Entry{{Body: "the deploy needs a review"}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	head := gitOut(t, home, "rev-parse", "HEAD")
	full()

	var warnings []string
	m, err = Open(t.Context(), Options{Home: home, Existing: true, Config: &Config{}, Getenv: func(string) string { return "" },
		Warn: func(_ string, err error) { warnings = append(warnings, err.Error()) }})
	if err != nil {
		t.Fatalf("open on a full disk: %v", err)
	}
	defer m.Close()
	for range 2 {
		recs, err := m.Recall(t.Context(), Query{Text: "deploy Fridays"})
		if err != nil || len(recs) == 0 || !strings.Contains(recs[0].Text, "Fridays") {
			t.Fatalf("recall on a full disk: %v, %v", recs, err)
		}
	}
	p, err := m.Context(t.Context(), ContextRequest{Query: "deploy"})
	if err != nil || !strings.Contains(p.Prompt(), "postgres") {
		t.Fatalf("context on a full disk: %v", err)
	}
	n := 0
	for _, w := range warnings {
		if strings.Contains(w, "disk is full") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d warnings of the full disk, want 1: %q", n, warnings)
	}
	_, err = m.Remember(t.Context(), []*mem.Entry{{Body: "a memory with no room"}}, RememberOptions{})
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("remember on a full disk: %v, want it to say the disk is full", err)
	}
	if after := gitOut(t, home, "rev-parse", "HEAD"); after != head {
		t.Errorf("HEAD moved on a full disk: %s then %s", head, after)
	}
	if st := gitOut(t, home, "--no-optional-locks", "status", "--porcelain"); st != "" {
		t.Errorf("the store is not clean after a failed remember:\n%s", st)
	}
	filepath.WalkDir(filepath.Join(home, "entries"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

// TestDiskFull fills the disk through atomicfile.Fail, everywhere.
func TestDiskFull(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	t.Cleanup(func() { atomicfile.Fail = nil })
	checkDiskFull(t, home, func() {
		atomicfile.Fail = func(string) error { return syscall.ENOSPC }
	})
}
