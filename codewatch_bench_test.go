package mira

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCodeOneFileChange is the time from a one-file edit to a Card
// that shows it, in a generated project of 10k files (100 packages of
// 100), as a long-running process sees it: with the watcher (the files
// it saw change are looked at) and without (a stat of every file).
func BenchmarkCodeOneFileChange(b *testing.B) {
	root := b.TempDir()
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			src := fmt.Sprintf("package pkg%03d\n\n// F%03d%03d does one thing.\nfunc F%03d%03d(n int) int { return n + %d }\n", d, d, f, d, f, f)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), []byte(src), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	p := filepath.Join(root, "pkg050", "f050.go")
	i := 0
	for _, watch := range []bool{true, false} {
		b.Run(map[bool]string{true: "watch", false: "stat"}[watch], func(b *testing.B) {
			c, err := OpenCode(b.Context(), CodeOptions{Root: root, Dir: b.TempDir(), Watch: watch, Getenv: func(string) string { return "" }})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Update(b.Context()); err != nil {
				b.Fatal(err)
			}
			if watch && c.watch == nil {
				b.Fatal("no watcher")
			}
			for b.Loop() {
				i++
				name := fmt.Sprintf("Edited%d", i)
				src := fmt.Sprintf("package pkg050\n\n// %s is new.\nfunc %s() {}\n", name, name)
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					b.Fatal(err)
				}
				if _, err := c.Card(b.Context(), name, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
