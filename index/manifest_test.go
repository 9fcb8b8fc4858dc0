package index

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestManifestKept: the manifest a process wrote is handed to its next
// reader without parsing, once; a file another writer put in its place is
// read from disk.
func TestManifestKept(t *testing.T) {
	dir := t.TempDir()
	man := manifest{"entries/a.md": {size: 1, mtime: 2, id: "A"}}
	if err := writeManifest(dir, man); err != nil {
		t.Fatal(err)
	}
	same := func(a, b manifest) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	got, err := readManifest(dir)
	if err != nil || !same(got, man) {
		t.Fatalf("first read after the write: %v, kept map %v", err, same(got, man))
	}
	again, err := readManifest(dir)
	if err != nil || same(again, man) || again["entries/a.md"].id != "A" {
		t.Fatalf("second read: %v, kept map handed out twice: %v", err, same(again, man))
	}

	if err := writeManifest(dir, man); err != nil {
		t.Fatal(err)
	}
	// Another process replaces the file, as writeManifest does.
	other := manifest{"entries/b.md": {size: 3, mtime: 4, id: "B"}}
	tmp := filepath.Join(dir, "other.tmp")
	if err := os.WriteFile(tmp, formatManifest(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, manifestName)); err != nil {
		t.Fatal(err)
	}
	got, err = readManifest(dir)
	if err != nil || same(got, man) || got["entries/b.md"].id != "B" || len(got) != 1 {
		t.Fatalf("read after another writer: %v, %v", err, got)
	}
}

// TestRowsKept: the rows an update keeps for the next one are the rows a
// fresh read of the files gives, update after update (adds, changes,
// removals), and the next update takes them.
func TestRowsKept(t *testing.T) {
	f := newFake(t)
	var paths []string
	for i := range 5 {
		paths = append(paths, f.writeDoc(t, fdoc{id: fmt.Sprintf("D%d", i), created: t0.Add(time.Duration(i) * time.Minute), text: fmt.Sprintf("document number %d", i)}))
	}
	mustOpen(t, f, opts(nil)).Close()
	live := func(vs *vecStore) []string {
		var out []string
		for i := range vs.rows {
			r := &vs.rows[i]
			if !r.dead {
				out = append(out, fmt.Sprintf("%s %s %s %x %v", r.path, r.id, r.content, r.hash, r.vec >= 0))
			}
		}
		slices.Sort(out)
		return out
	}
	for step := range 6 {
		switch step % 3 {
		case 0:
			paths = append(paths, f.writeDoc(t, fdoc{id: fmt.Sprintf("N%d", step), created: t0.Add(time.Hour), text: fmt.Sprintf("new document %d", step)}))
		case 1:
			f.writeFile(t, paths[1], fdoc{id: "D1", created: t0.Add(time.Minute), text: fmt.Sprintf("changed %d", step)}.encode(), oldTime.Add(time.Duration(step)*time.Minute))
		case 2:
			f.remove(t, paths[len(paths)-1])
			paths = paths[:len(paths)-1]
		}
		genDir, m := openedMeta(t, f)
		rowsKept.Lock()
		kept := rowsKept.vs
		key := rowsKept.genDir == genDir && rowsKept.seq == m.VecSeq && rowsKept.log == m.VecLog
		rowsKept.Unlock()
		if kept == nil || !key {
			t.Fatalf("step %d: no rows kept for the meta written (%v)", step, kept != nil)
		}
		disk, err := loadVecStore(genDir, m, true)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := live(kept), live(disk); !slices.Equal(got, want) {
			t.Fatalf("step %d: kept rows\n%v\nthe files' rows\n%v", step, got, want)
		}
	}
}
