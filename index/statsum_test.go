package index

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStatSum: a pass that matched the manifest leaves a summary; the next
// pass that sees the same files skips the manifest (a manifest garbled in
// place is not read), and one that sees a file changed in place, added or
// removed does not, and indexes the change.
func TestStatSum(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "alpha words"})
	b := f.writeDoc(t, fdoc{id: "B", created: t0, text: "beta words"})
	mustOpen(t, f, opts(nil)).Close()
	genDir, m := openedMeta(t, f) // a pass that matched
	if _, ok := readStatSum(genDir, m); !ok {
		t.Fatal("a pass that matched the manifest left no summary")
	}

	// The summary stands in for the manifest: garbled in place (same
	// size, same time), it is not read, and nothing is rebuilt.
	name := filepath.Join(genDir, manifestName)
	good, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(name)
	garble := func(data []byte) {
		t.Helper()
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	garble(bytes.Repeat([]byte{'#'}, len(good)))
	dropKeptManifest()
	ix := mustOpen(t, f, opts(nil))
	if ix.gen != genDir {
		t.Fatalf("the index was rebuilt (%s, was %s): the manifest was read", ix.gen, genDir)
	}
	ix.Close()
	garble(good)

	search := func(text string) []string {
		t.Helper()
		got := searchPaths(t, f, opts(nil), Query{Text: text})
		slices.Sort(got)
		return got
	}
	// Changed in place, the same size: seen.
	f.writeFile(t, a, fdoc{id: "A", created: t0, text: "gamma words"}.encode(), oldTime.Add(time.Minute))
	if got := search("gamma"); !slices.Equal(got, []string{a}) {
		t.Errorf("after a change in place, Search(gamma) = %v", got)
	}
	mustOpen(t, f, opts(nil)).Close() // a summary again
	// Added.
	c := f.writeDoc(t, fdoc{id: "C", created: t0, text: "delta words"})
	if got := search("delta"); !slices.Equal(got, []string{c}) {
		t.Errorf("after a file was added, Search(delta) = %v", got)
	}
	mustOpen(t, f, opts(nil)).Close()
	// Removed.
	f.remove(t, b)
	if got := search("beta"); len(got) != 0 {
		t.Errorf("after a file was removed, Search(beta) = %v", got)
	}
}

// TestStatSumDamaged: a summary that is torn or does not match the meta is
// not believed.
func TestStatSumDamaged(t *testing.T) {
	f := newFake(t)
	f.writeDoc(t, fdoc{id: "A", created: t0, text: "alpha words"})
	mustOpen(t, f, opts(nil)).Close()
	genDir, m := openedMeta(t, f)
	name := filepath.Join(genDir, statSumName)
	good, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for what, data := range map[string][]byte{
		"torn":    good[:len(good)/2],
		"changed": bytes.Replace(good, []byte(`"files":1`), []byte(`"files":2`), 1),
	} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok := readStatSum(genDir, m); ok {
			t.Errorf("%s summary believed", what)
		}
	}
	if err := os.WriteFile(name, good, 0o600); err != nil {
		t.Fatal(err)
	}
	m.Docs++
	if _, ok := readStatSum(genDir, m); ok {
		t.Error("a summary of another meta believed")
	}
}

// dropKeptManifest makes the next reader of a manifest in this process
// read the file.
func dropKeptManifest() {
	manifests.Lock()
	manifests.man = nil
	manifests.Unlock()
}

// TestStatFilesManyBatches: a directory of more entries than readDirBatch
// is listed whole, each file once, with its own path and stat data.
func TestStatFilesManyBatches(t *testing.T) {
	f := newFake(t)
	n := readDirBatch*2 + 17
	want := map[string]int64{}
	for i := range n {
		d := fdoc{id: fmt.Sprintf("N%05d", i), created: t0, text: strings.Repeat("x", i%50)}
		p := d.path()
		f.writeFile(t, p, d.encode(), oldTime.Add(time.Duration(i)*time.Second))
		want[p] = oldTime.Add(time.Duration(i) * time.Second).UnixNano()
	}
	got, err := StatFiles(f.root)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("StatFiles listed %d files, want %d", len(got), n)
	}
	for _, st := range got {
		mt, ok := want[st.Path]
		if !ok || mt != st.ModTime {
			t.Fatalf("StatFiles: %+v, want time %d (listed: %v)", st, mt, ok)
		}
		delete(want, st.Path)
	}
}
