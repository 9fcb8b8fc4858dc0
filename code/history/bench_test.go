package history

import (
	"context"
	"os"
	"testing"
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
