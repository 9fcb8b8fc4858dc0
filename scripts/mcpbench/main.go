// Command mcpbench times recall through mira-mcp: what an MCP host pays
// per call once the server is up, beside what a mira-recall process pays
// (make bench prints both).
//
//	mcpbench [-bin bin/mira-mcp] [-home DIR] [-rounds 10] [-warmup 5] [-k 10] QUERIES
//
// It starts one server over stdio with the official Go SDK's client, makes
// a few warm-up calls, then calls recall with each line of QUERIES, ROUNDS
// times over, timing each call from request to decoded result, and prints
//
//	mcp recall (stdio, warm server): p50 1.23 ms, p90 1.80 ms, mean 1.41 ms, n=200
package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("bin", "bin/mira-mcp", "the mira-mcp binary")
	home := flag.String("home", os.Getenv("MIRA_HOME"), "the store (MIRA_HOME)")
	rounds := flag.Int("rounds", 10, "times each query is recalled")
	warmup := flag.Int("warmup", 5, "untimed calls first")
	k := flag.Int("k", 10, "memories per recall")
	rss := flag.Bool("rss", false, "also print the server's RSS after the calls and two seconds later (Linux)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: mcpbench [flags] QUERIES (one query a line)\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *rounds < 1 || *warmup < 0 {
		flag.Usage()
		os.Exit(2)
	}
	queries, err := readQueries(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	if err := run(*bin, *home, queries, *rounds, *warmup, *k, *rss); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mcpbench:", err)
	os.Exit(1)
}

func readQueries(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if q := strings.TrimSpace(sc.Text()); q != "" {
			qs = append(qs, q)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no queries", path)
	}
	return qs, nil
}

func run(bin, home string, queries []string, rounds, warmup, k int, rss bool) error {
	ctx := context.Background()
	cmd := exec.Command(bin)
	cmd.Env = os.Environ()
	if home != "" {
		cmd.Env = append(cmd.Env, "MIRA_HOME="+home)
	}
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpbench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	defer cs.Close()

	found := 0 // calls that returned a memory
	recall := func(q string) (time.Duration, error) {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"query": q, "k": k}})
		d := time.Since(t0)
		if err != nil {
			return d, fmt.Errorf("recall %q: %w", q, err)
		}
		if res.IsError {
			var msg []string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					msg = append(msg, tc.Text)
				}
			}
			return d, fmt.Errorf("recall %q: tool error: %s", q, strings.Join(msg, " "))
		}
		if sc, ok := res.StructuredContent.(map[string]any); ok {
			if ms, ok := sc["memories"].([]any); ok && len(ms) > 0 {
				found++
			}
		}
		return d, nil
	}
	for i := range warmup {
		if _, err := recall(queries[i%len(queries)]); err != nil {
			return err
		}
	}
	times := make([]time.Duration, 0, rounds*len(queries))
	for range rounds {
		for _, q := range queries {
			d, err := recall(q)
			if err != nil {
				return err
			}
			times = append(times, d)
		}
	}
	if found == 0 {
		// Timing an empty store would flatter it: most likely the wrong MIRA_HOME.
		return fmt.Errorf("no recall returned a memory: is %s the store?", cmp.Or(home, "$MIRA_HOME"))
	}
	slices.Sort(times)
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	fmt.Printf("mcp recall (stdio, warm server): p50 %.2f ms, p90 %.2f ms, mean %.2f ms, n=%d\n",
		ms(quantile(times, 0.5)), ms(quantile(times, 0.9)), ms(sum/time.Duration(len(times))), len(times))
	if rss && cmd.Process != nil {
		after := status(cmd.Process.Pid, "VmRSS")
		time.Sleep(2 * time.Second)
		fmt.Printf("mcp server RSS: %s peak, %s after the calls, %s two seconds later\n",
			status(cmd.Process.Pid, "VmHWM"), after, status(cmd.Process.Pid, "VmRSS"))
	}
	return nil
}

// status returns a field of /proc/PID/status in MB, "?" if it cannot.
func status(pid int, field string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int
			if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb); err == nil {
				return fmt.Sprintf("%.1f MB", float64(kb)/1024)
			}
		}
	}
	return "?"
}

// quantile interpolates linearly between the closest ranks of sorted.
func quantile(sorted []time.Duration, q float64) time.Duration {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	frac := pos - float64(i)
	return sorted[i] + time.Duration(frac*float64(sorted[i+1]-sorted[i]))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
