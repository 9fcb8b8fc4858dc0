package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/miramem/mira"
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
	n := 0
	x := newExtractBench(b, func(string) []map[string]string {
		n++
		return []map[string]string{{"text": fmt.Sprintf("The user's project %d is indented with tabs.", n), "kind": "preference"}}
	})
	m := x.m
	defer m.Close()
	ex := newAgentExtractor(m, x.chat, "chat", func(f string, a ...any) { b.Errorf(f, a...) })
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
	for ex.round() {
	}
	before, _ := m.Recall(b.Context(), mira.Query{K: mira.MaxK, Kinds: []string{mem.KindPreference}})
	x.resetCounts()
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		exchange(1000 + i)
		b.StartTimer()
		start := cpuTime()
		if ex.round() {
			b.Fatal("turns left after a round")
		}
		cpu += cpuTime() - start
	}
	b.StopTimer()
	after, _ := m.Recall(b.Context(), mira.Query{K: mira.MaxK, Kinds: []string{mem.KindPreference}})
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
	x.reportPerMessage(b, float64(b.N))
	b.ReportMetric(float64(len(after)-len(before))/float64(b.N), "facts/msg")
}
