package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/mem"
)

// fakeUpstream is a chat server that answers after delay (a model's time
// to its first token; zero: at once): a plain reply, or a stream of a few
// chunks, each echoing the last user message.
func fakeUpstream(delay time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		time.Sleep(delay)
		body := string(b)
		last := "?"
		if i := strings.LastIndex(body, `"role":"user","content":"`); i >= 0 {
			rest := body[i+len(`"role":"user","content":"`):]
			last = rest[:strings.IndexByte(rest, '"')]
		}
		if strings.Contains(body, `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, piece := range []string{"Answer ", "to: ", last} {
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", piece)
				w.(http.Flusher).Flush()
			}
			io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`, "Answer to: "+last)
	})
}

// loadSize is the load's size: MIRA_PROXY_LOAD=convs,turns,entries
// (make bench runs 50,5,10000); the default is small enough for make test.
func loadSize(t *testing.T) (convs, turns, entries int) {
	convs, turns, entries = 20, 5, 1000
	if v := os.Getenv("MIRA_PROXY_LOAD"); v != "" {
		f := strings.Split(v, ",")
		if len(f) != 3 {
			t.Fatalf("MIRA_PROXY_LOAD=%q: want convs,turns,entries", v)
		}
		convs, _ = strconv.Atoi(f[0])
		turns, _ = strconv.Atoi(f[1])
		entries, _ = strconv.Atoi(f[2])
	}
	return
}

// loadDelay is how long the fake upstream takes to answer:
// MIRA_PROXY_LOAD_DELAY (a duration, make bench runs 100ms); the default,
// zero, makes the load a saturation test.
func loadDelay(t *testing.T) time.Duration {
	v := os.Getenv("MIRA_PROXY_LOAD_DELAY")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		t.Fatalf("MIRA_PROXY_LOAD_DELAY=%q: want a duration", v)
	}
	return d
}

