package parse

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

type srcFile struct {
	path string
	src  []byte
}

// loadTree reads every file under dir that Language maps to lang.
func loadTree(b *testing.B, dir, lang string) (files []srcFile, size int64) {
	b.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || Language(p) != lang {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files = append(files, srcFile{p, src})
		size += int64(len(src))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return files, size
}

// parseAll parses files on all cores, as the index does.
func parseAll(files []srcFile, parse func(string, []byte) (*File, error)) (symbols, refs int64) {
	var next, nsym, nref atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				f, err := parse(files[i].path, files[i].src)
				if err == nil {
					nsym.Add(int64(len(f.Symbols)))
					nref.Add(int64(len(f.Refs)))
				}
			}
		}()
	}
	wg.Wait()
	return nsym.Load(), nref.Load()
}

func benchTree(b *testing.B, dir, lang string) {
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("no source tree at %s: %v", dir, err)
	}
	files, size := loadTree(b, dir, lang)
	if len(files) == 0 {
		b.Skipf("no %s files under %s", lang, dir)
	}
	for _, bc := range []struct {
		name  string
		parse func(string, []byte) (*File, error)
	}{{"symbols", ParseSymbols}, {"refs", Parse}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(size)
			var syms, refs int64
			for b.Loop() {
				syms, refs = parseAll(files, bc.parse)
			}
			b.ReportMetric(float64(len(files)), "files")
			b.ReportMetric(float64(syms), "symbols")
			b.ReportMetric(float64(refs), "refs")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(files)), "ns/file")
		})
	}
}

// BenchmarkParseGoroot parses every .go file of the Go toolchain's own sources on all
// cores, the tree the index's speed is judged on against universal-ctags.
func BenchmarkParseGoroot(b *testing.B) {
	benchTree(b, filepath.Join(runtime.GOROOT(), "src"), "go")
}

// BenchmarkParseTree parses the files of one language under $MIRA_PARSE_BENCH_DIR
// (language $MIRA_PARSE_BENCH_LANG, "python" by default) for scanner throughput on
// a real tree.
func BenchmarkParseTree(b *testing.B) {
	dir, lang := os.Getenv("MIRA_PARSE_BENCH_DIR"), os.Getenv("MIRA_PARSE_BENCH_LANG")
	if dir == "" {
		b.Skip("set MIRA_PARSE_BENCH_DIR to a source tree (and MIRA_PARSE_BENCH_LANG)")
	}
	if lang == "" {
		lang = "python"
	}
	benchTree(b, dir, lang)
}
