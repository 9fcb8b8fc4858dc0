package index

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckBolt: a bolt file of a real index passes; one cut short, or
// with both meta pages overwritten, is refused before bbolt maps it.
func TestCheckBolt(t *testing.T) {
	f := newFake(t)
	f.writeDoc(t, fdoc{id: "A", created: t0, text: "sturdy walrus"})
	mustOpen(t, f, opts(nil)).Close()
	orig, err := os.ReadFile(filepath.Join(currentGen(t, f.root), "bleve", "store", "root.bolt"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "root.bolt")
	check := func(b []byte) error {
		t.Helper()
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return checkBolt(p)
	}
	if err := check(orig); err != nil {
		t.Fatalf("intact file: %v", err)
	}
	ps := os.Getpagesize()
	if len(orig) < 4*ps {
		t.Fatalf("root.bolt is %d bytes, want at least 4 pages", len(orig))
	}
	if err := check(orig[:len(orig)/2]); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("cut in half: %v, want cut short", err)
	}
	one := append([]byte(nil), orig...)
	copy(one[16:20], "XXXX") // the first meta's magic
	if err := check(one); err != nil {
		t.Errorf("one meta page damaged: %v, want accepted (bbolt uses the other)", err)
	}
	both := append([]byte(nil), one...)
	both[ps+16+30] ^= 0xff // the second meta's root bucket: its checksum fails
	if err := check(both); err == nil || !strings.Contains(err.Error(), "no valid meta") {
		t.Errorf("both meta pages damaged: %v, want no valid meta page", err)
	}
}
