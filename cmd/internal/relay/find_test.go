package relay

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestFindAbsolute: a program run by a relative path (bin/mira-recall)
// finds its sibling as an absolute path, which a server started in "/"
// can be executed from; as typed, the server never started and the first
// recall after an import built the index in its own process.
func TestFindAbsolute(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no executable bit on Windows")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "mira-index"), []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	prev := os.Args[0]
	os.Args[0] = filepath.Join("bin", "mira-recall")
	t.Cleanup(func() { os.Args[0] = prev })
	p, err := find("mira-index")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(p) {
		t.Fatalf("find = %q, want an absolute path", p)
	}
	if want, _ := filepath.EvalSymlinks(filepath.Join(dir, "bin", "mira-index")); p != want && p != filepath.Join(dir, "bin", "mira-index") {
		t.Errorf("find = %q, want %q", p, want)
	}
}
