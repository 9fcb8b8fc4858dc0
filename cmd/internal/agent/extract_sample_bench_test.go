package agent

import (
	"fmt"
	"path/filepath"
	"regexp"
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

// agentSample is a sample conversation: twelve user messages, some with
// nothing to keep, some restating what an earlier one said, one saying
// what the model already remembered.
var agentSample = []string{
	"Hi, can you look at the build for me?",
	"We use PostgreSQL 16 for the orders service. The tests run with go test ./... before each commit.",
	"What does the linter complain about?",
	"I prefer tabs over spaces in Go files.",
	"Thanks, that helps.",
	"The staging database is on port 5433. We use PostgreSQL 16 for the orders service.",
	"Release notes go in CHANGELOG.md, newest first.",
	"Can you run the tests again?",
	"I prefer short commit subjects, under 60 characters.",
	"Deploys happen on Tuesdays and Thursdays only.",
	"ok",
	"The tests run with go test ./... before each commit. My favourite editor is Helix.",
}

// agentSampleFact is what the fake model takes for a fact: a sentence
// stating something, not a question or a greeting.
var agentSampleFact = regexp.MustCompile(`(?:We use|The |I prefer|Release|Deploys|My favourite)[^.?!]*\.`)

// BenchmarkAgentExtractSample runs the sample conversation through the
// agent's extraction (mira.Memory.Extract, as after each message) against
// a fake model that proposes every stating sentence of a message as a
// fact and adds what reconciliation asks about. The model had already
// remembered one of them (the editor, global scope). It reports the user
// turns read, the facts proposed and stored per turn, and the tokens
// (o200k) sent and received per message; then, with the model failing,
// that a round writes nothing and leaves every turn for the next one.
func BenchmarkAgentExtractSample(b *testing.B) {
	tok, err := plan.NewTokenizer("o200k_base")
	if err != nil {
		b.Fatal(err)
	}
	if err := tok.Load(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		var (
			mu                               sync.Mutex
			fail                             bool
			proposed, promptT, replyT, calls int
		)
		srv := llmtest.New(b)
		srv.Default(llmtest.Func(func(req llmtest.Request) llmtest.Reply {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return llmtest.Error(500, "model down")
			}
			var r llmtest.Reply
			if strings.Contains(req.System(), "keep a long-term memory consistent") {
				var ds []map[string]string
				for _, m := range factIDs.FindAllStringSubmatch(req.LastUser(), -1) {
					ds = append(ds, map[string]string{"fact": m[1], "action": "ADD"})
				}
				r = llmtest.JSON(map[string]any{"decisions": ds})
			} else {
				var items []map[string]string
				for _, s := range agentSampleFact.FindAllString(lastMessage(req.LastUser()), -1) {
					items = append(items, map[string]string{"text": s, "kind": "fact"})
				}
				proposed += len(items)
				r = llmtest.JSON(map[string]any{"facts": items})
			}
			calls++
			promptT += tok.Count(req.System()) + tok.Count(req.LastUser())
			replyT += tok.Count(r.Content)
			return r
		}))
		home := filepath.Join(b.TempDir(), "home")
		m, err := mira.Open(b.Context(), mira.Options{Home: home, Config: &mira.Config{}, Index: index.ReaderOptions{Warm: true}, Getenv: func(string) string { return "" }})
		if err != nil {
			b.Fatal(err)
		}
		chat, err := llm.New(llm.Config{BaseURL: srv.URL, Model: "test-model", APIKey: "test", MaxRetries: -1})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Remember(b.Context(), []*mem.Entry{{Kind: mem.KindFact, Scope: mem.DefaultScope, Body: "My favourite editor is Helix.", Source: "agent"}}, mira.RememberOptions{}); err != nil {
			b.Fatal(err)
		}
		x := newAgentExtractor(m, chat, "chat", func(string, ...any) {})
		x.setProject(mem.Project{})
		b.StartTimer()
		for i, text := range agentSample {
			u := &mem.Entry{Scope: "chat", Role: "user", Source: "agent", Body: text}
			a := &mem.Entry{Scope: "chat", Role: "assistant", Source: "agent", Body: fmt.Sprintf("Reply %d.", i)}
			if _, err := m.AppendTurns(b.Context(), []*mem.Entry{u, a}, mira.TurnOptions{Source: "bench"}); err != nil {
				b.Fatal(err)
			}
			for x.round() {
			}
		}
		b.StopTimer()
		stored := 0
		st, _ := mem.Open(b.Context(), home, "bench", time.Second)
		st.Walk(func(e *mem.Entry) error {
			if e.Source == "extract" && !e.Deleted() {
				stored++
			}
			return nil
		}, nil)
		n := float64(len(agentSample))
		b.ReportMetric(n, "turns")
		b.ReportMetric(float64(proposed), "facts-proposed")
		b.ReportMetric(float64(stored), "facts-stored")
		b.ReportMetric(float64(calls)/n, "calls/msg")
		b.ReportMetric(float64(promptT)/n, "prompt-tok/msg")
		b.ReportMetric(float64(replyT)/n, "reply-tok/msg")

		// The model fails: a round writes nothing and leaves the turns.
		mu.Lock()
		fail = true
		mu.Unlock()
		head, _ := st.Head()
		for i := range 3 {
			u := &mem.Entry{Scope: "chat", Role: "user", Source: "agent", Body: fmt.Sprintf("We use runner %d for the nightly builds.", i)}
			if _, err := m.AppendTurns(b.Context(), []*mem.Entry{u}, mira.TurnOptions{Source: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
		head, _ = st.Head()
		x.round()
		if after, _ := st.Head(); after != head {
			b.Fatal("a failed round wrote a commit")
		}
		res, err := m.Extract(b.Context(), mira.ExtractRequest{Scope: "chat", Chat: chat, DryRun: true})
		if err == nil || res != nil {
			b.Fatalf("extraction with the model down = %+v, %v", res, err)
		}
		mu.Lock()
		fail = false
		mu.Unlock()
		res, err = m.Extract(b.Context(), mira.ExtractRequest{Scope: "chat", Chat: chat})
		if err != nil || res.TurnsRead != 3 || res.Counts["add"] != 3 {
			b.Fatalf("the round after the failure read %+v, %v; want the 3 turns left and their 3 facts", res, err)
		}
		b.ReportMetric(float64(res.TurnsRead), "turns-recovered")
		m.Close()
		b.StartTimer()
	}
}

// lastMessage is the user's message of an extraction prompt, without the
// assistant's message shown for context.
func lastMessage(prompt string) string {
	i := strings.LastIndex(prompt, "Message:\n")
	if i < 0 {
		return prompt
	}
	return prompt[i+len("Message:\n"):]
}
