package summarize

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkLoad: the summary state of a scope at its default limit (500
// entries), as mira-context and the agent read it for every prompt.
func BenchmarkLoad(b *testing.B) {
	st, _ := testStore(b)
	rng := rand.New(rand.NewPCG(1, 1))
	add(b, st, conversation(rng, "agent", 20000, t0)...)
	if _, err := Run(context.Background(), st, nil, Options{Count: wordCount}); err != nil {
		b.Fatal(err)
	}
	add(b, st, conversation(rng, "agent", 80, t0.Add(time.Hour))...)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Load(st, "agent", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtract: the extractive summary of one 3,000-token chunk.
func BenchmarkExtract(b *testing.B) {
	rng := rand.New(rand.NewPCG(2, 2))
	var units []unit
	for _, e := range conversation(rng, "x", 3000, t0) {
		units = append(units, unit{label: e.Role, text: e.Body})
	}
	for b.Loop() {
		extract(units, 300, ApproxTokens)
	}
}
