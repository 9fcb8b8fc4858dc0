package mira

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// Summaries written by one client in turn record, each, the tokens that
// summary cost: a long session that summarizes again and again must not
// record in each commit everything it spent before.
func TestSummarizeUsageIsPerRun(t *testing.T) {
	m := open(t, false)
	client, srv := extractModel(t)
	srv.Default(llmtest.Text("The user asked about invoices; they are totalled per line, in cents."))
	round := func(i int) string {
		t.Helper()
		var last string
		for j := range 2 {
			role := []string{"user", "assistant"}[j]
			e := &mem.Entry{Scope: "chat", Role: role, Body: strings.Repeat(fmt.Sprintf("Round %d, %s: how are invoices totalled when lines carry discounts and taxes? ", i, role), 20)}
			if _, err := m.AppendTurns(t.Context(), []*mem.Entry{e}, TurnOptions{Source: "test"}); err != nil {
				t.Fatal(err)
			}
			last = e.ID
		}
		before := client.Usage().Requests
		res, err := m.Summarize(t.Context(), SummarizeOptions{Scopes: []string{"chat"}, Kinds: []string{mem.KindTurn}, Through: last, Chat: client})
		if err != nil || res.Commit == "" {
			t.Fatalf("round %d: commit %q, err %v", i, res.Commit, err)
		}
		msg := gitOut(t, m.Root(), "log", "-1", "--format=%B", res.Commit)
		want := fmt.Sprintf("Mira-Usage: requests=%d ", client.Usage().Requests-before)
		if !strings.Contains(msg, want) {
			t.Errorf("round %d: commit lacks %q:\n%s", i, want, msg)
		}
		return msg
	}
	round(1)
	round(2)
}
