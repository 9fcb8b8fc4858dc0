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

// A load too large to hold goes in parts, in one commit: each part's files
// are written as it comes, and what was stored is reported once committed.
func ExampleMemory_RememberStream() {
	dir, _ := os.MkdirTemp("", "mira-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	m, err := mira.Open(ctx, mira.Options{Home: filepath.Join(dir, "memory"), Config: &mira.Config{}})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	part := 0
	next := func() ([]*mem.Entry, error) { // e.g. the next lines of a file
		if part++; part > 3 {
			return nil, nil
		}
		var es []*mem.Entry
		for i := range 1000 {
			es = append(es, &mem.Entry{Body: fmt.Sprintf("imported note %d of part %d", i, part)})
		}
		return es, nil
	}
	stored := 0
	commit, err := m.RememberStream(ctx, next, mira.RememberOptions{Source: "import"}, func(mira.Remembered) error {
		stored++ // a front end writes them to a spool, printed once the commit is made
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(stored, "memories, one commit:", commit != "")
	// Output:
	// 3000 memories, one commit: true
}
