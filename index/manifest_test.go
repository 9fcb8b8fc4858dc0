package index

import (
	"errors"
	"fmt"
	"maps"
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
	if err := writeManifest(dir, man, nil); err != nil {
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

	if err := writeManifest(dir, man, nil); err != nil {
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
	for step := range 8 {
		if step%2 == 1 {
			// A server that wrote nothing for a while lets go of them:
			// the next update reads them again.
			ForgetKept()
			rowsKept.Lock()
			rows := rowsKept.vs
			rowsKept.Unlock()
			manifests.Lock()
			man := manifests.man
			manifests.Unlock()
			if rows != nil || man != nil {
				t.Fatal("ForgetKept kept the rows or the manifest")
			}
		}
		paths = f.churn(t, paths, step, "D1", fmt.Sprintf("new document %d", step), fmt.Sprintf("changed %d", step))
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
		manifests.Lock()
		keptMan := maps.Clone(manifests.man)
		manifests.Unlock()
		if fresh := manifestOnDisk(t, genDir); !maps.Equal(keptMan, fresh) {
			t.Fatalf("step %d: kept manifest\n%v\nthe files'\n%v", step, keptMan, fresh)
		}
	}
}

// manifestOnDisk parses the manifest of genDir from its files, leaving
// what the process keeps alone.
func manifestOnDisk(t *testing.T, genDir string) manifest {
	t.Helper()
	name := filepath.Join(genDir, manifestName)
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := parseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applyManifestLog(m, name+manifestLogSuffix); err != nil {
		t.Fatal(err)
	}
	return m
}

// readManifestFresh parses the manifest of genDir from its files, past
// what the process keeps.
func readManifestFresh(t *testing.T, genDir string) manifest {
	t.Helper()
	manifests.Lock()
	manifests.name, manifests.fi, manifests.man = "", nil, nil
	manifests.Unlock()
	m, err := readManifest(genDir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func bigManifest(n int) manifest {
	m := manifest{}
	for i := range n {
		m[fmt.Sprintf("entries/global/notes/%05d.md", i)] = entry{size: int64(100 + i), mtime: int64(1e18) + int64(i), id: fmt.Sprintf("ID%05d", i), sum: uint64(i) * 7919}
	}
	return m
}

// TestManifestLog: a write that names what changed appends those entries
// to the log and leaves the base as it was; the files read back give the
// written manifest, deletions, quoted paths and broken entries included;
// a log grown past its share of the base is folded into a new base.
func TestManifestLog(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, manifestName)
	m := bigManifest(400)
	if err := writeManifest(dir, m, nil); err != nil {
		t.Fatal(err)
	}
	base, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	m, err = readManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	odd := "entries/global/notes/tab\there.md"
	m["entries/global/notes/00001.md"] = entry{size: 1, mtime: 2, racy: true, id: "CHANGED", sum: 0xabc}
	m[odd] = entry{size: 3, mtime: 4, id: "ODD", sum: 1}
	m["entries/global/notes/new.md"] = entry{size: 5, mtime: 6, broken: "bad front matter"}
	delete(m, "entries/global/notes/00002.md")
	changed := []string{"entries/global/notes/00001.md", odd, "entries/global/notes/new.md", "entries/global/notes/00002.md", "entries/global/notes/00003.md"}
	if err := writeManifest(dir, m, changed); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(name); err != nil || !os.SameFile(now, base) || !now.ModTime().Equal(base.ModTime()) {
		t.Fatalf("the base was written again (%v); want the change appended to the log", err)
	}
	if _, err := os.Stat(name + manifestLogSuffix); err != nil {
		t.Fatalf("no log: %v", err)
	}
	if got := readManifestFresh(t, dir); !reflect.DeepEqual(got, m) {
		t.Fatalf("base and log read back differ from what was written")
	}

	// Changes until the log outgrows its share: then a new base, no log.
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("the log was never folded into the base")
		}
		m, err = readManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		p := fmt.Sprintf("entries/global/notes/%05d.md", 10+i)
		m[p] = entry{size: 9, mtime: int64(i), id: "AGAIN"}
		if err := writeManifest(dir, m, []string{p}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(name + manifestLogSuffix); errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	if now, err := os.Stat(name); err != nil || os.SameFile(now, base) {
		t.Fatalf("no new base once the log was folded into it (%v)", err)
	}
	if got := readManifestFresh(t, dir); !reflect.DeepEqual(got, m) {
		t.Fatalf("the folded manifest differs from what was written")
	}
}

// TestManifestLogCut: a log whose end is cut short (a crash in an append)
// or damaged is applied up to there, and the next write writes the whole
// manifest; so is one after a log another process appended to or a base
// it replaced.
func TestManifestLogCut(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, manifestName)
	m := bigManifest(400)
	if err := writeManifest(dir, m, nil); err != nil {
		t.Fatal(err)
	}
	m, _ = readManifest(dir)
	m["entries/global/notes/00001.md"] = entry{size: 1, mtime: 2, id: "ONE"}
	if err := writeManifest(dir, m, []string{"entries/global/notes/00001.md"}); err != nil {
		t.Fatal(err)
	}
	for _, tail := range []string{"7\t8\t-\tCUT\t0\tentries/global/notes/00004", "x\ty\n"} {
		f, err := os.OpenFile(name+manifestLogSuffix, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(tail)
		f.Close()
		got := readManifestFresh(t, dir)
		if got["entries/global/notes/00001.md"].id != "ONE" || got["entries/global/notes/00004.md"].id != "ID00004" {
			t.Fatalf("with %q at the log's end: the log's whole lines not applied, or its cut one applied", tail)
		}
		got["entries/global/notes/00005.md"] = entry{size: 5, mtime: 5, id: "FIVE"}
		if err := writeManifest(dir, got, []string{"entries/global/notes/00005.md"}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(name + manifestLogSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("with %q at the log's end: the next write appended to it (%v)", tail, err)
		}
		if back := readManifestFresh(t, dir); !reflect.DeepEqual(back, got) {
			t.Fatalf("with %q at the log's end: the manifest written whole reads back different", tail)
		}
		m = got
		m["entries/global/notes/00001.md"] = entry{size: 1, mtime: 2, id: "ONE"}
		if err := writeManifest(dir, m, []string{"entries/global/notes/00001.md"}); err != nil {
			t.Fatal(err)
		}
	}

	// Another process appends to the log: this one's next write, from
	// the manifest it read before, is a whole one.
	m, _ = readManifest(dir)
	f, err := os.OpenFile(name+manifestLogSuffix, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(appendEntry(nil, "entries/global/notes/other.md", entry{size: 1, mtime: 1, id: "OTHER"}))
	f.Close()
	m["entries/global/notes/00006.md"] = entry{size: 6, mtime: 6, id: "SIX"}
	if err := writeManifest(dir, m, []string{"entries/global/notes/00006.md"}); err != nil {
		t.Fatal(err)
	}
	if got := readManifestFresh(t, dir); !reflect.DeepEqual(got, m) {
		t.Fatal("a write after another process's append did not write the manifest it was given")
	}
}

// TestManifestLogThroughUpdates: with the log taking every change, index
// updates (adds, edits, removals, a broken file) leave a manifest whose
// files read back as what the index holds, and search finds the changes.
func TestManifestLogThroughUpdates(t *testing.T) {
	defer func(s int64) { manifestLogShare = s }(manifestLogShare)
	manifestLogShare = 1
	f := newFake(t)
	var paths []string
	for i := range 20 {
		paths = append(paths, f.writeDoc(t, fdoc{id: fmt.Sprintf("D%02d", i), created: t0.Add(time.Duration(i) * time.Minute), text: fmt.Sprintf("document number %d", i)}))
	}
	mustOpen(t, f, opts(nil)).Close()
	logged := false
	for step := range 9 {
		paths = f.churn(t, paths, step, "D01", fmt.Sprintf("zebra%d", step), fmt.Sprintf("giraffe%d", step))
		ix := mustOpen(t, f, opts(nil))
		genDir := ix.gen
		kept, err := readManifest(genDir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(genDir, manifestName+manifestLogSuffix)); err == nil {
			logged = true
		}
		disk := readManifestFresh(t, genDir)
		if !reflect.DeepEqual(kept, disk) {
			t.Fatalf("step %d: the manifest kept and the one its files hold differ", step)
		}
		if len(disk) != len(paths) {
			t.Fatalf("step %d: %d manifest entries for %d files", step, len(disk), len(paths))
		}
		want := map[int]string{0: fmt.Sprintf("zebra%d", step), 1: fmt.Sprintf("giraffe%d", step)}[step%3]
		if want != "" {
			hits, err := ix.Search(Query{Text: want})
			if err != nil || len(hits) != 1 {
				t.Fatalf("step %d: %q found %d times (%v), want once", step, want, len(hits), err)
			}
		}
		ix.Close()
	}
	if !logged {
		t.Fatal("no update went through the log")
	}
}
