package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestFinder looks ids and texts up in the vector rows: after a build, and
// after an update that changes, removes and adds entries (log records), by
// scanning for the first lookups and through maps for later ones.
func TestFinder(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "alpha text"})
	b := f.writeDoc(t, fdoc{id: "B", created: t0, text: "beta text"})
	c := f.writeDoc(t, fdoc{id: "C", created: t0, text: "gamma text"})
	twin := f.writeDoc(t, fdoc{id: "T", kind: "fact", created: t0, text: "alpha text"})
	mustOpen(t, f, opts(nil)).Close()
	dir := filepath.Join(f.root, indexDirName)

	type want struct {
		ids    map[string]string   // id → path; "" for none
		hashes map[string][]string // text → paths
	}
	check := func(name string, w want) {
		t.Helper()
		for _, fromTable := range []bool{false, true} {
			checkFinder(t, f, dir, name, fromTable, w.ids, w.hashes)
		}
	}
	check("built", want{
		ids:    map[string]string{"A": a, "B": b, "C": c, "T": twin, "X": ""},
		hashes: map[string][]string{"alpha text": {a, twin}, "beta text": {b}, "delta text": nil},
	})

	f.writeFile(t, b, fdoc{id: "B", created: t0, text: "beta text, changed"}.encode(), oldTime.Add(time.Minute))
	f.remove(t, c)
	d := f.writeDoc(t, fdoc{id: "D", created: t0, text: "delta text"})
	f.commit(b, c, d)
	mustOpen(t, f, opts(nil)).Close()
	check("updated", want{
		ids:    map[string]string{"A": a, "B": b, "C": "", "D": d},
		hashes: map[string][]string{"beta text": nil, "beta text, changed": {b}, "gamma text": nil, "delta text": {d}},
	})
}

// dropKeptRows makes the next Finder of this process read the files, as a
// writer's own process does.
func dropKeptRows() {
	rowsKept.Lock()
	rowsKept.vs = nil
	rowsKept.Unlock()
}

// checkFinder checks a Finder's answers: ids (id → path, "" for none) and
// hashes (text → paths). With fromTable the rows kept in this process are
// dropped first, so that ByHash answers from the hash table and the log.
func checkFinder(t *testing.T, f *fakeSource, dir, name string, fromTable bool, ids map[string]string, hashes map[string][]string) {
	t.Helper()
	if fromTable {
		dropKeptRows()
		name += ", from the hash table"
	}
	fi, err := OpenFinder(dir)
	if err != nil {
		t.Fatalf("%s: OpenFinder: %v", name, err)
	}
	defer fi.Close()
	{
		if fromTable && fi.tab == nil {
			t.Fatalf("%s: no hash table", name)
		}
		// ByHash first: PathOf loads the rows.
		for text, ps := range hashes {
			got := fi.ByHash(fakeHash(text))
			ps = slices.Sorted(slices.Values(ps))
			if !slices.Equal(got, ps) {
				t.Errorf("%s: ByHash(%q) = %v, want %v", name, text, got, ps)
			}
		}
		head, _ := f.Head()
		if fi.Commit() != head {
			t.Errorf("%s: Commit() = %q, want %q", name, fi.Commit(), head)
		}
		// Twice over, so that the second round goes past scanLimit and
		// answers from the maps.
		for round := range 2 {
			for range scanLimit / 2 {
				for id, p := range ids {
					got, err := fi.PathOf(id)
					if p == "" {
						if !errors.Is(err, ErrNotFound) {
							t.Errorf("%s round %d: PathOf(%s) = %q, %v; want ErrNotFound", name, round, id, got, err)
						}
					} else if got != p || err != nil {
						t.Errorf("%s round %d: PathOf(%s) = %q, %v; want %s", name, round, id, got, err, p)
					}
				}
				for text, ps := range hashes {
					got := fi.ByHash(fakeHash(text))
					slices.Sort(got)
					slices.Sort(ps)
					if !slices.Equal(got, ps) {
						t.Errorf("%s round %d: ByHash(%q) = %v, want %v", name, round, text, got, ps)
					}
				}
			}
		}
	}
}

// TestFinderTakesNoLock: a writer holding the generation's bbolt lock (a
// server updating the index) does not make a Finder wait.
func TestFinderTakesNoLock(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "alpha text"})
	mustOpen(t, f, opts(nil)).Close()
	dir := filepath.Join(f.root, indexDirName)
	gen, err := readCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := lockFile(filepath.Join(dir, gen, lockName))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	done := make(chan error, 1)
	go func() {
		fi, err := OpenFinder(dir)
		if err == nil {
			var p string
			if p, err = fi.PathOf("A"); err == nil && p != a {
				err = errors.New("wrong path " + p)
			}
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(DefaultLockTimeout):
		t.Fatal("OpenFinder waited for the writer's lock")
	}
}

// TestFinderWithoutIndex: no index, and a damaged one, are errors the
// caller can tell apart.
func TestFinderWithoutIndex(t *testing.T) {
	f := newFake(t)
	dir := filepath.Join(f.root, indexDirName)
	if _, err := OpenFinder(dir); !errors.Is(err, ErrNoIndex) {
		t.Fatalf("OpenFinder without an index: %v, want ErrNoIndex", err)
	}
	f.writeDoc(t, fdoc{id: "A", created: t0, text: "alpha text"})
	mustOpen(t, f, opts(nil)).Close()
	gen, err := readCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, gen, damagedMark), []byte("test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFinder(dir); err == nil || errors.Is(err, ErrNoIndex) {
		t.Fatalf("OpenFinder of a damaged index: %v, want a damage error", err)
	}
}

