package code

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, root, rel, body string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// Some file systems keep mtimes coarse: make each write visible.
	later := time.Now().Add(time.Duration(len(body)) * time.Second)
	os.Chtimes(p, later, later)
}

// A small update writes a journal beside the base, and a reopened index
// replays it: the ranking model too.
func TestJournal(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	ix := open(t, root, dir, nil)
	update(t, ix)
	base, _ := os.ReadFile(filepath.Join(dir, indexName))

	writeFile(t, root, "util/extra.go", "package util\n\n// Zebra stripes.\nfunc Zebra() { Greet(\"z\") }\n")
	os.Remove(filepath.Join(root, "notes.txt"))
	update(t, ix)
	if now, _ := os.ReadFile(filepath.Join(dir, indexName)); !bytes.Equal(now, base) {
		t.Errorf("a small update rewrote the base")
	}
	if _, err := os.Stat(filepath.Join(dir, journalName)); err != nil {
		t.Fatalf("no journal: %v", err)
	}
	var w warnings
	re := open(t, root, dir, &w)
	if len(w.list()) != 0 {
		t.Fatalf("warnings: %q", w.list())
	}
	if c, err := re.Card("Zebra", false); err != nil || c.Doc != "Zebra stripes." {
		t.Errorf("journal not replayed: %+v %v", c, err)
	}
	if hits := re.Symbols("Zebra", 3); len(hits) == 0 || hits[0].Name != "Zebra" {
		t.Errorf("ranking model not given the journal's file: %+v", hits)
	}
	if fh := re.Files(Query{Text: "plain notes about greeting"}); len(fh) > 0 && fh[0].Path == "notes.txt" {
		t.Errorf("removed file still ranked: %+v", fh)
	}
	if _, err := re.Card("Zebra", false); err != nil {
		t.Error(err)
	}
	if edges := edgeSet(re.Callers("Greet", 1)); !strings.Contains(strings.Join(edges, " "), "Zebra->Greet") {
		t.Errorf("callers after replay: %q", edges)
	}
	if s := update(t, re); s.Added+s.Changed+s.Removed != 0 {
		t.Errorf("replayed index saw changes: %+v", s)
	}

	// Enough changes fold the journal into a new base.
	for i := range maxJournalFiles + 1 {
		writeFile(t, root, "many/f"+itoa(i)+".py", "def many"+itoa(i)+"():\n    pass\n")
	}
	update(t, re)
	if _, err := os.Stat(filepath.Join(dir, journalName)); !os.IsNotExist(err) {
		t.Errorf("journal kept after a large update: %v", err)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, indexName)); bytes.Equal(now, base) {
		t.Errorf("a large update did not rewrite the base")
	}
	re2 := open(t, root, dir, nil)
	for _, n := range []string{"Zebra", "many0", "many256"} {
		if _, err := re2.Card(n, false); err != nil {
			t.Errorf("after folding: %v", err)
		}
	}
}

// A damaged journal is ignored with a warning: the base is used, and the
// next update finds the journal's files changed again.
func TestDamagedJournalIgnored(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	ix := open(t, root, dir, nil)
	update(t, ix)
	writeFile(t, root, "util/extra.go", "package util\n\nfunc Zebra() {}\n")
	update(t, ix)
	name := filepath.Join(dir, journalName)
	b, _ := os.ReadFile(name)
	b[len(b)-40] ^= 1
	os.WriteFile(name, b, 0o600)

	var w warnings
	re := open(t, root, dir, &w)
	if msgs := w.list(); len(msgs) != 1 || !strings.Contains(msgs[0], "ignoring the journal") {
		t.Errorf("warnings %q", msgs)
	}
	if _, err := re.Card("Greet", false); err != nil {
		t.Errorf("base not usable: %v", err)
	}
	if _, err := re.Card("Zebra", false); err == nil {
		t.Errorf("damaged journal trusted")
	}
	if st := re.Status(); len(st.Stale) != 1 || st.Stale[0] != "util/extra.go" {
		t.Errorf("stale %q", st.Stale)
	}
	if s := update(t, re); s.Added != 1 {
		t.Errorf("update after a damaged journal: %+v", s)
	}
	if _, err := re.Card("Zebra", false); err != nil {
		t.Error(err)
	}
}

// A journal written against another base (a process replaced the base
// since) is not applied to the new one.
func TestJournalOfAnotherBase(t *testing.T) {
	root := project(t)
	dir := t.TempDir()
	ix := open(t, root, dir, nil)
	update(t, ix)
	writeFile(t, root, "util/extra.go", "package util\n\nfunc Zebra() {}\n")
	update(t, ix)
	journal, _ := os.ReadFile(filepath.Join(dir, journalName))
	// Another process rebuilds the base from nothing.
	other := open(t, root, t.TempDir(), nil)
	os.Remove(filepath.Join(root, "util", "extra.go"))
	update(t, other)
	b, _ := os.ReadFile(filepath.Join(other.Dir(), indexName))
	os.WriteFile(filepath.Join(dir, indexName), b, 0o600)
	os.WriteFile(filepath.Join(dir, journalName), journal, 0o600)

	var w warnings
	re := open(t, root, dir, &w)
	if len(w.list()) != 0 {
		t.Errorf("warnings %q", w.list())
	}
	if _, err := re.Card("Zebra", false); err == nil {
		t.Errorf("journal of another base applied")
	}
}

