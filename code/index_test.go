package code

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// project writes a small project in several languages and returns its
// root.
func project(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/demo\n\ngo 1.22\n",
		"main.go": `package main

import "example.com/demo/util"

// main greets.
func main() {
	util.Greet("x")
	helper()
}

func helper() {}
`,
		"util/util.go": `package util

import "strings"

// Greet says hello to name.
// It shouts.
func Greet(name string) string {
	return strings.ToUpper(name)
}

// Shout is loud.
func Shout(s string) string {
	return Greet(s) + "!"
}
`,
		"py/app.py": `class App:
    """An application."""

    def run(self):
        helper()


def helper():
    """Help."""
    return 1
`,
		"web/app.js": `export function start() {
  render();
}

function render() {
  return 1;
}
`,
		"notes.txt":             "plain notes about greeting\n",
		".gitignore":            "build/\n*.log\n",
		"build/out.go":          "package build\n\nfunc Ignored() {}\n",
		"debug.log":             "noise\n",
		"node_modules/x/i.js":   "function dep() {}\n",
		"py/sub/.gitignore":     "secret.py\n",
		"py/sub/secret.py":      "def hidden():\n    pass\n",
		"py/sub/visible.py":     "def shown():\n    pass\n",
		"assets/logo.bin":       "PNG\x00\x01\x02",
		"data/big.txt":          strings.Repeat("x", maxFileSize+1),
		"vendor/lib/lib.go":     "package lib\n\nfunc Vendored() {}\n",
		"nested/.git/config":    "[core]\n",
		"nested/readme.md":      "# nested\n",
		"deep/a/b/c/keep.py":    "def keep():\n    pass\n",
		"deep/a/.gitignore":     "b/c/*.py\n!keep.py\n",
		"deep/a/b/c/other.py":   "def other():\n    pass\n",
		"web/.gitignore":        "",
		"web/lib/tools.mjs":     "export function tool() {}\n",
		"web/lib/tools.test.js": "tool();\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) warn(p string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, p+": "+err.Error())
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.msgs)
}

