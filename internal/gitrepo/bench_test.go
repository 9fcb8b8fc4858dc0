package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchStore makes a repository of n entry files laid out like a store
// (entries/<scope>/<kind-dir>/<name>.md), committed with the git CLI, which
// is quicker at this than a test should wait for.
func benchStore(b *testing.B, n int) (*Repo, string) {
	b.Helper()
	dir := b.TempDir()
	kinds := []string{"facts", "preferences", "decisions", "corrections", "goals", "tasks", "notes", "summaries"}
	for i := range n {
		p := filepath.Join(dir, "entries", "global", kinds[i%len(kinds)], fmt.Sprintf("20261121T%06dZ__01J9%020d.md", i, i))
		if i == 0 || i < len(kinds) {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		body := fmt.Sprintf("---\nid: 01J9%020d\nkind: fact\nscope: global\n---\nMemory number %d, long enough to look like a real one.\n", i, i)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Automatic gc would repack in the background while the benchmark runs.
	runGit(b, dir, "init", "--quiet", "--initial-branch=main")
	runGit(b, dir, "config", "gc.auto", "0")
	runGit(b, dir, "add", "-A")
	runGit(b, dir, "commit", "--quiet", "-m", "setup")
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	return r, dir
}

// BenchmarkCommit measures one commit of one new file, the common case of
// mira-remember, including the index read and write.
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			r, dir := benchStore(b, n)
			i := 0
			cpu := cpuTime()
			for b.Loop() {
				name := fmt.Sprintf("entries/global/facts/new%06d.md", i)
				i++
				if err := os.WriteFile(filepath.Join(dir, name), []byte("a new memory\n"), 0o644); err != nil {
					b.Fatal(err)
				}
				if _, err := r.Commit([]Change{{Path: name}}, "remember: fact\n\nMira-Command: bench\n", testSig); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(time.Millisecond)/float64(i), "cpu-ms/op")
		})
	}
}

// BenchmarkDiff measures Diff between two commits one path apart in a large
// store: the freshness check of the search index, and a writer's look at
// what the index has not seen. The store's objects are loose, as the git
// CLI leaves them, or packed, as a store in use has them.
func BenchmarkDiff(b *testing.B) {
	for _, packed := range []bool{false, true} {
		b.Run(fmt.Sprintf("packed=%v", packed), func(b *testing.B) {
			r, dir := benchStore(b, 10000)
			from, err := r.Head()
			if err != nil {
				b.Fatal(err)
			}
			name := "entries/global/facts/changed.md"
			if err := os.WriteFile(filepath.Join(dir, name), []byte("changed\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			to, err := r.Commit([]Change{{Path: name}}, "m", testSig)
			if err != nil {
				b.Fatal(err)
			}
			if packed {
				runGit(b, dir, "repack", "-adq")
			}
			for b.Loop() {
				// A fresh handle per run, as each command is a fresh process.
				fresh, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				paths, err := fresh.Diff(from, to, "entries/")
				if err != nil || len(paths) != 1 {
					b.Fatalf("Diff = %v, %v", paths, err)
				}
			}
		})
	}
}
