package treewatch

import (
	"os"
	"path/filepath"
	"slices"
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

// TestTake: Take lists the files changed since the last Take, and asks
// for a look at every file on the first Take, for a new or removed
// directory, a moved HEAD, and more changed files than MaxPaths; a
// .gitignore that changed is said.
func TestTake(t *testing.T) {
	root := t.TempDir()
	cookies := t.TempDir()
	write(t, filepath.Join(root, "a.go"), "package a\n")
	write(t, filepath.Join(root, "d", "b.go"), "package d\n")
	write(t, filepath.Join(root, ".git", "HEAD"), "ref: refs/heads/main\n")
	git := filepath.Join(root, ".git")
	w, err := Start(Options{
		Root:      root,
		Skip:      func(rel string) bool { return rel == ".git" },
		Git:       []string{filepath.Join(git, "HEAD")},
		CookieDir: cookies,
		MaxPaths:  3,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	take := func() Changes {
		t.Helper()
		if err := w.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		return w.Take()
	}
	if c := take(); !c.All {
		t.Errorf("first Take = %+v, want All", c)
	}
	abs := func(ps ...string) []string {
		for i, p := range ps {
			ps[i] = filepath.Join(root, filepath.FromSlash(p))
		}
		return ps
	}
	steps := []struct {
		name  string
		do    func()
		want  Changes
		paths []string
	}{
		{"nothing", func() {}, Changes{}, nil},
		{"edit two files", func() {
			write(t, filepath.Join(root, "a.go"), "package a // 1\n")
			write(t, filepath.Join(root, "d", "b.go"), "package d // 1\n")
		}, Changes{}, abs("a.go", "d/b.go")},
		{"remove a file", func() { os.Remove(filepath.Join(root, "d", "b.go")) }, Changes{}, abs("d/b.go")},
		{"rename a file", func() { os.Rename(filepath.Join(root, "a.go"), filepath.Join(root, "c.go")) }, Changes{}, abs("a.go", "c.go")},
		{".gitignore", func() { write(t, filepath.Join(root, ".gitignore"), "x/\n") }, Changes{Ignore: true}, abs(".gitignore")},
		{"more files than MaxPaths", func() {
			for _, n := range []string{"1", "2", "3", "4"} {
				write(t, filepath.Join(root, n+".go"), "package a\n")
			}
		}, Changes{All: true}, nil},
		{"new directory", func() { write(t, filepath.Join(root, "e", "f.go"), "package e\n") }, Changes{All: true}, nil},
		{"file in it", func() { write(t, filepath.Join(root, "e", "f.go"), "package e // 1\n") }, Changes{}, abs("e/f.go")},
		{"removed directory", func() { os.RemoveAll(filepath.Join(root, "d")) }, Changes{All: true}, nil},
		{"HEAD moved", func() { write(t, filepath.Join(git, "HEAD"), "ref: refs/heads/other\n") }, Changes{All: true}, nil},
	}
	for _, s := range steps {
		s.do()
		c := take()
		if c.All != s.want.All || c.Ignore != s.want.Ignore || !slices.Equal(c.Paths, s.paths) && !(len(c.Paths) == 0 && len(s.paths) == 0) {
			t.Errorf("%s: Take = %+v, want %+v with paths %q", s.name, c, s.want, s.paths)
		}
	}
}