func open(t testing.TB, root, dir string, w *warnings) *Index {
	t.Helper()
	opt := Options{Root: root, Dir: dir}
	if w != nil {
		opt.Warn = w.warn
	}
	ix, err := Open(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func update(t testing.TB, ix *Index) Stats {
	t.Helper()
	s, err := ix.Update(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func indexed(ix *Index) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []string
	for _, f := range ix.st.Files {
		if f.Skip == "" {
			out = append(out, f.Path)
		}
	}
	return out
}

func TestIndexWalk(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	s := update(t, ix)
	got := indexed(ix)
	want := []string{
		".gitignore", "deep/a/.gitignore", "deep/a/b/c/keep.py", "go.mod", "main.go",
		"nested/readme.md", "notes.txt", "py/app.py", "py/sub/.gitignore", "py/sub/visible.py",
		"util/util.go", "web/.gitignore", "web/app.js", "web/lib/tools.mjs", "web/lib/tools.test.js",
	}
	if !slices.Equal(got, want) {
		t.Errorf("indexed files:\n got %q\nwant %q", got, want)
	}
	if s.Added != len(want)+2 || s.Files != len(want) || s.Skipped != 2 {
		t.Errorf("stats %+v, want %d added, %d files, 2 skipped", s, len(want)+2, len(want))
	}
	st := ix.Status()
	if st.Skipped[skipBinary] != 1 || st.Skipped[skipLarge] != 1 {
		t.Errorf("skipped %v, want one binary, one too large", st.Skipped)
	}
	if st.Files != len(want) || st.Languages["go"].Files != 2 || st.Languages["python"].Files != 3 || st.Languages[""].Files < 5 {
		t.Errorf("status %+v", st)
	}
	if st.Symbols == 0 || st.Updated.IsZero() || len(st.Stale) != 0 {
		t.Errorf("status %+v: want symbols, an update time and nothing stale", st)
	}
}

func TestCardResolution(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	for _, tc := range []struct {
		ref, name, path, module string
		line                    int
	}{
		{"Greet", "Greet", "util/util.go", "example.com/demo/util", 7},
		{"util.Greet", "Greet", "util/util.go", "example.com/demo/util", 7},
		{"util/util.go#Shout", "Shout", "util/util.go", "example.com/demo/util", 12},
		{"util/util.go:13", "Shout", "util/util.go", "example.com/demo/util", 12},
		{"App.run", "run", "py/app.py", "py.app", 4},
		{"start", "start", "web/app.js", "web/app", 1},
		{"main", "main", "main.go", "example.com/demo", 6},
	} {
		c, err := ix.Card(tc.ref, false)
		if err != nil {
			t.Errorf("Card(%q): %v", tc.ref, err)
			continue
		}
		if c.Name != tc.name || c.Path != tc.path || c.Module != tc.module || c.Line != tc.line {
			t.Errorf("Card(%q) = %s %s %s:%d, want %s %s %s:%d", tc.ref, c.Name, c.Module, c.Path, c.Line, tc.name, tc.module, tc.path, tc.line)
		}
	}
	c, err := ix.Card("Greet", false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Doc, "Greet says hello to name.") || c.Kind != "func" || c.Lang != "go" {
		t.Errorf("card %+v", c)
	}
	if c.Snippet != "func Greet(name string) string {\n\treturn strings.ToUpper(name)\n}" {
		t.Errorf("snippet %q", c.Snippet)
	}
	if !strings.Contains(c.Signature, "func Greet(name string) string") {
		t.Errorf("signature %q", c.Signature)
	}
	long, err := ix.Card("App", false)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(long.Snippet, "\n") + 1; n != snippetLines {
		t.Errorf("snippet of App has %d lines, want %d: %q", n, snippetLines, long.Snippet)
	}
	body, err := ix.Card("App", true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(body.Snippet, "helper()") || strings.Contains(body.Snippet, "def helper") {
		t.Errorf("body of App: %q", body.Snippet)
	}
	for _, ref := range []string{"Nope", "util/util.go#Nope", "missing.go:3", "util/util.go:1", "", "Ignored", "hidden", "Vendored"} {
		if _, err := ix.Card(ref, false); err == nil {
			t.Errorf("Card(%q) found something", ref)
		}
	}
}

func edgeSet(es []Edge) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.From.Name+"->"+e.To.Name+"@"+e.Path+":"+itoa(e.Line)+"/"+itoa(e.Depth))
	}
	slices.Sort(out)
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestCallGraph(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	got := edgeSet(ix.Callers("Greet", 2))
	want := []string{"Shout->Greet@util/util.go:13/1", "main->Greet@main.go:7/1"}
	if !slices.Equal(got, want) {
		t.Errorf("callers of Greet:\n got %q\nwant %q", got, want)
	}
	// helper is defined in Go and in Python: each call resolves within
	// its own file.
	got = edgeSet(ix.Callers("main.go#helper", 1))
	want = []string{"main->helper@main.go:8/1"}
	if !slices.Equal(got, want) {
		t.Errorf("callers of main.go#helper:\n got %q\nwant %q", got, want)
	}
	got = edgeSet(ix.Callees("Shout", 2))
	want = []string{"Shout->Greet@util/util.go:13/1"}
	if !slices.Equal(got, want) {
		t.Errorf("callees of Shout:\n got %q\nwant %q", got, want)
	}
	got = edgeSet(ix.Callees("main", 1))
	want = []string{"main->Greet@main.go:7/1", "main->helper@main.go:8/1"}
	if !slices.Equal(got, want) {
		t.Errorf("callees of main:\n got %q\nwant %q", got, want)
	}
	got = edgeSet(ix.Callers("py/app.py#helper", 1))
	want = []string{"run->helper@py/app.py:5/1"}
	if !slices.Equal(got, want) {
		t.Errorf("callers of the Python helper:\n got %q\nwant %q", got, want)
	}
	got = edgeSet(ix.Callers("render", 1))
	want = []string{"start->render@web/app.js:2/1"}
	if !slices.Equal(got, want) {
		t.Errorf("callers of render:\n got %q\nwant %q", got, want)
	}
}

func TestMap(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	m := ix.Map(0, nil)
	if !strings.Contains(m.Text, "util/ (1 file)\n  func Greet(name string) string  // Greet says hello to name.\n") {
		t.Errorf("map:\n%s", m.Text)
	}
	if m2 := ix.Map(0, nil); m2.Text != m.Text {
		t.Errorf("map not deterministic:\n%s\n---\n%s", m.Text, m2.Text)
	}
	for _, budget := range []int{5, 20, 40} {
		small := ix.Map(budget, nil)
		if small.Tokens > budget || small.Tokens != approxTokens(small.Text) {
			t.Errorf("map under %d tokens has %d:\n%s", budget, small.Tokens, small.Text)
		}
	}
}

func TestUpdateSeesEditAndDelete(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)

	p := filepath.Join(root, "util", "util.go")
	b, _ := os.ReadFile(p)
	b = append(b, "\n// Farewell says goodbye.\nfunc Farewell() string { return Greet(\"bye\") }\n"...)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	if err := os.Remove(filepath.Join(root, "web", "app.js")); err != nil {
		t.Fatal(err)
	}
	if st := ix.Status(); !slices.Equal(st.Stale, []string{"util/util.go", "web/app.js"}) {
		t.Errorf("stale %q, want util/util.go and web/app.js", st.Stale)
	}
	if c, err := ix.Card("Greet", false); err != nil || !c.Stale {
		t.Errorf("card of an edited file not marked stale: %+v, %v", c, err)
	}
	s := update(t, ix)
	if s.Changed != 1 || s.Removed != 1 || s.Added != 0 {
		t.Errorf("stats %+v, want 1 changed, 1 removed", s)
	}
	c, err := ix.Card("Farewell", false)
	if err != nil || c.Doc != "Farewell says goodbye." || c.Stale {
		t.Errorf("Card(Farewell) = %+v, %v", c, err)
	}
	if _, err := ix.Card("start", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("Card(start) after deletion: %v", err)
	}
	if len(ix.Status().Stale) != 0 {
		t.Errorf("stale after update: %q", ix.Status().Stale)
	}
	// Same content, new mtime: the hash says nothing changed.
	os.Chtimes(p, time.Now().Add(2*time.Hour), time.Now().Add(2*time.Hour))
	if s := update(t, ix); s.Changed != 0 || s.Added != 0 {
		t.Errorf("touch re-parsed: %+v", s)
	}
	// A fresh Open sees what the update saved.
	ix2 := open(t, root, ix.Dir(), nil)
	if _, err := ix2.Card("Farewell", false); err != nil {
		t.Errorf("reopened index: %v", err)
	}
}

func TestDefaultDirPrivate(t *testing.T) {
	root := project(t)
	cache := t.TempDir()
	env := func(k string) string {
		if k == "XDG_CACHE_HOME" {
			return cache
		}
		return ""
	}
	ix, err := Open(context.Background(), Options{Root: root, Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	update(t, ix)
	dir := ix.Dir()
	if !strings.HasPrefix(dir, filepath.Join(cache, "mira", "code", filepath.Base(root)+"-")) {
		t.Errorf("index in %s, want under %s", dir, cache)
	}
	for _, p := range []string{dir, filepath.Join(dir, indexName)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want private", p, fi.Mode().Perm())
		}
	}
	other, _ := DefaultDir(root+"x", env)
	if other == dir {
		t.Errorf("two roots share %s", dir)
	}
}

// tree lists every file under root with its size and mtime.
func tree(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		out[p] = fi.Mode().String() + fi.ModTime().String() + itoa(int(fi.Size()))
		return nil
	})
	return out
}

