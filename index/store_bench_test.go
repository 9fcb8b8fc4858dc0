package index

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStoreSearch searches an existing store's index as a server
// does (the vectors and codes kept, the stat pass skipped), for stores too
// large to generate in a benchmark: MIRA_BENCH_STORE names the store's
// root (a copy: its index is opened, never changed), MIRA_BENCH_QUERIES a
// file of queries, one a line (scripts/gen.py writes queries.txt). Each
// iteration runs one query, the next in the list.
//
//	MIRA_BENCH_STORE=/tmp/s1m MIRA_BENCH_QUERIES=/tmp/g1m/queries.txt \
//	    go test -run '^$' -bench StoreSearch -benchmem ./index
func BenchmarkStoreSearch(b *testing.B) {
	root := os.Getenv("MIRA_BENCH_STORE")
	if root == "" {
		b.Skip("MIRA_BENCH_STORE is not set")
	}
	queries := []string{"span tls api", "queue postgres v3.3", "what did we decide about the cache timeout?"}
	if name := os.Getenv("MIRA_BENCH_QUERIES"); name != "" {
		queries = readLines(b, name)
	}
	src := frozenSource{root: root, head: indexedCommit(b, root)}
	keep := new(Keep)
	defer keep.Release()
	open := func() *Index {
		ix, err := Open(src, Options{SkipStat: true, Keep: keep})
		if err != nil {
			b.Fatal(err)
		}
		return ix
	}
	ix := open()
	if err := ix.LoadVectors(); err != nil {
		b.Fatal(err)
	}
	ix.Close()
	// The vector scan alone, through the sign codes and through the
	// 8-bit codes of every row.
	side, done, err := ix.searchSide()
	if err != nil {
		b.Fatal(err)
	}
	vecs, err := side.emb.Embed(context.Background(), queries)
	if err != nil {
		b.Fatal(err)
	}
	for _, coarse := range []bool{true, false} {
		name := "nearest-q8"
		if coarse {
			name = "nearest-coarse"
		}
		b.Run(name, func(b *testing.B) {
			defer func(m int) { coarseMin = m }(coarseMin)
			if !coarse {
				coarseMin = math.MaxInt
			}
			i := 0
			cpu := cpuTime()
			for b.Loop() {
				q := vecs[i%len(vecs)]
				normalize(q)
				vq := &vecQuery{side: side, vec: q}
				if coarse != (vs(side).signsFor(vs(side).codesFor()) != nil) {
					b.Fatal("not the scan asked for")
				}
				if _, err := vq.nearest(Query{}, 60, 0); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
	done()
	for _, mode := range []string{ModeHybrid, ModeLexical, ModeVector} {
		b.Run(mode, func(b *testing.B) {
			ix := open()
			defer ix.Close()
			for _, q := range queries { // every code built, every page read
				if _, err := ix.Search(Query{Text: q, Mode: mode}); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			cpu := cpuTime()
			for b.Loop() {
				if _, err := ix.Search(Query{Text: queries[i%len(queries)], Mode: mode}); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// frozenSource is a store as its index saw it last: Head is the indexed
// commit, so an Open finds nothing to do.
type frozenSource struct{ root, head string }

func (s frozenSource) Root() string                           { return s.root }
func (s frozenSource) Head() (string, error)                  { return s.head, nil }
func (s frozenSource) Diff(from, to string) ([]string, error) { return nil, nil }
func (s frozenSource) Stat() ([]FileStat, error)              { return nil, errors.New("no stat pass") }
func (s frozenSource) Load(string) (Doc, error)               { return Doc{}, errors.New("not loaded") }

// indexedCommit is the commit the current generation of root's index was
// built from.
func indexedCommit(b testing.TB, root string) string {
	cur, err := os.ReadFile(filepath.Join(root, ".index", "CURRENT"))
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, ".index", strings.TrimSpace(string(cur)), "meta.json"))
	if err != nil {
		b.Fatal(err)
	}
	var m struct{ Commit string }
	if err := json.Unmarshal(data, &m); err != nil {
		b.Fatal(err)
	}
	return m.Commit
}

func readLines(b testing.TB, name string) []string {
	f, err := os.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		b.Fatalf("%s: no queries", name)
	}
	return out
}

// BenchmarkCoarseScore is the coarse score of one vector of 384
// dimensions (q1.go).
func BenchmarkCoarseScore(b *testing.B) {
	const n = 1 << 16
	q := make([]float32, 384)
	for j := range q {
		q[j] = float32(j%7) - 3
	}
	qq := quantizePlanes(q, 6)
	signs := make([]uint64, n*6)
	for i := range signs {
		signs[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	set := &q1Set{words: 6, signs: signs, row: make([]int32, n)}
	out := make([]int32, n)
	var sink int32
	for b.Loop() {
		qq.scores(set, 0, n, out)
		sink += out[n-1]
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/vector")
	_ = sink
}

func vs(side *vecSide) *vecStore { return side.vs }

// cpuTime is the process's CPU time so far (user and system): what a
// benchmark's work costs whatever else the machine runs.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
