package code

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDirFilterAgreesWithWalk: the directories a watcher leaves out
// (DirFilter) are exactly those whose files the walk leaves out, by name
// (SkipDir) or by .gitignore files at any level and .git/info/exclude.
func TestDirFilterAgreesWithWalk(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		".gitignore":          "build/\n/top/\n",
		".git/info/exclude":   "local/\n",
		"a.go":                "package a\n",
		"build/x.go":          "package b\n",
		"top/x.go":            "package t\n",
		"sub/top/x.go":        "package t\n",
		"sub/.gitignore":      "gen/\n!keep/\n",
		"sub/gen/x.go":        "package g\n",
		"sub/keep/x.go":       "package k\n",
		"local/x.go":          "package l\n",
		"node_modules/m/x.js": "x\n",
		"src/vendor/v/x.go":   "package v\n",
		"src/deep/build/x.go": "package b\n",
		"src/deep/other/x.go": "package o\n",
	}
	for p, s := range files {
		f := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := walk(context.Background(), root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	indexed := map[string]bool{}
	for _, e := range ents {
		indexed[e.path] = true
	}
	f := NewDirFilter(root)
	for p := range files {
		if !strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, ".js") || !strings.Contains(p, "/") {
			continue
		}
		dir := p[:strings.LastIndex(p, "/")]
		if skip := f.Skip(dir); skip == indexed[p] {
			t.Errorf("Skip(%q) = %v, but the walk indexes %s: %v", dir, skip, p, indexed[p])
		}
	}
	if !SkipDir(".git") || !SkipDir("node_modules") || SkipDir("src") {
		t.Error("SkipDir: .git and node_modules are skipped, src is not")
	}
}