func TestReadOnlyRootUntouched(t *testing.T) {
	root := project(t)
	before := tree(t, root)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() {
			os.Chmod(p, 0o555)
		}
		return nil
	})
	t.Cleanup(func() {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	if _, err := ix.Card("Greet", true); err != nil {
		t.Fatal(err)
	}
	ix.Callers("Greet", 2)
	ix.Map(100, nil)
	ix.Status()
	after := tree(t, root)
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("index wrote %s into the project", p)
		}
	}
	if len(after) != len(before) {
		t.Errorf("project had %d entries, now %d", len(before), len(after))
	}
}

func TestDamagedIndexRebuilt(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	ix := open(t, root, dir, nil)
	update(t, ix)
	name := filepath.Join(dir, indexName)
	good, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	flip := bytes.Clone(good)
	flip[len(flip)/2] ^= 0x40
	version := bytes.Clone(good)
	version[len(indexMagic)]++
	for what, b := range map[string][]byte{
		"flipped byte": flip,
		"truncated":    good[:len(good)-1],
		"header only":  good[:headerSize],
		"empty":        nil,
		"other format": append([]byte("MIRACODX"), good[8:]...),
		"old version":  version,
		"garbage":      []byte("{\"files\": []}\n"),
	} {
		if err := os.WriteFile(name, b, 0o600); err != nil {
			t.Fatal(err)
		}
		var w warnings
		ix := open(t, root, dir, &w)
		if n := ix.Status().Files; n != 0 {
			t.Errorf("%s: damaged index trusted: %d files", what, n)
		}
		if msgs := w.list(); len(msgs) != 1 || !strings.Contains(msgs[0], "rebuilding the index") {
			t.Errorf("%s: warnings %q", what, msgs)
		}
		s := update(t, ix)
		if s.Added == 0 {
			t.Errorf("%s: nothing rebuilt: %+v", what, s)
		}
		if _, err := ix.Card("Greet", false); err != nil {
			t.Errorf("%s: after rebuild: %v", what, err)
		}
		var w2 warnings
		if open(t, root, dir, &w2).Status().Files == 0 || len(w2.list()) != 0 {
			t.Errorf("%s: rebuilt index not usable: %q", what, w2.list())
		}
	}
}