// TestFinderFromKeptRows: in the process that last updated the index, a
// Finder answers from the rows that update kept, as it would from the
// files, and later updates do not change what it found.
func TestFinderFromKeptRows(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "alpha text"})
	mustOpen(t, f, opts(nil)).Close()
	b := f.writeDoc(t, fdoc{id: "B", created: t0, text: "beta text"})
	genDir, m := openedMeta(t, f)
	if keptRows(genDir, m) == nil {
		t.Fatal("the update kept no rows")
	}
	fi, err := OpenFinder(filepath.Join(f.root, indexDirName))
	if err != nil {
		t.Fatal(err)
	}
	f.remove(t, b)
	mustOpen(t, f, opts(nil)).Close()
	for id, want := range map[string]string{"A": a, "B": b} {
		if got, err := fi.PathOf(id); got != want || err != nil {
			t.Errorf("PathOf(%s) = %q, %v; want %s", id, got, err, want)
		}
	}
	if got := fi.ByHash(fakeHash("beta text")); !slices.Equal(got, []string{b}) {
		t.Errorf("ByHash(beta) = %v, want [%s]", got, b)
	}
}

// openedMeta opens (and so updates) the index and returns its generation
// and the meta the open left.
func openedMeta(t *testing.T, f *fakeSource) (string, meta) {
	t.Helper()
	ix := mustOpen(t, f, opts(nil))
	genDir := ix.gen
	ix.Close()
	m, err := readMeta(genDir)
	if err != nil {
		t.Fatal(err)
	}
	return genDir, m
}

// TestFinderDuringBatch: while a batch has taken the kept rows to change
// them, a writer's Finder still answers from the kept rows, as they were,
// without reading the files.
func TestFinderDuringBatch(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "alpha text"})
	f.writeDoc(t, fdoc{id: "B", created: t0, text: "beta text"})
	mustOpen(t, f, opts(nil)).Close()
	c := f.writeDoc(t, fdoc{id: "C", created: t0, text: "gamma text"})
	genDir, m := openedMeta(t, f) // an update: its rows are kept
	dir := filepath.Join(f.root, indexDirName)

	taken := takeRows(genDir, m)
	if taken == nil {
		t.Fatal("no rows kept after an update")
	}
	taken.del(a) // the batch's changes, not yet written
	base, _ := vecFiles(genDir, m.VecSeq)
	if err := os.Truncate(base, 10); err != nil { // no read of the files would do
		t.Fatal(err)
	}
	fi, err := OpenFinder(dir)
	if err != nil {
		t.Fatalf("OpenFinder while a batch has the rows: %v", err)
	}
	for id, want := range map[string]string{"A": a, "C": c} {
		if got, err := fi.PathOf(id); got != want || err != nil {
			t.Errorf("PathOf(%s) = %q, %v; want %s", id, got, err, want)
		}
	}
	if got := fi.ByHash(fakeHash("alpha text")); !slices.Equal(got, []string{a}) {
		t.Errorf("ByHash(alpha text) = %v, want [%s]", got, a)
	}
}

// TestFinderHashTableDamaged: a hash table that is torn (a crash while it
// was written, with no rename to make it whole), damaged, or made for
// another base file is not believed: the Finder makes it again and answers
// as the rows do.
func TestFinderHashTableDamaged(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "alpha text"})
	b := f.writeDoc(t, fdoc{id: "B", created: t0, text: "beta text"})
	mustOpen(t, f, opts(nil)).Close()
	dir := filepath.Join(f.root, indexDirName)
	genDir, m := openedMeta(t, f)
	want := map[string][]string{"alpha text": {a}, "beta text": {b}, "gamma text": nil}
	checkFinder(t, f, dir, "first", true, map[string]string{"A": a}, want)
	name := hashTableName(genDir, m.VecSeq)
	good, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("no table written: %v", err)
	}
	other := append([]byte(nil), good...)
	other[12]++ // the sequence number of another base file
	binary.LittleEndian.PutUint32(other[len(other)-4:], crc32.Checksum(other[:len(other)-4], castagnoli))
	flipped := append([]byte(nil), good...)
	flipped[hashHeader+3] ^= 0x55 // a hash prefix: a lookup would miss
	for what, data := range map[string][]byte{
		"torn":         good[:len(good)-7],
		"empty":        nil,
		"damaged":      flipped,
		"another base": other,
	} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
		checkFinder(t, f, dir, what, true, map[string]string{"A": a}, want)
		if got, err := os.ReadFile(name); err != nil || !bytes.Equal(got, good) {
			t.Errorf("%s: the table was not made again", what)
		}
	}
	// A table of an older base file is removed with the new one made.
	old := hashTableName(genDir, m.VecSeq+7)
	if err := os.WriteFile(old, good, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(name)
	checkFinder(t, f, dir, "again", true, map[string]string{"A": a}, want)
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the table of another base file stays: %v", err)
	}
}
