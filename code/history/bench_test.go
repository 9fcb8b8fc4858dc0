package history

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"
)

// The benchmarks read real histories: bare mirrors (or clones) named by
// MIRA_BENCH_GIT_COBRA, MIRA_BENCH_GIT_FLASK and MIRA_BENCH_GIT_BIG, for
// example
//
//	MIRA_BENCH_GIT_COBRA=/path/to/cobra.git go test -run '^$' -bench . ./code/history
var benchRepos = []struct{ name, env string }{
	{"cobra", "MIRA_BENCH_GIT_COBRA"},
	{"flask", "MIRA_BENCH_GIT_FLASK"},
	{"big", "MIRA_BENCH_GIT_BIG"},
}

func benchRepo(b *testing.B, env string) string {
	dir := os.Getenv(env)
	if dir == "" {
		b.Skipf("%s is not set: give it the path of a git repository (a bare mirror will do)", env)
	}
	return dir
}

func BenchmarkRead(b *testing.B) {
	readers := []struct {
		name string
		read func(context.Context, string, string, int) ([]Commit, string, error)
	}{{"cli", readCLI}, {"gogit", readGoGit}}
	for _, r := range benchRepos {
		for _, rd := range readers {
			b.Run(rd.name+"/"+r.name, func(b *testing.B) {
				dir := benchRepo(b, r.env)
				n := 0
				cpu := cpuTime()
				for b.Loop() {
					cs, _, err := rd.read(context.Background(), dir, "", 0)
					if err != nil {
						b.Fatal(err)
					}
					n += len(cs)
				}
				cpu = cpuTime() - cpu
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "commits/s")
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}

// BenchmarkAdd aggregates a whole history (read once, beforehand) and
// reports the size of the result: entries kept, encoded bytes and the
// heap it holds.
func BenchmarkAdd(b *testing.B) {
	for _, r := range benchRepos {
		b.Run(r.name, func(b *testing.B) {
			dir := benchRepo(b, r.env)
			commits, _, err := Read(context.Background(), dir, "", 0)
			if err != nil {
				b.Fatal(err)
			}
			var st *Stats
			var heap uint64
			for b.Loop() {
				st = nil
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				st = NewStats(Options{})
				st.Add(commits)
				runtime.GC()
				runtime.ReadMemStats(&m1)
				heap = m1.HeapAlloc - m0.HeapAlloc
			}
			pairs, authors, logs, live := 0, 0, 0, 0
			for _, f := range st.files {
				pairs += len(f.partners)
				authors += len(f.authors)
				logs += len(f.log)
			}
			for _, c := range st.commits {
				if c.hash != "" {
					live++
				}
			}
			data, err := st.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(commits))*float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			b.ReportMetric(float64(len(st.paths)), "files")
			b.ReportMetric(float64(pairs), "pairs")
			b.ReportMetric(float64(authors), "file-authors")
			b.ReportMetric(float64(logs), "log-entries")
			b.ReportMetric(float64(live), "commits-kept")
			b.ReportMetric(float64(len(data)), "encoded-B")
			b.ReportMetric(float64(heap), "heap-B")
			start := time.Now()
			var back Stats
			if err := back.UnmarshalBinary(data); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "decode-ms")
		})
	}
}

// BenchmarkReadAdd is what an index does on its first run: read the
// whole history and aggregate it.
func BenchmarkReadAdd(b *testing.B) {
	for _, r := range benchRepos {
		b.Run(r.name, func(b *testing.B) {
			dir := benchRepo(b, r.env)
			n := 0
			cpu := cpuTime()
			for b.Loop() {
				commits, head, err := Read(context.Background(), dir, "", 0)
				if err != nil {
					b.Fatal(err)
				}
				st := NewStats(Options{})
				st.Add(commits)
				st.Head = head
				n += len(commits)
			}
			cpu = cpuTime() - cpu
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "commits/s")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
