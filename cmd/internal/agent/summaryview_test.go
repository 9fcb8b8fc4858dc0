package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// A pruned turn is left out of what the model sees, and so out of the
// rolling summary that takes the buffer's place: /summarize covers it
// (it leaves the buffer) without its text, and the turn stays in the
// store.
func TestAgentSummaryLeavesPrunedOut(t *testing.T) {
	x := newAgentEnv(t)
	// Replies long enough that the kept turns alone call for a summary.
	x.srv.Default(llmtest.Text(strings.Repeat("The parser reads tokens and builds the tree. ", 60)))
	x.ok("", "-p", "tell me about the weather "+strings.Repeat("drizzle ", 300))
	x.ok("", "-p", "fix the parser")
	x.ok("", "-p", "and the parser tests")
	rows := jsonLines(t, x.ok("", "context", "prune", "--max-tokens", "200", "--keep-recent", "4"))
	if pruned, _ := rows[0]["pruned"].([]any); len(pruned) == 0 {
		t.Fatalf("prune = %v", rows)
	}
	x.ok("", "-p", "/summarize", "--summarizer", "extractive")
	st, err := mem.Open(t0(), x.home, "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var summaries []string
	covered := map[string]bool{}
	st.Walk(func(e *mem.Entry) error {
		if e.Kind == mem.KindSummary && e.Scope == "chat" {
			summaries = append(summaries, e.Body)
			list, _ := e.Fields()["covers"].([]any)
			for _, v := range list {
				id, _ := v.(string)
				covered[id] = true
			}
		}
		return nil
	}, nil)
	all := strings.Join(summaries, "\n---\n")
	if len(summaries) == 0 || strings.Contains(all, "weather") || strings.Contains(all, "drizzle") || !strings.Contains(all, "parser") {
		t.Errorf("summaries:\n%s", all)
	}
	found := false
	for _, e := range x.turns("chat") {
		if strings.Contains(e.Body, "the weather") {
			found = true
			if !covered[e.ID] {
				t.Errorf("the pruned turn %s is not covered by a summary", e.ID)
			}
		}
	}
	if !found {
		t.Error("the pruned turn left the store")
	}
}
