package code

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMapListsCodeOnly: the map is the tree of source directories; those
// holding only documents, data, assets or test fixtures are left out of
// it, yet their files stay searchable.
func TestMapListsCodeOnly(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"main.go":                         "package main\n\nfunc main() { run() }\n",
		"run.go":                          "package main\n\nfunc run() {}\n",
		"README.md":                       "# demo\n",
		"docs/guide.md":                   "# guide to the zebra feature\n",
		"docs/api/ref.md":                 "# reference\n",
		"man/demo.1.md":                   "% demo(1)\n",
		"assets/logo.svg":                 "<svg/>\n",
		"fixtures/users.json":             "{\"zebra\": 1}\n",
		"lib/util.py":                     "def util():\n    pass\n",
		"lib/data.csv":                    "a,b\n",
		"lib/testdata/case.go":            "package x\n\nfunc Case() {}\n",
		"lib/testdata/deep/more.py":       "def more():\n    pass\n",
		"web/app.js":                      "export function app() {}\n",
		"web/static/site.css":             "body{}\n",
		"internal/testdata/golden.txt":    "zebra\n",
		"internal/parse/parse.go":         "package parse\n\nfunc Parse() {}\n",
		"internal/parse/testdata/a.go.go": "package a\n",
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
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	m := ix.Map(0, nil)
	var dirs []string
	for _, mo := range m.Modules {
		dirs = append(dirs, mo.Path)
	}
	want := []string{".", "internal/parse", "lib", "web"}
	if strings.Join(dirs, " ") != strings.Join(want, " ") {
		t.Errorf("map modules %q, want %q; map:\n%s", dirs, want, m.Text)
	}
	if !strings.HasPrefix(m.Text, "/ (3 files)\n") || !strings.Contains(m.Text, "\nlib/ (2 files)\n") {
		t.Errorf("a directory in the map counts all its files:\n%s", m.Text)
	}
	// Left out of the map, still searched.
	hits := ix.Files(Query{Text: "zebra"})
	found := map[string]bool{}
	for _, h := range hits {
		found[h.Path] = true
	}
	for _, p := range []string{"docs/guide.md", "fixtures/users.json"} {
		if !found[p] {
			t.Errorf("search for zebra misses %s: %+v", p, hits)
		}
	}
}
