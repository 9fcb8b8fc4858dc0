package code

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// indexSections returns where each part of an index file's payload lies:
// the parts decoded on opening and those decoded lazily.
func indexSections(t *testing.T, b []byte) map[string][2]int {
	t.Helper()
	out := map[string][2]int{}
	d := &decoder{b: b[headerSize : len(b)-checksumSize]}
	at := func() int { return len(b) - checksumSize - len(d.b) }
	d.str()
	d.str()
	d.int()
	s0 := at()
	d.names = d.strings()
	out["string table"] = [2]int{s0, at()}
	start := at()
	nf := int(d.uint())
	for range nf {
		d.head()
		if d.uint() == 1 {
			d.uint()
			d.uint()
			d.uint()
		}
	}
	out["file heads"] = [2]int{start, at()}
	for _, name := range []string{"bodies", "history", "rank"} {
		n := int(d.uint())
		out[name] = [2]int{at(), at() + n}
		d.raw(n)
	}
	if d.err != nil || len(d.b) != 0 {
		t.Fatalf("walking the payload: %v, %d bytes left", d.err, len(d.b))
	}
	r := out["rank"]
	d = &decoder{b: b[r[0]:r[1]]}
	d.raw(len("mirarank"))
	for range 9 { // version, 4 counts, the symbols' 4 length sums
		d.uint()
	}
	for _, name := range []string{"rank names", "rank terms", "rank term counts", "rank postings", "rank files", "rank symbols", "rank lists", "rank reverse lists"} {
		n := int(d.uint())
		s := r[1] - len(d.b)
		out[name] = [2]int{s, s + n}
		d.raw(n)
	}
	if d.err != nil || len(d.b) != 0 {
		t.Fatalf("walking the rank model: %v, %d bytes left", d.err, len(d.b))
	}
	for name, s := range out {
		if s[1] <= s[0] {
			t.Fatalf("section %s is empty", name)
		}
	}
	return out
}

// A byte flipped in any part of the index file, those decoded on opening
// and those decoded only when a query needs them, is caught by the
// checksum on opening: the index is rebuilt, not trusted.
func TestDamagedSectionRebuilt(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	update(t, open(t, root, dir, nil))
	name := filepath.Join(dir, indexName)
	good, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range indexSections(t, good) {
		b := bytes.Clone(good)
		b[(s[0]+s[1])/2] ^= 0x21
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var w warnings
		ix := open(t, root, dir, &w)
		if n := ix.Status().Files; n != 0 {
			t.Errorf("%s: damaged index trusted: %d files", what, n)
		}
		if msgs := w.list(); len(msgs) != 1 || !strings.Contains(msgs[0], "rebuilding the index") || !strings.Contains(msgs[0], "checksum") {
			t.Errorf("%s: warnings %q", what, msgs)
		}
		if s := update(t, ix); s.Added == 0 {
			t.Errorf("%s: nothing rebuilt: %+v", what, s)
		}
		if _, err := ix.Card("Greet", false); err != nil {
			t.Errorf("%s: after rebuild: %v", what, err)
		}
	}
}

// Damage the checksum misses (the checksum made again over it) never
// crashes the parts decoded lazily: bytes all through every part flipped
// in turn, the index is opened, queried and updated; damage found is
// reported, and the next update rebuilds the index.
func TestDamageMissedByChecksum(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	update(t, open(t, root, dir, nil))
	name := filepath.Join(dir, indexName)
	good, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	secs := indexSections(t, good)
	for what, s := range secs {
		if what == "rank" {
			continue // its parts are walked one by one
		}
		step := max(1, (s[1]-s[0])/40) // about 40 bytes of each
		found := 0
		for i := s[0]; i < s[1]; i += step {
			b := bytes.Clone(good)
			b[i] ^= 0x5a
			end := len(b) - checksumSize
			binary.LittleEndian.PutUint32(b[end:], crc32.ChecksumIEEE(b[:end]))
			if err := os.WriteFile(name, b, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, journalName))
			var w warnings
			ix := open(t, root, dir, &w)
			ix.Status()
			ix.Touchpoints(Query{Text: "greet the name loudly", Explain: true})
			ix.Files(Query{Text: "application helper", Explain: true})
			ix.Symbols("Greet", 5)
			ix.Symbols("helper run", 5)
			ix.Card("Greet", true)
			ix.Callers("Greet", 2)
			ix.Map(0, nil)
			if _, err := ix.Update(context.Background()); err != nil {
				t.Fatalf("%s, byte %d: update: %v", what, i, err)
			}
			if len(w.list()) > 0 {
				found++
			}
			ix.Close()
		}
		t.Logf("%s: %d bytes, damage reported for %d of the flips", what, s[1]-s[0], found)
	}
	// The index is whole again after the last round's update.
	os.WriteFile(name, good, 0o600)
	var w warnings
	ix := open(t, root, dir, &w)
	update(t, ix)
	if _, err := ix.Card("Greet", false); err != nil {
		t.Errorf("after the damage: %v", err)
	}
}

// A string table that does not decode makes the payload an error, not a
// crash of the file heads that name its strings.
func TestDamagedStringTable(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	update(t, open(t, root, dir, nil))
	good, err := os.ReadFile(filepath.Join(dir, indexName))
	if err != nil {
		t.Fatal(err)
	}
	s := indexSections(t, good)["string table"]
	payload := bytes.Clone(good[headerSize : len(good)-checksumSize])
	// The table's first offset, which must be 0, after its count and
	// length.
	at := s[0] - headerSize
	d := &decoder{b: payload[at:]}
	d.uint()
	d.uint()
	first := len(payload) - len(d.b)
	payload[first] = 1
	if _, err := decodePayload(payload); err == nil {
		t.Fatal("damaged string table decoded")
	}
}

// Damage a query meets in a part decoded lazily (here, one file's body)
// makes the next update rebuild the index rather than build on it.
func TestLazyDamageRebuiltByUpdate(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	update(t, open(t, root, dir, nil))
	var w warnings
	ix := open(t, root, dir, &w)
	ix.mu.RLock()
	st := ix.st
	ix.mu.RUnlock()
	if st.bodies == nil {
		t.Fatal("no lazily decoded bodies")
	}
	st.bodies.fail(errors.New("a body that does not decode"))
	s := update(t, ix)
	if msgs := w.list(); len(msgs) != 1 || !strings.Contains(msgs[0], "rebuilding the index") || !strings.Contains(msgs[0], "does not decode") {
		t.Errorf("warnings %q", msgs)
	}
	if s.Added == 0 {
		t.Errorf("nothing rebuilt: %+v", s)
	}
	if _, err := ix.Card("Greet", false); err != nil {
		t.Errorf("after rebuild: %v", err)
	}
	var w2 warnings
	if open(t, root, dir, &w2).Status().Files == 0 || len(w2.list()) != 0 {
		t.Errorf("rebuilt index not usable: %q", w2.list())
	}
}
