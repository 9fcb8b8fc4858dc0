package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// warnings collects Warn calls.
type warnings struct {
	mu  sync.Mutex
	got map[string][]string
}

func (w *warnings) warn(path string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.got == nil {
		w.got = map[string][]string{}
	}
	w.got[path] = append(w.got[path], err.Error())
}

func (w *warnings) paths() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for p := range w.got {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func (w *warnings) reset() {
	w.mu.Lock()
	w.got = nil
	w.mu.Unlock()
}

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func opts(w *warnings) Options {
	o := Options{Now: func() time.Time { return t0 }}
	if w != nil {
		o.Warn = w.warn
	}
	return o
}

func mustOpen(t *testing.T, src Source, o Options) *Index {
	t.Helper()
	ix, err := Open(src, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// searchPaths runs a query on a freshly opened index and returns the hits'
// paths in order.
func searchPaths(t *testing.T, src Source, o Options, q Query) []string {
	t.Helper()
	ix := mustOpen(t, src, o)
	defer ix.Close()
	hits, err := ix.Search(q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	return out
}

func TestRebuildFromNothing(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", kind: "decision", created: t0.Add(-time.Hour), text: "We chose PostgreSQL for JSONB support"})
	f.writeDoc(t, fdoc{id: "B", kind: "fact", created: t0.Add(-2 * time.Hour), text: "The office cat is called Mira"})
	f.writeDoc(t, fdoc{id: "C", kind: "note", created: t0.Add(-3 * time.Hour), text: "Deploys happen on Tuesdays"})
	var progress [][2]int
	o := opts(nil)
	o.Progress = func(done, total int) { progress = append(progress, [2]int{done, total}) }
	ix := mustOpen(t, f, o)
	st := ix.LastUpdate()
	if !st.Rebuilt || st.Indexed != 3 || st.Docs != 3 {
		t.Errorf("LastUpdate() = %+v, want a rebuild of 3 documents", st)
	}
	if n := f.loads.Load(); n != 3 {
		t.Errorf("Load called %d times, want 3", n)
	}
	if len(progress) == 0 || progress[len(progress)-1] != [2]int{3, 3} {
		t.Errorf("progress = %v, want it to end with [3 3]", progress)
	}
	hits, err := ix.Search(Query{Text: "why did we pick PostgreSQL?"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Path != a || hits[0].ID != "A" {
		t.Fatalf("Search = %+v, want only %s", hits, a)
	}
	cur, err := os.ReadFile(filepath.Join(f.root, ".index", "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	gen := strings.TrimSpace(string(cur))
	for _, name := range []string{"meta.json", "manifest", "lock", "vectors-1"} {
		if _, err := os.Stat(filepath.Join(f.root, ".index", gen, name)); err != nil {
			t.Errorf("generation lacks %s: %v", name, err)
		}
	}
	ix.Close()

	// A second open with nothing changed loads nothing.
	f.resetLoads()
	ix2 := mustOpen(t, f, opts(nil))
	if n := f.loads.Load(); n != 0 {
		t.Errorf("Load called %d times on an unchanged store, want 0", n)
	}
	if st := ix2.LastUpdate(); st.Rebuilt || st.Docs != 3 {
		t.Errorf("LastUpdate() = %+v, want 3 docs and no rebuild", st)
	}
}

func TestIncrementalUpdate(t *testing.T) {
	f := newFake(t)
	keep := f.writeDoc(t, fdoc{id: "K", created: t0, text: "unchanged entry about kittens"})
	mod := f.writeDoc(t, fdoc{id: "M", created: t0, text: "entry about apples"})
	del := f.writeDoc(t, fdoc{id: "D", created: t0, text: "entry about bananas"})
	mustOpen(t, f, opts(nil)).Close()

	f.resetLoads()
	add := f.writeDoc(t, fdoc{id: "N", created: t0, text: "new entry about cherries"})
	f.writeFile(t, mod, fdoc{id: "M", created: t0, text: "entry about pears now"}.encode(), oldTime.Add(time.Minute))
	f.remove(t, del)

	ix := mustOpen(t, f, opts(nil))
	want := []string{add, mod}
	slices.Sort(want)
	if diff := cmp.Diff(want, f.loadedPaths()); diff != "" {
		t.Errorf("loaded files (-want +got):\n%s", diff)
	}
	st := ix.LastUpdate()
	if st.Indexed != 2 || st.Removed != 1 || st.Docs != 3 {
		t.Errorf("LastUpdate() = %+v, want 2 indexed, 1 removed, 3 docs", st)
	}
	ix.Close()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"apples", nil},
		{"pears", []string{mod}},
		{"bananas", nil},
		{"cherries", []string{add}},
		{"kittens", []string{keep}},
	} {
		if got := searchPaths(t, f, opts(nil), Query{Text: tc.text}); !slices.Equal(got, tc.want) {
			t.Errorf("Search(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestManyUpdates applies one change per Open many times: every update
// must be on disk when Open returns (a lost one shows as a rebuild), and
// the segments they add must be merged now and then.
func TestManyUpdates(t *testing.T) {
	f := newFake(t)
	first := f.writeDoc(t, fdoc{id: "F", created: t0, text: "first"})
	mustOpen(t, f, opts(nil)).Close()
	for i := range 40 {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("U%02d", i), created: t0, text: "update"})
		if i%3 == 0 {
			f.writeFile(t, first, fdoc{id: "F", created: t0, text: fmt.Sprintf("first, edit %d", i)}.encode(), oldTime.Add(time.Duration(i)*time.Second))
		}
		var w warnings
		ix := mustOpen(t, f, opts(&w))
		if st := ix.LastUpdate(); st.Rebuilt || st.Docs != i+2 || len(w.got) > 0 {
			t.Fatalf("round %d: LastUpdate() = %+v, warnings %v; want %d docs, no rebuild", i, st, w.got, i+2)
		}
		ix.Close()
	}
}

func TestRacyFileLoadedAgain(t *testing.T) {
	f := newFake(t)
	d := fdoc{id: "R", created: t0, text: "freshly written"}
	p := d.path()
	f.writeFile(t, p, d.encode(), time.Now()) // written just now: racy
	mustOpen(t, f, opts(nil)).Close()
	f.resetLoads()
	mustOpen(t, f, opts(nil)).Close()
	if diff := cmp.Diff([]string{p}, f.loadedPaths()); diff != "" {
		t.Errorf("a racy file must be loaded again (-want +got):\n%s", diff)
	}
	// Once its time stamp is old it is trusted.
	if err := os.Chtimes(filepath.Join(f.root, p), oldTime, oldTime); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, f, opts(nil)).Close()
	f.resetLoads()
	mustOpen(t, f, opts(nil)).Close()
	if n := f.loads.Load(); n != 0 {
		t.Errorf("Load called %d times for an old, unchanged file, want 0", n)
	}
}

// TestRacyUnchangedNotIndexedAgain: a racy file read again is indexed
// again only if its document changed (a rewrite of the same size within
// the same time stamp); a file whose time changed is indexed again even
// with the same document.
func TestRacyUnchangedNotIndexedAgain(t *testing.T) {
	f := newFake(t)
	d := fdoc{id: "R", created: t0, text: "freshly written"}
	p := d.path()
	now := time.Now()
	f.writeFile(t, p, d.encode(), now) // racy
	mustOpen(t, f, opts(nil)).Close()
	update := func() Stats {
		t.Helper()
		ix := mustOpen(t, f, opts(nil))
		defer ix.Close()
		return ix.LastUpdate()
	}
	if st := update(); st.Loaded != 1 || st.Unchanged != 1 || st.Indexed != 0 {
		t.Errorf("racy and unchanged: %+v, want 1 loaded, 1 unchanged, 0 indexed", st)
	}
	// The same size and time stamp, another text.
	d.text = "crisply written"
	f.writeFile(t, p, d.encode(), now)
	if st := update(); st.Indexed != 1 || st.Unchanged != 0 {
		t.Errorf("racy and rewritten: %+v, want 1 indexed", st)
	}
	if got := searchPaths(t, f, opts(nil), Query{Text: "crisply"}); !slices.Equal(got, []string{p}) {
		t.Errorf("Search(crisply) = %v, want the rewritten file", got)
	}
	if got := searchPaths(t, f, opts(nil), Query{Text: "freshly"}); len(got) != 0 {
		t.Errorf("Search(freshly) = %v, want nothing", got)
	}
	// A new time stamp, the same document.
	f.writeFile(t, p, d.encode(), now.Add(time.Second))
	if st := update(); st.Indexed != 1 || st.Unchanged != 0 {
		t.Errorf("touched: %+v, want 1 indexed", st)
	}
}

func TestCommittedChangesViaDiff(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "alpha original"})
	b := f.writeDoc(t, fdoc{id: "B", created: t0, text: "beta original"})
	f.commit(a, b)
	mustOpen(t, f, opts(nil)).Close()

	skip := opts(nil)
	skip.SkipStat = true

	// An uncommitted edit is invisible without a stat pass...
	f.writeFile(t, a, fdoc{id: "A", created: t0, text: "alpha edited"}.encode(), oldTime.Add(time.Minute))
	f.resetLoads()
	if got := searchPaths(t, f, skip, Query{Text: "edited"}); len(got) != 0 {
		t.Errorf("SkipStat found an uncommitted edit: %v", got)
	}
	if n := f.loads.Load(); n != 0 {
		t.Errorf("Load called %d times with SkipStat and no commit, want 0", n)
	}
	// ...and found once committed. The commit also names a tombstone,
	// which is ignored, and a removed file, which leaves the index.
	tomb := "entries/global/deleted/notes/20261121T100000Z__B.md"
	f.writeFile(t, tomb, fdoc{id: "B", created: t0, text: "beta original"}.encode(), oldTime)
	f.remove(t, b)
	f.commit(a, b, tomb)
	f.resetLoads()
	ix := mustOpen(t, f, skip)
	if diff := cmp.Diff([]string{a}, f.loadedPaths()); diff != "" {
		t.Errorf("loaded files (-want +got):\n%s", diff)
	}
	st := ix.LastUpdate()
	if st.Commit != "c002" || st.Indexed != 1 || st.Removed != 1 || st.Docs != 1 {
		t.Errorf("LastUpdate() = %+v, want commit c002, 1 indexed, 1 removed, 1 doc", st)
	}
	hits, err := ix.Search(Query{Text: "alpha beta"})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Path != a {
		t.Errorf("Search = %+v, want only %s", hits, a)
	}
	ix.Close()

	// A commit that changes nothing the index holds is only recorded.
	f.commit("entries/global/deleted/notes/x.md")
	f.resetLoads()
	var w warnings
	skip.Warn = w.warn
	ix = mustOpen(t, f, skip)
	if len(w.got) > 0 {
		t.Errorf("warnings: %v", w.got)
	}
	if st := ix.LastUpdate(); st.Commit != "c003" || f.loads.Load() != 0 {
		t.Errorf("LastUpdate() = %+v after %d loads, want commit c003 and no loads", st, f.loads.Load())
	}
	ix.Close()

	// History rewritten: the indexed commit is unknown, so a stat pass
	// finds what changed, even with SkipStat.
	f.mu.Lock()
	f.commits = nil
	f.mu.Unlock()
	f.writeFile(t, a, fdoc{id: "A", created: t0, text: "alpha rewritten"}.encode(), oldTime.Add(2*time.Minute))
	f.commit(a)
	w = warnings{}
	f.resetLoads()
	ix = mustOpen(t, f, skip)
	if got := f.loadedPaths(); !slices.Equal(got, []string{a}) {
		t.Errorf("after a history rewrite loaded %v, want %v", got, []string{a})
	}
	if st := ix.LastUpdate(); st.Commit != "c001" {
		t.Errorf("LastUpdate() = %+v, want commit c001", st)
	}
	if len(w.got) != 1 {
		t.Errorf("warnings %v, want one about the unknown commit", w.got)
	}
}

// currentGen returns the directory of the generation CURRENT names in the
// store at root.
func currentGen(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".index", "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, ".index", strings.TrimSpace(string(b)))
}

func TestDamagedIndexIsRebuilt(t *testing.T) {
	gen := currentGen
	write := func(t *testing.T, name, content string) {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, root, gen string)
	}{
		{"garbage vector file", func(t *testing.T, root, gen string) {
			write(t, filepath.Join(gen, "vectors-1"), strings.Repeat("garbage!", 1000))
		}},
		{"vector file gone", func(t *testing.T, root, gen string) {
			os.Remove(filepath.Join(gen, "vectors-1"))
		}},
		{"lock file gone", func(t *testing.T, root, gen string) {
			os.Remove(filepath.Join(gen, "lock"))
		}},
		{"wrong version", func(t *testing.T, root, gen string) {
			b, _ := os.ReadFile(filepath.Join(gen, "meta.json"))
			write(t, filepath.Join(gen, "meta.json"), strings.Replace(string(b), fmt.Sprintf(`"version": %d`, FormatVersion), `"version": 0`, 1))
		}},
		{"meta unreadable", func(t *testing.T, root, gen string) {
			write(t, filepath.Join(gen, "meta.json"), "{")
		}},
		{"manifest garbage", func(t *testing.T, root, gen string) {
			write(t, filepath.Join(gen, "manifest"), "what\n")
		}},
		{"CURRENT points nowhere", func(t *testing.T, root, gen string) {
			write(t, filepath.Join(root, ".index", "CURRENT"), "g-12345\n")
		}},
		{"CURRENT garbage", func(t *testing.T, root, gen string) {
			write(t, filepath.Join(root, ".index", "CURRENT"), "../../etc\n")
		}},
		{"doc count off", func(t *testing.T, root, gen string) {
			b, _ := os.ReadFile(filepath.Join(gen, "meta.json"))
			write(t, filepath.Join(gen, "meta.json"), strings.Replace(string(b), `"docs": 2`, `"docs": 7`, 1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "sturdy walrus"})
			f.writeDoc(t, fdoc{id: "B", created: t0, text: "fragile teacup"})
			mustOpen(t, f, opts(nil)).Close()
			old := gen(t, f.root)
			tc.damage(t, f.root, old)

			var w warnings
			ix := mustOpen(t, f, opts(&w))
			if !ix.LastUpdate().Rebuilt {
				t.Errorf("LastUpdate() = %+v, want a rebuild", ix.LastUpdate())
			}
			hits, err := ix.Search(Query{Text: "walrus"})
			if err != nil || len(hits) != 1 || hits[0].Path != a {
				t.Errorf("Search after rebuild = %+v, %v; want %s", hits, err, a)
			}
			if got := w.paths(); !slices.Equal(got, []string{filepath.Join(f.root, ".index")}) {
				t.Errorf("warnings for %v, want one for the index directory", got)
			}
			now := gen(t, f.root)
			if now == old {
				t.Errorf("generation %s was reused, want a new one", now)
			}
			ix.Close()
			if _, err := os.Stat(old); err == nil {
				// The damaged generation is removed when nobody has it open.
				ix2 := mustOpen(t, f, opts(nil))
				ix2.Close()
				if _, err := os.Stat(old); err == nil {
					t.Errorf("old generation %s still there", old)
				}
			}
		})
	}
}

func TestMissingIndexNoWarning(t *testing.T) {
	f := newFake(t)
	o := opts(nil)
	o.NoRefresh = true
	if _, err := Open(f, o); !errors.Is(err, ErrNoIndex) {
		t.Errorf("Open(NoRefresh) without an index = %v, want ErrNoIndex", err)
	}
	var w warnings
	ix := mustOpen(t, f, opts(&w))
	if got := w.paths(); len(got) != 0 {
		t.Errorf("warnings %v for a store without an index", got)
	}
	hits, err := ix.Search(Query{Text: "anything"})
	if err != nil || len(hits) != 0 {
		t.Errorf("Search on an empty store = %v, %v; want nothing", hits, err)
	}
}

func TestBrokenFile(t *testing.T) {
	f := newFake(t)
	good := f.writeDoc(t, fdoc{id: "G", created: t0, text: "good entry about owls"})
	bad := "entries/global/notes/20261121T100000Z__X.md"
	f.writeFile(t, bad, "owls without front matter\n", oldTime)

	var w warnings
	ix := mustOpen(t, f, opts(&w))
	if diff := cmp.Diff([]string{bad}, w.paths()); diff != "" {
		t.Errorf("warned paths (-want +got):\n%s", diff)
	}
	if n := len(w.got[bad]); n != 1 {
		t.Errorf("warned %d times about %s in one call, want once", n, bad)
	}
	if got := searchPaths(t, f, opts(nil), Query{Text: "owls"}); !slices.Equal(got, []string{good}) {
		t.Errorf("Search(owls) = %v, want only %s", got, good)
	}
	if st := ix.LastUpdate(); st.Broken != 1 || st.Docs != 1 {
		t.Errorf("LastUpdate() = %+v, want 1 broken, 1 doc", st)
	}
	ix.Close()

	// Reported again by every refresh, without loading it again.
	w.reset()
	f.resetLoads()
	mustOpen(t, f, opts(&w)).Close()
	if diff := cmp.Diff([]string{bad}, w.paths()); diff != "" {
		t.Errorf("warned paths on the next open (-want +got):\n%s", diff)
	}
	if n := f.loads.Load(); n != 0 {
		t.Errorf("Load called %d times, want 0", n)
	}

	// Mended, it is indexed and no longer reported.
	w.reset()
	f.writeFile(t, bad, fdoc{id: "X", created: t0, text: "owls mended"}.encode(), oldTime.Add(time.Minute))
	ix = mustOpen(t, f, opts(&w))
	if got := w.paths(); len(got) != 0 {
		t.Errorf("warnings %v after the file was mended", got)
	}
	if st := ix.LastUpdate(); st.Docs != 2 {
		t.Errorf("LastUpdate() = %+v, want 2 docs", st)
	}
}

func TestStatus(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "one"})
	f.writeDoc(t, fdoc{id: "B", created: t0, text: "two"})
	f.commit(a)
	ix := mustOpen(t, f, opts(nil))
	f.writeDoc(t, fdoc{id: "C", created: t0, text: "three"})
	f.remove(t, a)
	st, err := ix.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 2 || st.Stale != 2 || st.Commit != "c001" || st.Head != "c001" ||
		st.Version != FormatVersion || st.Embedder != "mira-hash-v1/384" || st.Vectors != 2 || st.Dim != 384 || st.Size == 0 || st.Watcher ||
		!st.Built.Equal(t0) {
		t.Errorf("Status() = %+v", st)
	}
	ix.Close()

	// NoRefresh opens the index as it is.
	o := opts(nil)
	o.NoRefresh = true
	f.resetLoads()
	ix = mustOpen(t, f, o)
	if n := f.loads.Load(); n != 0 {
		t.Errorf("NoRefresh loaded %d files", n)
	}
	if st, err := ix.Status(); err != nil || st.Stale != 2 {
		t.Errorf("Status() = %+v, %v; want 2 stale", st, err)
	}
}

func TestIsEntryPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"entries/global/facts/20261121T100000Z__01J9.md", true},
		{"entries/shop/turns/user/x.md", true},
		{"entries/global/x.md", true},
		{"entries/x.md", false},
		{"entries/global/deleted/facts/x.md", false},
		{"entries/global/facts/deleted/x.md", true},
		{"entries/global/facts/.x.md", false},
		{"entries/global/facts/x.md.tmp", false},
		{"entries/.git/x.md", false},
		{"artifacts/global/x.md", false},
		{"entries//x.md", false},
		{"entries/deleted/facts/x.md", false}, // "deleted" is never a scope
		{"entries/global/../x.md", false},
	} {
		if got := IsEntryPath(tc.path); got != tc.want {
			t.Errorf("IsEntryPath(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestStatFiles(t *testing.T) {
	f := newFake(t)
	want := []FileStat{}
	for i, p := range []string{
		"entries/global/facts/a.md",
		"entries/global/turns/user/b.md",
		"entries/shop/notes/deep/er/c.md",
	} {
		mt := oldTime.Add(time.Duration(i) * time.Second)
		f.writeFile(t, p, strings.Repeat("x", i+1), mt)
		want = append(want, FileStat{Path: p, Size: int64(i + 1), ModTime: mt.UnixNano()})
	}
	for _, p := range []string{
		"entries/global/deleted/facts/d.md",
		"entries/global/facts/.e.md",
		"entries/global/facts/f.md.tmp",
		"entries/.hidden/notes/g.md",
		"entries/h.md",
		"artifacts/global/i.md",
	} {
		f.writeFile(t, p, "x", oldTime)
	}
	got, err := StatFiles(f.root)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b FileStat) int { return strings.Compare(a.Path, b.Path) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StatFiles (-want +got):\n%s", diff)
	}
	if got, err := StatFiles(t.TempDir()); err != nil || len(got) != 0 {
		t.Errorf("StatFiles(empty) = %v, %v", got, err)
	}
}

func TestManifestRoundTrip(t *testing.T) {
	m := manifest{
		"entries/global/facts/a.md":         {size: 10, mtime: 123456789, id: "A", sum: 0xfedcba9876543210},
		"entries/global/facts/tab\there.md": {size: 1, mtime: 2, racy: true, id: "T"},
		`entries/global/facts/"q.md`:        {size: 3, mtime: 4, broken: "line 1:\tbad\nthing"},
	}
	got, err := parseManifest(formatManifest(m))
	if err != nil {
		t.Fatal(err)
	}
	m[`entries/global/facts/"q.md`] = entry{size: 3, mtime: 4, broken: "line 1: bad thing"}
	if diff := cmp.Diff(m, got, cmp.AllowUnexported(entry{})); diff != "" {
		t.Errorf("manifest round trip (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "nope\n", manifestMagic + "\n1\t2\n", manifestMagic + "\nx\t2\t-\tid\t1\tp\t\n", manifestMagic + "\n1\t2\t-\tid\tzz\tp\t\n", manifestMagic + "\n1\t2\t-\tid\tp\t\n"} {
		if _, err := parseManifest([]byte(bad)); err == nil {
			t.Errorf("parseManifest(%q) succeeded", bad)
		}
	}
}

func TestRebuildSwitchesGeneration(t *testing.T) {
	f := newFake(t)
	for i := range 40 {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("R%02d", i), created: t0, text: "rebuilt entry"})
	}
	old := mustOpen(t, f, opts(nil)) // holds the first generation
	oldGen := old.gen

	var calls [][2]int
	o := opts(nil)
	o.Progress = func(done, total int) { calls = append(calls, [2]int{done, total}) }
	st, err := Rebuild(f, o)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Rebuilt || st.Docs != 40 || st.Loaded != 40 {
		t.Errorf("Rebuild() = %+v, want 40 docs loaded", st)
	}
	if len(calls) < 2 || calls[0] != [2]int{0, 40} || calls[len(calls)-1] != [2]int{40, 40} {
		t.Errorf("progress = %v, want it to go from [0 40] to [40 40]", calls)
	}
	// The old generation is still searchable by whoever has it open...
	if hits, err := old.Search(Query{Text: "rebuilt"}); err != nil || len(hits) != DefaultK {
		t.Errorf("Search on the old generation = %d hits, %v", len(hits), err)
	}
	if _, err := os.Stat(oldGen); err != nil {
		t.Errorf("generation in use was removed: %v", err)
	}
	old.Close()
	// ...and removed by the next Open once nobody has.
	ix := mustOpen(t, f, opts(nil))
	if ix.gen == oldGen {
		t.Errorf("Open uses the old generation %s", oldGen)
	}
	if _, err := os.Stat(oldGen); err == nil {
		t.Errorf("old generation %s still there", oldGen)
	}
	if n := f.loads.Load(); n != 80 {
		t.Errorf("Load called %d times, want 80 (two builds)", n)
	}
}