func TestKilledWriterLeavesIndexUsable(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	ix := open(t, root, dir, nil)
	update(t, ix)
	good, _ := os.ReadFile(filepath.Join(dir, indexName))
	// A writer killed mid-write leaves its temporary file, truncated.
	tmp := filepath.Join(dir, "."+indexName+".123456.tmp")
	if err := os.WriteFile(tmp, good[:len(good)/3], 0o600); err != nil {
		t.Fatal(err)
	}
	var w warnings
	ix2 := open(t, root, dir, &w)
	if _, err := ix2.Card("Greet", false); err != nil || len(w.list()) != 0 {
		t.Fatalf("previous index not usable: %v %q", err, w.list())
	}
	// A fresh temporary file may be a live writer's: left alone.
	update(t, ix2)
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("a recent temporary file was removed: %v", err)
	}
	old := time.Now().Add(-2 * tempAge)
	os.Chtimes(tmp, old, old)
	update(t, ix2)
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a killed writer's temporary file was kept: %v", err)
	}
}

func TestIndexOfAnotherRootNotTrusted(t *testing.T) {
	a, b := project(t), project(t)
	dir := t.TempDir()
	update(t, open(t, a, dir, nil))
	var w warnings
	ix := open(t, b, dir, &w)
	if ix.Status().Files != 0 || len(w.list()) != 1 {
		t.Errorf("index of %s used for %s: %q", a, b, w.list())
	}
}

