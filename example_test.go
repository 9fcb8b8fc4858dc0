package mira_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/miramem/mira"
	"github.com/miramem/mira/mem"
)

// A program embeds the memory: open a store, remember, recall.
func Example() {
	dir, _ := os.MkdirTemp("", "mira-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	m, err := mira.Open(ctx, mira.Options{Home: filepath.Join(dir, "memory"), Config: &mira.Config{}})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()

	_, err = m.Remember(ctx, []*mem.Entry{
		{Kind: mem.KindDecision, Body: "We chose PostgreSQL for JSONB", Tags: []string{"db"}},
		{Kind: mem.KindPreference, Body: "Prices are integers in cents"},
	}, mira.RememberOptions{Source: "example"})
	if err != nil {
		log.Fatal(err)
	}
	recs, err := m.Recall(ctx, mira.Query{Text: "PostgreSQL", K: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range recs {
		fmt.Printf("%s: %s\n", r.Kind, r.Text)
	}
	// Output:
	// decision: We chose PostgreSQL for JSONB
}

// A memory that looks like a credential is refused, and nothing is written.
func ExampleMemory_Remember_secret() {
	dir, _ := os.MkdirTemp("", "mira-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	m, err := mira.Open(ctx, mira.Options{Home: filepath.Join(dir, "memory"), Config: &mira.Config{}})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()

	_, err = m.Remember(ctx, []*mem.Entry{{Body: "deploy key AKIAZ7QW3ERTYUIOP4AB for prod"}}, mira.RememberOptions{})
	var secret *mira.SecretError
	fmt.Println(errors.As(err, &secret), secret.Findings[0].Rule)
	// Output:
	// true aws-access-key-id
}

// Context plans the block for a prompt: pins first, then what was recalled,
// under a token budget.
func ExampleMemory_Context() {
	dir, _ := os.MkdirTemp("", "mira-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	m, err := mira.Open(ctx, mira.Options{Home: filepath.Join(dir, "memory"), Config: &mira.Config{}})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	_, err = m.Remember(ctx, []*mem.Entry{{Kind: mem.KindPreference, Body: "Answer in British English", Pin: mem.PinSticky}}, mira.RememberOptions{})
	if err != nil {
		log.Fatal(err)
	}
	p, err := m.Context(ctx, mira.ContextRequest{Mode: "light", Budget: 500})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(p.Included), "included;", p.Used <= p.Budget)
	// Output:
	// 1 included; true
}