// The lookup tables patched after a small update answer as tables built
// from nothing would.
func TestDerivedPatch(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	ix.derive()
	writeFile(t, root, "util/util.go", "package util\n\n// Greet greets.\nfunc Greet(n string) string { return Shout(n) }\n\nfunc Shout(s string) string { return s }\n")
	writeFile(t, root, "util/more.go", "package util\n\nfunc More() { Greet(\"m\") }\n")
	os.Remove(filepath.Join(root, "py", "app.py"))
	update(t, ix)
	patched, _ := ix.derive()
	if patched.dead == 0 {
		t.Fatalf("tables rebuilt, not patched")
	}
	answers := func() []string {
		var out []string
		for _, n := range []string{"Greet", "Shout", "More", "Most", "App", "helper", "main", "run"} {
			c, err := ix.Card(n, false)
			out = append(out, n+": "+c.Path+":"+itoa(c.Line)+" "+c.Signature+" "+fmtErr(err))
			out = append(out, edgeSet(ix.Callers(n, 2))...)
			out = append(out, edgeSet(ix.Callees(n, 2))...)
		}
		return append(out, ix.Map(0, nil).Text)
	}
	check := func() {
		t.Helper()
		got := answers()
		ix.derMu.Lock()
		der, derSt := ix.der, ix.derSt
		ix.der, ix.derSt = nil, nil
		ix.derMu.Unlock()
		want := answers()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("patched tables answer\n%s\nrebuilt ones\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		ix.derMu.Lock()
		ix.der, ix.derSt = der, derSt
		ix.derMu.Unlock()
	}
	check()
	// A patch of a patch.
	writeFile(t, root, "util/more.go", "package util\n\nfunc More() { Shout(\"m\") }\n\nfunc Most() { More() }\n")
	writeFile(t, root, "py/app.py", "def helper():\n    return App()\n\nclass App:\n    def run(self):\n        helper()\n")
	update(t, ix)
	if d, _ := ix.derive(); d.dead <= patched.dead {
		t.Fatalf("tables rebuilt, not patched again")
	}
	check()
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestUpdatePaths(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	writeFile(t, root, "util/util.go", "package util\n\n// Greet greets.\nfunc Greet() {}\n")
	writeFile(t, root, "util/new.go", "package util\n\nfunc Fresh() {}\n")
	writeFile(t, root, "build/gen.go", "package build\n\nfunc Generated() {}\n")
	writeFile(t, root, "node_modules/y/index.js", "function dep2() {}\n")
	writeFile(t, root, "py/sub/secret.py", "def hidden2():\n    pass\n")
	os.Remove(filepath.Join(root, "web", "app.js"))
	s, err := ix.UpdatePaths(t.Context(), []string{"util/util.go", filepath.Join(root, "util", "new.go"),
		"build/gen.go", "node_modules/y/index.js", "py/sub/secret.py", "web/app.js", "no/such.go"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Added != 1 || s.Changed != 1 || s.Removed != 1 {
		t.Errorf("stats %+v, want 1 added, 1 changed, 1 removed", s)
	}
	if c, err := ix.Card("Greet", false); err != nil || c.Doc != "Greet greets." {
		t.Errorf("edit not seen: %+v %v", c, err)
	}
	if _, err := ix.Card("Fresh", false); err != nil {
		t.Errorf("new file not seen: %v", err)
	}
	for _, n := range []string{"Generated", "dep2", "hidden2", "start"} {
		if _, err := ix.Card(n, false); err == nil {
			t.Errorf("%s indexed", n)
		}
	}
	if s := update(t, ix); s.Added+s.Changed+s.Removed != 0 {
		t.Errorf("a full update after UpdatePaths found more: %+v", s)
	}
	// A changed .gitignore may change anything below it: a full walk.
	writeFile(t, root, "util/.gitignore", "new.go\n")
	if _, err := ix.UpdatePaths(t.Context(), []string{"util/.gitignore"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Card("Fresh", false); err == nil {
		t.Errorf("newly ignored file kept")
	}
	if _, err := ix.UpdatePaths(t.Context(), []string{"../outside.go"}); err == nil {
		t.Errorf("a path outside the root accepted")
	}
}

// Directory order lists "a/b.go" before "a.go"; the index keeps files in
// byte order, and an index saved so must load without being rebuilt.
func TestReopenKeepsIndex(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a.go", "package a\n\nfunc A() {}\n")
	writeFile(t, root, "a/b.go", "package a\n\nfunc B() {}\n")
	writeFile(t, root, "a-c.go", "package a\n\nfunc C() {}\n")
	dir := t.TempDir()
	update(t, open(t, root, dir, nil))
	var w warnings
	re := open(t, root, dir, &w)
	if len(w.list()) != 0 {
		t.Fatalf("reopening: %q", w.list())
	}
	if s := update(t, re); s.Added != 0 {
		t.Errorf("reopened index rebuilt: %+v", s)
	}
}
