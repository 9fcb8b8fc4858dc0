package agentloop_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira"
	. "github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/cputime"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// BenchmarkReloadAfterExtraction is what the commit of a background
// extraction round costs the next message: the round rewrites the user
// turn it read (extracted_at) and adds a fact in the conversation's scope,
// so the agent reloads the conversation before it builds the next prompt.
// The conversation holds the given exchanges, all in the buffer (no
// summary yet: the worst case below the buffer limit). Only the reload is
// timed; the exchange and the round run with the timer stopped. cpu-ms/op
// is the process's CPU time, which the machine's load does not stretch.
func BenchmarkReloadAfterExtraction(b *testing.B) {
	for _, n := range []int{25, 100} {
		b.Run(fmt.Sprintf("exchanges=%d", n), func(b *testing.B) { benchReload(b, n) })
	}
}

func benchReload(b *testing.B, exchanges int) {
	srv := llmtest.New(b)
	facts := 0
	srv.Default(llmtest.Func(func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(req.System(), "keep a long-term memory consistent") {
			return llmtest.JSON(map[string]any{"decisions": []map[string]string{{"fact": "f1", "action": "ADD"}}})
		}
		facts++
		return llmtest.JSON(map[string]any{"facts": []map[string]string{{"text": fmt.Sprintf("Project %d is indented with tabs.", facts), "kind": "preference"}}})
	}))
	home := filepath.Join(b.TempDir(), "home")
	env := map[string]string{"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com"}
	ctx := context.Background()
	m, err := mira.Open(ctx, mira.Options{Home: home, Command: "mira-agent", Config: &mira.Config{}, Index: index.ReaderOptions{Warm: true},
		LockTimeout: 5 * time.Second, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	chat, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "test-model", APIKey: "test", MaxRetries: -1})
	if err != nil {
		b.Fatal(err)
	}
	exchange := func(i int) {
		u := &mem.Entry{Scope: "chat", Role: "user", Source: "agent", Body: fmt.Sprintf("In project %d I want tabs, not spaces, and the tests run with go test ./... before each commit. %s", i, strings.Repeat("Some more detail about the build. ", 8))}
		a := &mem.Entry{Scope: "chat", Role: "assistant", Source: "agent", Body: fmt.Sprintf("Understood: project %d uses tabs, and I will run go test ./... before committing. %s", i, strings.Repeat("A longer answer with its reasons. ", 12))}
		if _, err := m.AppendTurns(ctx, []*mem.Entry{u, a}, mira.TurnOptions{Source: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	round := func() {
		if _, err := m.Extract(ctx, mira.ExtractRequest{Scope: "chat", Chat: chat, Source: "conversation chat"}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range exchanges {
		exchange(i)
	}
	round()
	a, err := New(Config{Store: m, Conversation: "chat", Model: chat, BufferTokens: 1 << 30,
		Project: mem.Project{Name: "proj", Root: b.TempDir(), By: "test"}, Warn: func(err error) { b.Logf("warning: %v", err) }})
	if err != nil {
		b.Fatal(err)
	}
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		exchange(exchanges + i)
		if err := a.Refresh(); err != nil { // the agent's own turns: it holds them already
			b.Fatal(err)
		}
		round()
		b.StartTimer()
		start := cputime.Process()
		if err := a.Refresh(); err != nil {
			b.Fatal(err)
		}
		cpu += cputime.Process() - start
	}
	b.StopTimer()
	if got := a.Status().BufferTurns; got < 2*exchanges {
		b.Fatalf("the buffer holds %d turns, want at least %d", got, 2*exchanges)
	}
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
}