// seed fills a store with n generated memories in one commit.
func seed(t testing.TB, m *mira.Memory, n int) {
	words := strings.Fields("the cache index server client request error config release branch deploy database query token auth session service cluster queue worker retry latency memory network proxy route schema migration payment invoice order customer email webhook event stream batch pipeline metric alert trace refactor module package channel goroutine mutex deadline team sprint")
	var es []*mem.Entry
	for i := range n {
		var b strings.Builder
		for j := range 12 + i%20 {
			b.WriteString(words[(i*7+j*13+j*j)%len(words)])
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "note %d", i)
		es = append(es, &mem.Entry{Body: b.String(), Kind: []string{mem.KindFact, mem.KindNote, mem.KindDecision}[i%3], Scope: mem.DefaultScope})
	}
	if _, err := m.Remember(context.Background(), es, mira.RememberOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestLoad: concurrent conversations, half of them streaming, through the
// proxy against a fake upstream on a seeded store: every turn is stored
// exactly once, the store is clean, and the time the proxy adds over
// calling the upstream directly is reported (p50, p99, first byte).
func TestLoad(t *testing.T) {
	convs, turns, entries := loadSize(t)
	delay := loadDelay(t)
	if os.Getenv("GOGC") == "" {
		// The collection target mira-proxy runs with (cli.Main).
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	up := httptest.NewServer(fakeUpstream(delay))
	defer up.Close()
	m := openStore(t)
	seed(t, m, entries)
	// An index in use has long been built and merged; one that has just
	// taken in ten thousand memories is still merging its segments, and
	// would do it during the load. A rebuild leaves it settled.
	if _, err := m.RebuildIndex(context.Background()); err != nil {
		t.Fatal(err)
	}
	// As mira-proxy does before it serves.
	if err := m.Prepare(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, m, up.URL+"/v1", nil, func(o *Options) { o.Log = false; o.Logf = nil })
	// The writer and the curator wait as mira-proxy's do by default.
	f.curator.Close(context.Background())
	f.writer.Close(context.Background())
	f.writer = m.NewTurnWriter(mira.TurnWriterOptions{Delay: 300 * time.Millisecond, Source: "mira-proxy"})
	f.curator = NewCurator(CuratorOptions{Memory: m, Writer: f.writer, Extractive: true, Logf: t.Logf})
	f.srv.opt.Writer = f.writer
	f.srv.opt.After = f.curator
	var commits0 = strings.Count(git(t, m.Root(), "log", "--format=%s"), "\n")

	type sample struct {
		proxy, direct, proxyFirst, directFirst time.Duration
		steps                                  map[string]time.Duration // from Server-Timing
	}
	var mu sync.Mutex
	var samples []sample
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * convs}}
	// MIRA_PROXY_LOAD_OFF=1 sends the proxy's calls with X-Mira: off, a
	// plain pass-through: what the hop alone costs under the same load,
	// the floor of what the proxy can add on this machine.
	off := os.Getenv("MIRA_PROXY_LOAD_OFF") == "1"
	// call sends body and returns the time to the first byte and to the end.
	call := func(url, conv, body string) (first, all time.Duration, reply string, steps map[string]time.Duration, err error) {
		req, _ := http.NewRequest("POST", url+"/chat/completions", strings.NewReader(body))
		req.Header.Set(HeaderConversation, conv)
		req.Header.Set("Content-Type", "application/json")
		if off && url == f.url {
			req.Header.Set(HeaderMira, "off")
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, "", nil, err
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		if _, err := br.Peek(1); err != nil {
			return 0, 0, "", nil, err
		}
		first = time.Since(start)
		b, err := io.ReadAll(br)
		if resp.StatusCode != 200 {
			err = fmt.Errorf("status %d: %s", resp.StatusCode, b)
		}
		return first, time.Since(start), string(b), serverTiming(resp.Header.Get("Server-Timing")), err
	}
	var wg sync.WaitGroup
	errs := make(chan error, convs*turns)
	cpu0, wall0 := cpuTime(), time.Now()
	// MIRA_PROXY_LOAD_PROFILE=FILE: a CPU profile of the load alone,
	// without the seed's build (go tool pprof FILE).
	if f := os.Getenv("MIRA_PROXY_LOAD_PROFILE"); f != "" {
		out, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		defer pprof.StopCPUProfile() // stopped after the load; again is a no-op
	}
	// MIRA_PROXY_LOAD_BLOCKPROFILE=FILE: where the load's goroutines waited
	// (go tool pprof FILE).
	if f := os.Getenv("MIRA_PROXY_LOAD_BLOCKPROFILE"); f != "" {
		runtime.SetBlockProfileRate(int(10 * time.Microsecond))
		defer func() {
			runtime.SetBlockProfileRate(0)
			if out, err := os.Create(f); err == nil {
				pprof.Lookup("block").WriteTo(out, 0)
				out.Close()
			}
		}()
	}
	// In lockstep (the default) every conversation sends its turn at the
	// same moment, a burst of convs requests each upstream round trip;
	// MIRA_PROXY_LOAD_SPREAD=1 starts them evenly over the upstream's
	// delay, as conversations that began apart arrive.
	spread := os.Getenv("MIRA_PROXY_LOAD_SPREAD") == "1"
	for c := range convs {
		wg.Go(func() {
			if spread {
				time.Sleep(time.Duration(c) * 2 * delay / time.Duration(convs))
			}
			conv := fmt.Sprintf("load-%d", c)
			stream := c%2 == 0
			var msgs []string
			for i := range turns {
				text := fmt.Sprintf("conversation %d turn %d: how do we retry the payment queue worker?", c, i)
				msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%q}`, text))
				body := fmt.Sprintf(`{"model":"m","stream":%v,"messages":[%s]}`, stream, strings.Join(msgs, ","))
				df, da, _, _, err := call(up.URL+"/v1", conv, body)
				if err != nil {
					errs <- err
					return
				}
				pf, pa, reply, steps, err := call(f.url, conv, body)
				if err != nil {
					errs <- err
					return
				}
				if !strings.Contains(reply, "Answer") {
					errs <- fmt.Errorf("reply %q", reply)
				}
				mu.Lock()
				samples = append(samples, sample{pa, da, pf, df, steps})
				mu.Unlock()
				msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":%q}`, "Answer to: "+text))
			}
		})
	}
	wg.Wait()
	pprof.StopCPUProfile()
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	f.idle()

	// Every turn stored exactly once, in order.
	for c := range convs {
		if off {
			break
		}
		got := f.turns(fmt.Sprintf("load-%d", c))
		if len(got) != 2*turns {
			t.Errorf("conversation %d: %d turns stored, want %d", c, len(got), 2*turns)
			continue
		}
		for i := range turns {
			want := fmt.Sprintf("conversation %d turn %d: how do we retry the payment queue worker?", c, i)
			if got[2*i].Role != "user" || got[2*i].Body != want || got[2*i+1].Role != "assistant" || got[2*i+1].Body != "Answer to: "+want {
				t.Errorf("conversation %d turn %d stored as %q / %q", c, i, got[2*i].Body, got[2*i+1].Body)
			}
		}
	}
	git(t, m.Root(), "fsck", "--strict")
	if st := git(t, m.Root(), "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	log := git(t, m.Root(), "log", "--format=%s")
	turnCommits := strings.Count(log, "turns: ")
	if turnCommits > convs*turns {
		t.Errorf("%d commits of turns for %d turns: not batched", turnCommits, 2*convs*turns)
	}

	pct := func(d []time.Duration, p float64) time.Duration {
		slices.Sort(d)
		return d[min(len(d)-1, int(float64(len(d))*p))]
	}
	var added, first []time.Duration
	for _, s := range samples {
		added = append(added, s.proxy-s.direct)
		first = append(first, s.proxyFirst-s.directFirst)
	}
	arrive := "in lockstep"
	if spread {
		arrive = "spread evenly"
	}
	if off {
		arrive += ", the proxy passing through (X-Mira: off)"
	}
	t.Logf("%d conversations × %d turns (half streamed, %s) on a store of %d entries, upstream answering after %v: %d requests", convs, turns, arrive, entries, delay, len(samples))
	t.Logf("added by the proxy over a direct call: p50 %v, p99 %v; first byte: p50 %v, p99 %v",
		pct(added, 0.5).Round(10*time.Microsecond), pct(added, 0.99).Round(10*time.Microsecond),
		pct(first, 0.5).Round(10*time.Microsecond), pct(first, 0.99).Round(10*time.Microsecond))
	var parts []string
	for _, step := range []string{"mira-recall", "mira-plan", "mira-store", "mira-added"} {
		var d []time.Duration
		for _, s := range samples {
			d = append(d, s.steps[step])
		}
		parts = append(parts, fmt.Sprintf("%s p50 %v p99 %v", strings.TrimPrefix(step, "mira-"),
			pct(d, 0.5).Round(10*time.Microsecond), pct(d, 0.99).Round(10*time.Microsecond)))
	}
	t.Logf("the proxy's own steps (Server-Timing): %s", strings.Join(parts, "; "))
	t.Logf("the test process (clients, proxy, upstream, curator) used %.1f s of CPU in %.1f s: %.2f of %d cores",
		cpu.Seconds(), wall.Seconds(), cpu.Seconds()/wall.Seconds(), runtime.NumCPU())
	if off {
		t.Logf("turns stored: none (passed through)")
		return
	}
	t.Logf("turns stored: %d in %d commits (%d commits in all since the seed)", 2*len(samples), turnCommits, strings.Count(log, "\n")-commits0)
}

