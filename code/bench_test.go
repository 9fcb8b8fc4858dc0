package code

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miramem/mira/code/parse"
)

// The benchmarks index a copy of the Go distribution's src directory
// (about 10k files), made once per run, so that one may be edited.
var (
	gorootOnce sync.Once
	gorootDir  string
	gorootErr  error
	benchTmp   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchTmp != "" {
		os.RemoveAll(benchTmp)
	}
	os.Exit(code)
}

func gorootCopy(b *testing.B) string {
	b.Helper()
	gorootOnce.Do(func() {
		src := filepath.Join(runtime.GOROOT(), "src")
		if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
			src = filepath.Join(strings.TrimSpace(string(out)), "src")
		}
		benchTmp, gorootErr = os.MkdirTemp("", "mira-code-bench-")
		if gorootErr != nil {
			return
		}
		gorootDir = filepath.Join(benchTmp, "src")
		out, err := exec.Command("cp", "-R", src, gorootDir).CombinedOutput()
		if err != nil {
			gorootErr = fmt.Errorf("copy %s: %v: %s", src, err, out)
		}
	})
	if gorootErr != nil {
		b.Skip(gorootErr)
	}
	return gorootDir
}

// BenchmarkIndexGoroot builds the index of GOROOT/src from nothing, and
// times ctags over the same tree in the same run for comparison. It
// reports each phase of the build (Stats.Phases) by wall and CPU time:
// defs (walk, read, parse), refs (the call graph), rank, history, save;
// x-ctags is the definitions phase's wall time against ctags'.
func BenchmarkIndexGoroot(b *testing.B) {
	root := gorootCopy(b)
	var ctags, ctagsCPU time.Duration
	if _, err := exec.LookPath("ctags"); err == nil {
		c := cpuTime()
		t := time.Now()
		cmd := exec.Command("ctags", "-R", "--output-format=json", "-f", "-", root)
		cmd.Stdout = nil
		if err := cmd.Run(); err == nil {
			ctags = time.Since(t)
			ctagsCPU = cpuTime() - c
		}
	}
	var s Stats
	var size int64
	cpu := cpuTime()
	for b.Loop() {
		dir := b.TempDir()
		ix, err := Open(context.Background(), Options{Root: root, Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if s, err = ix.Update(context.Background()); err != nil {
			b.Fatal(err)
		}
		if fi, err := os.Stat(filepath.Join(dir, indexName)); err == nil {
			size = fi.Size()
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(s.Files), "files")
	short := map[string]string{"definitions": "defs", "references": "refs", "ranking": "rank"}
	for _, p := range s.Phases {
		n := p.Name
		if short[n] != "" {
			n = short[n]
		}
		b.ReportMetric(p.Wall.Seconds()*1e3, n+"-ms")
		b.ReportMetric(p.CPU.Seconds()*1e3, n+"-cpu-ms")
	}
	b.ReportMetric(float64(size)/(1<<20), "index-MiB")
	if ctags > 0 {
		b.ReportMetric(ctags.Seconds()*1e3, "ctags-ms")
		b.ReportMetric(ctagsCPU.Seconds()*1e3, "ctags-cpu-ms")
		b.ReportMetric(float64(s.Walk+s.Parse)/float64(ctags), "x-ctags")
	}
}

// BenchmarkParseGorootDefsRefs times the parser alone over GOROOT/src:
// definitions only, then definitions and references.
func BenchmarkParseGorootDefsRefs(b *testing.B) {
	root := gorootCopy(b)
	ents, err := walk(context.Background(), root, "", nil)
	if err != nil {
		b.Fatal(err)
	}
	var srcs [][]byte
	var names []string
	for _, e := range ents {
		if parse.Language(e.path) == "" || e.size > maxFileSize {
			continue
		}
		bs, err := os.ReadFile(filepath.Join(root, e.path))
		if err != nil {
			continue
		}
		srcs = append(srcs, bs)
		names = append(names, e.path)
	}
	for _, mode := range []string{"defs", "defs+refs"} {
		b.Run(mode, func(b *testing.B) {
			cpu := cpuTime()
			defer func() { reportCPU(b, cpu) }()
			for b.Loop() {
				for i, s := range srcs {
					if mode == "defs" {
						parse.ParseSymbols(names[i], s)
					} else {
						parse.Parse(names[i], s)
					}
				}
			}
			b.ReportMetric(float64(len(srcs)), "files")
		})
	}
}

func openGoroot(b *testing.B) *Index {
	b.Helper()
	root := gorootCopy(b)
	ix, err := Open(context.Background(), Options{Root: root, Dir: filepath.Join(benchTmp, "index")})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.Update(context.Background()); err != nil {
		b.Fatal(err)
	}
	return ix
}

// BenchmarkUpdateNoChange is the stat pass over 10k unchanged files.
func BenchmarkUpdateNoChange(b *testing.B) {
	ix := openGoroot(b)
	cpu := cpuTime()
	defer func() { reportCPU(b, cpu) }()
	for b.Loop() {
		s, err := ix.Update(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if s.Added+s.Changed+s.Removed != 0 {
			b.Fatalf("changes in an unchanged tree: %+v", s)
		}
	}
}

// BenchmarkOneFileChange edits one file, updates, and asks for a card of
// the new definition: the time until an edit is visible to a query, with
// a full stat pass (Update) and as a watcher would (UpdatePaths).
func BenchmarkOneFileChange(b *testing.B) {
	ix := openGoroot(b)
	p := filepath.Join(ix.Root(), "strings", "mira_bench.go")
	defer os.Remove(p)
	i := 0
	for _, mode := range []string{"Update", "UpdatePaths"} {
		b.Run(mode, func(b *testing.B) {
			cpu := cpuTime()
			defer func() { reportCPU(b, cpu) }()
			for b.Loop() {
				i++
				name := fmt.Sprintf("MiraBench%d", i)
				src := fmt.Sprintf("package strings\n\n// %s is new.\nfunc %s() {}\n", name, name)
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					b.Fatal(err)
				}
				var err error
				if mode == "Update" {
					_, err = ix.Update(context.Background())
				} else {
					_, err = ix.UpdatePaths(context.Background(), []string{p})
				}
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ix.Card(name, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTouchpoints is a warm query over 10k files.
func BenchmarkTouchpoints(b *testing.B) {
	ix := openGoroot(b)
	q := Query{Text: "parse a duration string with units", K: 8, Files: []string{"time/format.go"}}
	ix.Touchpoints(q)
	cpu := cpuTime()
	defer func() { reportCPU(b, cpu) }()
	for b.Loop() {
		if len(ix.Touchpoints(q)) == 0 {
			b.Fatal("no touchpoints")
		}
	}
}

// BenchmarkOpenGoroot loads the index of 10k files from disk, and reports
// the heap one open index holds.
func BenchmarkOpenGoroot(b *testing.B) {
	ix := openGoroot(b)
	root, dir := ix.Root(), ix.Dir()
	ix.Close()
	ix = nil
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu := cpuTime()
	var keep *Index
	for b.Loop() {
		keep = nil
		var err error
		if keep, err = Open(context.Background(), Options{Root: root, Dir: dir}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "heap-MiB")
}

// reportCPU reports the CPU time per operation since start (see cpuTime).
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(cpuTime()-start)/1e6/float64(b.N), "cpu-ms/op")
	}
}