func TestStanding(t *testing.T) {
	f := newFake(t)
	at := t0.Add(-time.Hour)
	pinned := f.writeDoc(t, fdoc{id: "P", kind: "fact", pin: "sticky", created: at, text: "Always answer in English"})
	leased := f.writeDoc(t, fdoc{id: "L", kind: "note", scope: "shop", pin: "leased", created: at, text: "Freeze deploys this week"})
	corr := f.writeDoc(t, fdoc{id: "C", kind: "correction", created: at, text: "The API is v2, not v1"})
	goal := f.writeDoc(t, fdoc{id: "G", kind: "goal", scope: "shop", created: at, text: "Ship checkout"})
	f.writeDoc(t, fdoc{id: "T", kind: "task", scope: "other", created: at, text: "Elsewhere"})
	f.writeDoc(t, fdoc{id: "F", kind: "fact", created: at, text: "A plain fact"})
	f.writeDoc(t, fdoc{id: "N", kind: "note", scope: "shop", created: at, text: "A plain note"})
	ix := mustOpen(t, f, opts(nil))
	defer ix.Close()
	got, err := ix.Standing([]string{"global", "shop"}, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{pinned, leased, corr, goal}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Standing(global, shop) = %v, want %v", got, want)
	}
	all, err := ix.Standing(nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 {
		t.Errorf("Standing(all scopes) = %v, want 5 paths", all)
	}
}
