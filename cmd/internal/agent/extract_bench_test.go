package agent

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miramem/mira"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// BenchmarkAgentExtractRound is what the agent's extraction costs after a
// message, in a conversation of 100 exchanges already read: one round
// (mira.Memory.Extract, as mira-proxy runs it) over the new user turn, with
// a model that proposes one fact per message and adds it. Besides the
// time and allocations of Mira's side (the fake server is in the process
// too, and counted), it reports the model calls, the o200k tokens sent and
// received, and the facts stored per message.
func BenchmarkAgentExtractRound(b *testing.B) {
	tok, err := plan.NewTokenizer("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	if err := tok.Load(); err != nil {
		b.Fatal(err)
	}
	var (
		mu                     sync.Mutex
		calls, promptT, replyT int
	)
	n := 0
	srv := llmtest.New(b)
	srv.Default(llmtest.Func(func(req llmtest.Request) llmtest.Reply {
		var r llmtest.Reply
		if strings.Contains(req.System(), "keep a long-term memory consistent") {
			var ds []map[string]string
			for _, m := range factIDs.FindAllStringSubmatch(req.LastUser(), -1) {
				ds = append(ds, map[string]string{"fact": m[1], "action": "ADD"})
			}
			r = llmtest.JSON(map[string]any{"decisions": ds})
		} else {
			mu.Lock()
			n++
			i := n
			mu.Unlock()
			r = llmtest.JSON(map[string]any{"facts": []map[string]string{{"text": fmt.Sprintf("The user's project %d is indented with tabs.", i), "kind": "preference"}}})
		}
		mu.Lock()
		calls++
		promptT += tok.Count(req.System()) + tok.Count(req.LastUser())
		replyT += tok.Count(r.Content)
		mu.Unlock()
		return r
	}))
	home := filepath.Join(b.TempDir(), "home")
	m, err := mira.Open(b.Context(), mira.Options{Home: home, Config: &mira.Config{}, Index: index.ReaderOptions{Warm: true}, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	chat, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "test-model", APIKey: "test"})
	if err != nil {
		b.Fatal(err)
	}
	x := newAgentExtractor(m, chat, "chat", func(f string, a ...any) { b.Errorf(f, a...) })
	exchange := func(i int) {
		u := &mem.Entry{Scope: "chat", Role: "user", Source: "agent", Body: fmt.Sprintf("In project %d I want tabs, not spaces, and the tests run with go test ./... before each commit.", i)}
		a := &mem.Entry{Scope: "chat", Role: "assistant", Source: "agent", Body: fmt.Sprintf("Understood: project %d uses tabs, and I will run go test ./... before committing.", i)}
		if _, err := m.AppendTurns(b.Context(), []*mem.Entry{u, a}, mira.TurnOptions{Source: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 100 {
		exchange(i)
	}
	for x.round() {
	}
	before, _ := m.Recall(b.Context(), mira.Query{K: mira.MaxK, Kinds: []string{mem.KindPreference}})
	mu.Lock()
	calls, promptT, replyT = 0, 0, 0
	mu.Unlock()
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		exchange(1000 + i)
		b.StartTimer()
		start := cpuTime()
		if x.round() {
			b.Fatal("turns left after a round")
		}
		cpu += cpuTime() - start
	}
	b.StopTimer()
	after, _ := m.Recall(b.Context(), mira.Query{K: mira.MaxK, Kinds: []string{mem.KindPreference}})
	mu.Lock()
	defer mu.Unlock()
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(calls)/float64(b.N), "calls/msg")
	b.ReportMetric(float64(promptT)/float64(b.N), "prompt-tok/msg")
	b.ReportMetric(float64(replyT)/float64(b.N), "reply-tok/msg")
	b.ReportMetric(float64(len(after)-len(before))/float64(b.N), "facts/msg")
}
