package treewatch

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGenerations: a change in the tree moves the generation by the time
// Sync returns, also in a directory made after the start; skipped
// directories, the cookie directory and a repository's other files do
// not; its HEAD and refs do.
func TestGenerations(t *testing.T) {
	root := t.TempDir()
	cookies := t.TempDir()
	write(t, filepath.Join(root, "a.go"), "package a\n")
	write(t, filepath.Join(root, "node_modules", "x.js"), "x\n")
	write(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, ".git", "refs", "heads", "main"), "1\n")
	git := filepath.Join(root, ".git")
	w, err := Start(Options{
		Root:      root,
		Skip:      func(rel string) bool { return rel == ".git" || rel == "node_modules" },
		Git:       []string{filepath.Join(git, "HEAD"), filepath.Join(git, "packed-refs"), filepath.Join(git, "refs")},
		CookieDir: cookies,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx := t.Context()
	settle := func() uint64 {
		t.Helper()
		if err := w.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		return w.Gen()
	}
	g := settle()
	steps := []struct {
		name  string
		do    func()
		moves bool
	}{
		{"edit a file", func() { write(t, filepath.Join(root, "a.go"), "package a // x\n") }, true},
		{"nothing", func() {}, false},
		{"skipped directory", func() { write(t, filepath.Join(root, "node_modules", "y.js"), "y\n") }, false},
		{"cookie directory", func() { write(t, filepath.Join(cookies, "index"), "i\n") }, false},
		{"git index", func() { write(t, filepath.Join(git, "index"), "i\n") }, false},
		{"new directory", func() { write(t, filepath.Join(root, "sub", "deep", "b.go"), "package b\n") }, true},
		{"file in the new directory", func() { write(t, filepath.Join(root, "sub", "deep", "b.go"), "package b // y\n") }, true},
		{"commit", func() { write(t, filepath.Join(git, "refs", "heads", "main"), "2\n") }, true},
		{"checkout", func() { write(t, filepath.Join(git, "HEAD"), "ref: refs/heads/other\n") }, true},
		{"remove a file", func() { os.Remove(filepath.Join(root, "a.go")) }, true},
	}
	for _, s := range steps {
		s.do()
		got := settle()
		if moved := got != g; moved != s.moves {
			t.Errorf("%s: generation moved = %v, want %v", s.name, moved, s.moves)
		}
		g = got
	}
	if err := w.Err(); err != nil {
		t.Errorf("Err() = %v", err)
	}
}

// TestStartMissingRoot: a tree that is not there cannot be watched.
func TestStartMissingRoot(t *testing.T) {
	if _, err := Start(Options{Root: filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Error("Start on a missing root: no error")
	}
}