// Two processes updating one index at once: each writes a whole index and
// renames it into place, the last rename wins, and the result is a valid
// index of the project whichever wins.
func TestConcurrentUpdates(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	a := open(t, root, dir, nil)
	b := open(t, root, dir, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 2 {
		ix := []*Index{a, b}[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				p := filepath.Join(root, "gen", "f"+itoa(i)+"_"+itoa(j)+".py")
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte("def f"+itoa(i)+"_"+itoa(j)+"():\n    pass\n"), 0o644); err != nil {
					errs <- err
					return
				}
				if _, err := ix.Update(context.Background()); err != nil {
					errs <- err
				}
				ix.Symbols("f", 5)
				ix.Card("Greet", false)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var w warnings
	c := open(t, root, dir, &w)
	if len(w.list()) != 0 {
		t.Fatalf("index damaged by concurrent updates: %q", w.list())
	}
	update(t, c)
	for i := range 2 {
		for j := range 10 {
			if _, err := c.Card("f"+itoa(i)+"_"+itoa(j), false); err != nil {
				t.Error(err)
			}
		}
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != indexName && e.Name() != journalName {
			t.Errorf("index directory holds %s", e.Name())
		}
	}
}

func git(t *testing.T, root string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	cmd.Env = append(cmd.Env, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func commitAs(t *testing.T, root, name, when string, msg string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + strings.ToLower(name) + "@example.com",
		"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + strings.ToLower(name) + "@example.com",
		"GIT_AUTHOR_DATE=" + when, "GIT_COMMITTER_DATE=" + when,
	}
	git(t, root, env, "add", "-A")
	git(t, root, env, "commit", "-q", "-m", msg)
}

func TestHistory(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	root := project(t)
	git(t, root, nil, "init", "-q", "-b", "main")
	commitAs(t, root, "Ann", "2026-01-01T10:00:00Z", "first", nil)
	commitAs(t, root, "Bob", "2026-01-02T10:00:00Z", "greet louder", map[string]string{
		"util/util.go": "package util\n\n// Greet greets.\nfunc Greet() {}\n",
		"main.go":      "package main\n\nfunc main() {}\n",
	})
	commitAs(t, root, "Bob", "2026-01-03T10:00:00Z", "greet again", map[string]string{
		"util/util.go": "package util\n\n// Greet greets twice.\nfunc Greet() {}\n",
		"main.go":      "package main\n\nfunc main() { }\n",
	})
	ix := open(t, root, t.TempDir(), nil)
	s := update(t, ix)
	if s.Commits != 3 {
		t.Errorf("%d commits read, want 3", s.Commits)
	}
	st := ix.Status()
	if len(st.Head) != 40 {
		t.Errorf("head %q", st.Head)
	}
	cc := ix.Cochange("util/util.go", 5)
	if len(cc) == 0 || cc[0].Path != "main.go" || cc[0].Count != 3 {
		t.Errorf("cochange of util/util.go: %+v", cc)
	}
	ex := ix.Experts("util/util.go")
	if len(ex) != 2 || ex[0].Author != "Bob" || ex[0].Commits != 2 {
		t.Errorf("experts of util/util.go: %+v", ex)
	}
	log := ix.Log("Greet", 10)
	if len(log) != 3 || log[0].Subject != "greet again" {
		t.Errorf("log of Greet: %+v", log)
	}
	// A new commit is read incrementally.
	commitAs(t, root, "Cid", "2026-01-04T10:00:00Z", "notes", map[string]string{"notes.txt": "more\n"})
	if s := update(t, ix); s.Commits != 1 {
		t.Errorf("%d commits read after one more, want 1", s.Commits)
	}
	if ex := ix.Experts("notes.txt"); len(ex) != 2 || ex[0].Author != "Cid" {
		t.Errorf("experts of notes.txt: %+v", ex)
	}
	// A rewritten history is read again from the start.
	git(t, root, nil, "reset", "-q", "--hard", "HEAD~2")
	commitAs(t, root, "Dee", "2026-01-05T10:00:00Z", "rewrite", map[string]string{"notes.txt": "other\n"})
	update(t, ix)
	if log := ix.Log("util/util.go", 10); len(log) != 2 {
		t.Errorf("log of util/util.go after a rewrite: %+v", log)
	}
	if ex := ix.Experts("notes.txt"); len(ex) != 2 || ex[0].Author != "Dee" {
		t.Errorf("experts of notes.txt after a rewrite: %+v", ex)
	}
}

func TestGitHead(t *testing.T) {
	root := project(t)
	if h, repo := gitHead(root); h != "" || repo {
		t.Errorf("head outside a repository: %q, %v", h, repo)
	}
	git(t, root, nil, "init", "-q", "-b", "main")
	commitAs(t, root, "Ann", "2026-01-01T10:00:00Z", "first", nil)
	want := func() string {
		out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if h, _ := gitHead(filepath.Join(root, "util")); h != want() {
		t.Errorf("head from a subdirectory %q, want %q", h, want())
	}
	git(t, root, nil, "pack-refs", "--all")
	if h, _ := gitHead(root); h != want() {
		t.Errorf("head from packed refs %q, want %q", h, want())
	}
	git(t, root, nil, "checkout", "-q", "--detach")
	if h, _ := gitHead(root); h != want() {
		t.Errorf("detached head %q, want %q", h, want())
	}
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, root, nil, "worktree", "add", "-q", "-b", "other", wt)
	commitAs(t, wt, "Bob", "2026-01-02T10:00:00Z", "in the worktree", map[string]string{"notes.txt": "x\n"})
	out, _ := exec.Command("git", "-C", wt, "rev-parse", "HEAD").Output()
	if h, _ := gitHead(wt); h != strings.TrimSpace(string(out)) || h == want() {
		t.Errorf("worktree head %q, want %q", h, out)
	}
}

// An index whose ranking model is of the first rank format (names and
// terms in the order met, not sorted) is rebuilt, not searched wrongly.
func TestOldRankFormatRebuilt(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	update(t, open(t, root, dir, nil))
	st, _, _, err := loadState(dir)
	if err != nil || st == nil || len(st.Rank) < 9 {
		t.Fatalf("loadState: %v", err)
	}
	st.Rank = bytes.Clone(st.Rank) // a slice of the file, mapped read-only
	st.Rank[len("mirarank")] = 1   // the version, a one-byte varint
	if _, _, err := saveState(dir, st); err != nil {
		t.Fatal(err)
	}
	var w warnings
	ix := open(t, root, dir, &w)
	if msgs := w.list(); len(msgs) != 1 || !strings.Contains(msgs[0], "rebuilding the index") || !strings.Contains(msgs[0], "version 1") {
		t.Fatalf("warnings %q", msgs)
	}
	if s := update(t, ix); s.Added == 0 {
		t.Errorf("nothing rebuilt: %+v", s)
	}
	if hits := ix.Files(Query{Text: "greet"}); len(hits) == 0 {
		t.Errorf("rebuilt index finds nothing")
	}
}

// TestUpdatePhases checks that an update reports its phases in order,
// each the sum of the parts Stats gives on their own, and that a large
// update resolves the call graph before it returns while a small one
// leaves it to the first query that needs it.
func TestUpdatePhases(t *testing.T) {
	root := t.TempDir()
	n := maxPatch + 10
	for i := range n {
		src := "package p\n\nfunc F" + strconv.Itoa(i) + "() { G() }\n"
		if err := os.WriteFile(filepath.Join(root, "f"+strconv.Itoa(i)+".go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "g.go"), []byte("package p\n\nfunc G() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(context.Background(), Options{Root: root, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ix.Update(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Added != n+1 {
		t.Fatalf("added %d, want %d", s.Added, n+1)
	}
	var names []string
	for _, p := range s.Phases {
		names = append(names, p.Name)
	}
	if want := []string{"definitions", "references", "ranking", "history", "save"}; !slices.Equal(names, want) {
		t.Fatalf("phases %v, want %v", names, want)
	}
	if got, want := s.Phases[0].Wall, s.Walk+s.Parse; got != want {
		t.Errorf("definitions %v, want walk+parse %v", got, want)
	}
	for i, d := range []time.Duration{s.Graph, s.Rank, s.History, s.Save} {
		if s.Phases[i+1].Wall != d {
			t.Errorf("%s: %v, want %v", s.Phases[i+1].Name, s.Phases[i+1].Wall, d)
		}
	}
	if s.Parse <= 0 || s.Rank <= 0 || s.Save <= 0 || s.Graph <= 0 {
		t.Errorf("a phase of a full build took no time: %+v", s)
	}
	ix.derMu.Lock()
	built := ix.der != nil && ix.der.g != nil
	ix.derMu.Unlock()
	if !built {
		t.Fatal("a large update left the call graph to the first query")
	}
	if got := ix.Callers("G", 1); len(got) != n {
		t.Errorf("G has %d callers, want %d", len(got), n)
	}

	// One file changed: the tables are patched on the next query, and the
	// graph waits for one that needs it.
	if err := os.WriteFile(filepath.Join(root, "g.go"), []byte("package p\n\nfunc G() {}\n\nfunc H() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err = ix.Update(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.Changed != 1 {
		t.Fatalf("changed %d, want 1", s.Changed)
	}
	ix.derMu.Lock()
	st := ix.derSt
	ix.derMu.Unlock()
	ix.mu.RLock()
	cur := ix.st
	ix.mu.RUnlock()
	if st == cur {
		t.Error("a one-file update built the lookup tables itself")
	}
}
