package mira

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/mem"
)

// TestRecallCategoryWord: the README's example. A store that holds only
// "We chose PostgreSQL" answers "database", right after the remember, in a
// warm Memory and a cold one: the word names what PostgreSQL is, though
// the memory does not say it and the built-in embedder, fitted on one
// memory, cannot know it.
func TestRecallCategoryWord(t *testing.T) {
	for _, warm := range []bool{true, false} {
		m := open(t, warm)
		ctx := t.Context()
		if _, err := m.Remember(ctx, []*mem.Entry{{Kind: mem.KindDecision, Body: "We chose PostgreSQL"}}, RememberOptions{}); err != nil {
			t.Fatal(err)
		}
		// The word itself was always found: the write is seen.
		if recs, err := m.Recall(ctx, Query{Text: "PostgreSQL", K: 5}); err != nil || len(recs) != 1 {
			t.Fatalf("warm %v: recall PostgreSQL: %d records, %v", warm, len(recs), err)
		}
		for _, q := range []string{"database", "which database", "databases"} {
			recs, err := m.Recall(ctx, Query{Text: q, K: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].Text != "We chose PostgreSQL" {
				t.Errorf("warm %v: recall %q: %d records, want the decision", warm, q, len(recs))
			}
		}
		// A word of no family still finds nothing.
		if recs, err := m.Recall(ctx, Query{Text: "xylophone", K: 5}); err != nil || len(recs) != 0 {
			t.Errorf("warm %v: recall xylophone: %d records, %v; want none", warm, len(recs), err)
		}
	}
}

// sampleEntries reads the sample the demo remembers.
func sampleEntries(t *testing.T) []*mem.Entry {
	t.Helper()
	f, err := os.Open(filepath.Join("scripts", "sample", "memories.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*mem.Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Kind, Text, Status, Priority string
			Tags                         []string
			CreatedAt                    time.Time `json:"created_at"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, &mem.Entry{Kind: l.Kind, Body: l.Text, Tags: l.Tags, CreatedAt: l.CreatedAt, Status: l.Status, Priority: l.Priority})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRecallDecisionQuestion: on the demo's sample, a question about what
// was picked answers with the decision, in every mode, and a question
// about the thing itself still answers with the fact about it.
func TestRecallDecisionQuestion(t *testing.T) {
	m := open(t, true)
	ctx := t.Context()
	if _, err := m.Remember(ctx, sampleEntries(t), RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	const chose = "We chose PostgreSQL over MySQL"
	for _, tc := range []struct{ query, mode, want string }{
		{"which database did we pick", "", chose},
		{"which database did we pick", "lexical", chose},
		{"which database did we pick", "vector", chose},
		{"what did we decide about the database", "", chose},
		{"why did we choose that database", "", chose},
		// Here "DB" is in the fact's text and tags, and its vector
		// is the nearer one: the words alone put the decision first.
		{"Which DB did we go with?", "lexical", chose},
		// Not a question about a choice: the fact that names the
		// database itself comes first.
		{"where does the staging database run", "", "The staging database runs"},
		{"database port", "", "The staging database runs"},
	} {
		recs, err := m.Recall(ctx, Query{Text: tc.query, Mode: tc.mode, Now: now, K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 || !strings.HasPrefix(recs[0].Text, tc.want) {
			var got []string
			for _, r := range recs {
				got = append(got, r.Text[:min(len(r.Text), 40)]+" "+ExplainText(r.Why))
			}
			t.Errorf("%q (mode %q): got\n%s\nwant first %q", tc.query, tc.mode, strings.Join(got, "\n"), tc.want)
		}
	}
}
