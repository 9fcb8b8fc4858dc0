package agent

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira"
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
	for b.Loop() {
		b.StopTimer()
		proposed := 0
		x := newExtractBench(b, func(prompt string) []map[string]string {
			var items []map[string]string
			for _, s := range agentSampleFact.FindAllString(lastMessage(prompt), -1) {
				items = append(items, map[string]string{"text": s, "kind": "fact"})
			}
			proposed += len(items)
			return items
		})
		m, chat := x.m, x.chat
		if _, err := m.Remember(b.Context(), []*mem.Entry{{Kind: mem.KindFact, Scope: mem.DefaultScope, Body: "My favourite editor is Helix.", Source: "agent"}}, mira.RememberOptions{}); err != nil {
			b.Fatal(err)
		}
		ex := newAgentExtractor(m, chat, "chat", func(string, ...any) {})
		ex.setProject(mem.Project{})
		b.StartTimer()
		for i, text := range agentSample {
			u := &mem.Entry{Scope: "chat", Role: "user", Source: "agent", Body: text}
			a := &mem.Entry{Scope: "chat", Role: "assistant", Source: "agent", Body: fmt.Sprintf("Reply %d.", i)}
			if _, err := m.AppendTurns(b.Context(), []*mem.Entry{u, a}, mira.TurnOptions{Source: "bench"}); err != nil {
				b.Fatal(err)
			}
			for ex.round() {
			}
		}
		b.StopTimer()
		stored := 0
		st, _ := mem.Open(b.Context(), x.home, "bench", time.Second)
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
		x.reportPerMessage(b, n)

		// The model fails: a round writes nothing and leaves the turns.
		x.setFail(true)
		head, _ := st.Head()
		for i := range 3 {
			u := &mem.Entry{Scope: "chat", Role: "user", Source: "agent", Body: fmt.Sprintf("We use runner %d for the nightly builds.", i)}
			if _, err := m.AppendTurns(b.Context(), []*mem.Entry{u}, mira.TurnOptions{Source: "bench"}); err != nil {
				b.Fatal(err)
			}
		}
		head, _ = st.Head()
		ex.round()
		if after, _ := st.Head(); after != head {
			b.Fatal("a failed round wrote a commit")
		}
		res, err := m.Extract(b.Context(), mira.ExtractRequest{Scope: "chat", Chat: chat, DryRun: true})
		if err == nil || res != nil {
			b.Fatalf("extraction with the model down = %+v, %v", res, err)
		}
		x.setFail(false)
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