// serverTiming parses a Server-Timing header: name;dur=ms, ...
func serverTiming(h string) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, metric := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(metric), ";")
		for _, p := range strings.Split(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "dur="); ok {
				ms, _ := strconv.ParseFloat(v, 64)
				out[name] = time.Duration(ms * float64(time.Millisecond))
			}
		}
	}
	return out
}

// BenchmarkInject is the proxy's own work for one request, with nothing
// else running: recall for the last user message and plan the block, on
// a warm store of 10k memories (MIRA_PROXY_BENCH_ENTRIES to change it).
// Each request asks something new, as a conversation does.
func BenchmarkInject(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("MIRA_PROXY_BENCH_ENTRIES")); err == nil {
		n = v
	}
	m := openStore(b)
	seed(b, m, n)
	if _, err := m.UpdateIndex(context.Background()); err != nil {
		b.Fatal(err)
	}
	srv, err := New(Options{Memory: m, Upstream: "http://127.0.0.1:9/v1", RecallK: 8})
	if err != nil {
		b.Fatal(err)
	}
	topics := strings.Fields("payment queue worker retry deploy database schema migration webhook session cache")
	i := 0
	ask := func() *exchange {
		q := fmt.Sprintf("turn %d: how do we handle the %s %s?", i, topics[i%len(topics)], topics[(i*7+3)%len(topics)])
		i++
		req, err := parseChat([]byte(fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":%q}]}`, q)))
		if err != nil {
			b.Fatal(err)
		}
		x := &exchange{conv: "bench"}
		srv.inject(context.Background(), req, 0, x)
		if len(x.warnings) > 0 {
			b.Fatal(x.warnings)
		}
		return x
	}
	for range 20 {
		ask() // the first loads the tokenizer and the vectors
	}
	var recall, plan time.Duration
	for b.Loop() {
		x := ask()
		recall += x.tRecall
		plan += x.tPlan
	}
	b.ReportMetric(float64(recall.Microseconds())/float64(b.N)/1000, "recall-ms/op")
	b.ReportMetric(float64(plan.Microseconds())/float64(b.N)/1000, "plan-ms/op")
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
