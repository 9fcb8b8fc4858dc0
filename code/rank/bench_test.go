package rank

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/miramem/mira/code/parse"
)

// The benchmarks run on the Go distribution's own source tree, GOROOT/src:
// about ten thousand real files in one language, the size of a large
// project. Files are read and parsed once, outside the timings.

const benchFiles = 10000

var goroot struct {
	once  sync.Once
	docs  []Doc
	model *Model
}

func gorootDocs(b *testing.B) []Doc {
	goroot.once.Do(func() {
		src := filepath.Join(runtime.GOROOT(), "src")
		var paths []string
		filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".go") {
				paths = append(paths, p)
			}
			return nil
		})
		sort.Strings(paths)
		if len(paths) > benchFiles {
			paths = paths[:benchFiles]
		}
		for _, p := range paths {
			text, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			rel, _ := filepath.Rel(src, p)
			rel = filepath.ToSlash(rel)
			f, _ := parse.Parse(rel, text)
			goroot.docs = append(goroot.docs, Doc{Path: rel, Lang: "go", Text: text, File: f})
		}
		goroot.model = New()
		for _, d := range goroot.docs {
			goroot.model.Put(d)
		}
	})
	if len(goroot.docs) < 1000 {
		b.Fatalf("found %d Go files under GOROOT/src, want a large tree", len(goroot.docs))
	}
	return goroot.docs
}

// BenchmarkPut measures adding one file to a model that holds the tree,
// replacing its previous version: what an incremental update pays per
// changed file.
func BenchmarkPut(b *testing.B) {
	docs := gorootDocs(b)
	m := New()
	for _, d := range docs {
		m.Put(d)
	}
	var bytes int64
	i := 0
	start := cpuTime()
	defer func() { reportCPU(b, start) }()
	for b.Loop() {
		d := docs[i%len(docs)]
		bytes += int64(len(d.Text))
		m.Put(d)
		i++
	}
	b.SetBytes(bytes / int64(max(i, 1)))
}

var benchQueries = []string{
	"Persistent flags should also be used in completions",
	"http server closes idle connections too early when keep-alives are disabled",
	"ParseInLocation",
	"fix race in the scheduler when a goroutine is preempted during a syscall",
	"json decoder should report the offset of a syntax error",
	"TLS handshake: verify the peer certificate chain against the configured roots",
}

// BenchmarkFiles10k measures a warm file-level query on the tree.
func BenchmarkFiles10k(b *testing.B) {
	gorootDocs(b)
	m := goroot.model
	i := 0
	start := cpuTime()
	defer func() { reportCPU(b, start) }()
	for b.Loop() {
		m.Files(Query{Text: benchQueries[i%len(benchQueries)], K: 20})
		i++
	}
	b.ReportMetric(float64(m.Len()), "files")
}

// BenchmarkSymbols10k measures a warm symbol query, by name and by words.
func BenchmarkSymbols10k(b *testing.B) {
	gorootDocs(b)
	m := goroot.model
	i := 0
	start := cpuTime()
	defer func() { reportCPU(b, start) }()
	for b.Loop() {
		m.Symbols(Query{Text: benchQueries[i%len(benchQueries)], K: 20})
		i++
	}
}

// BenchmarkModelMemory reports the heap a model of the tree holds, per
// file. Each iteration builds the model afresh.
func BenchmarkModelMemory(b *testing.B) {
	docs := gorootDocs(b)
	var perFile float64
	start := cpuTime()
	defer func() { reportCPU(b, start) }()
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m := New()
		for _, d := range docs {
			m.Put(d)
		}
		m.prep = nil // transient: a decoded model has none
		runtime.GC()
		runtime.ReadMemStats(&after)
		perFile = float64(after.HeapAlloc-before.HeapAlloc) / float64(len(docs))
		runtime.KeepAlive(m)
	}
	b.ReportMetric(perFile, "bytes/file")
}

// BenchmarkEncode10k and BenchmarkDecode10k measure saving and loading
// the tree's model.
func BenchmarkEncode10k(b *testing.B) {
	gorootDocs(b)
	var n int
	start := cpuTime()
	defer func() { reportCPU(b, start) }()
	for b.Loop() {
		data, err := goroot.model.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		n = len(data)
	}
	b.ReportMetric(float64(n), "bytes")
}

func BenchmarkDecode10k(b *testing.B) {
	gorootDocs(b)
	data, err := goroot.model.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	start := cpuTime()
	defer func() { reportCPU(b, start) }()
	for b.Loop() {
		if err := New().UnmarshalBinary(data); err != nil {
			b.Fatal(err)
		}
	}
}
