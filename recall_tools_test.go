package mira

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/mem"
)

// storeToolTraffic stores what an agent writes when its model calls
// remember: the user's message, the assistant turn that only called the
// tool (no_text), and the tool's result, n times over.
func storeToolTraffic(t testing.TB, m *Memory, n int) (user string) {
	t.Helper()
	for i := range n {
		call := &mem.Entry{Scope: "chat", Role: "assistant", Source: "agent",
			Body:  fmt.Sprintf(`→ remember {"text":"The user's favourite editor is Helix (%d).","kind":"preference"}`, i),
			Extra: map[string]any{"no_text": true, "tool_calls": []map[string]any{{"id": fmt.Sprintf("call_%d", i), "name": "remember", "arguments": `{"text":"The user's favourite editor is Helix."}`}}}}
		res := &mem.Entry{Scope: "chat", Role: "tool", Source: "agent",
			Body:  fmt.Sprintf("Remembered as 01KB%022d (preference, scope global): the user's favourite editor is Helix.", i),
			Extra: map[string]any{"tool_call_id": fmt.Sprintf("call_%d", i), "tool_name": "remember"}}
		if _, err := m.AppendTurns(t.Context(), []*mem.Entry{call, res}, TurnOptions{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	u := &mem.Entry{Scope: "chat", Role: "user", Source: "agent", Body: "My favourite editor is Helix, remember that."}
	if _, err := m.AppendTurns(t.Context(), []*mem.Entry{u}, TurnOptions{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// isToolTraffic reports whether a recalled record is a tool call or result.
func isToolTrafficRecord(r mem.Record) bool {
	return r.Kind == mem.KindTurn && (r.Role == "tool" || strings.HasPrefix(r.Text, "→ "))
}

// TestRecallLeavesOutToolTraffic: the turns an agent's tool calls leave
// (the call and its result) are not memories: a recall that does not ask
// for turns leaves them out, however well they match and however many
// there are, and still fills k with the rest; asking for turns by kind
// brings them back.
func TestRecallLeavesOutToolTraffic(t *testing.T) {
	m := open(t, false)
	res, err := m.Remember(t.Context(), []*mem.Entry{{Kind: mem.KindPreference, Body: "The user's favourite editor is Helix."}}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	memID := res.Items[0].Entry.ID
	userID := storeToolTraffic(t, m, 12)
	for _, text := range []string{"The editor settings live in the dotfiles repository.", "Helix is configured with the default theme.", "The team reviews editor plugins every quarter."} {
		if _, err := m.Remember(t.Context(), []*mem.Entry{{Kind: mem.KindNote, Body: text}}, RememberOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	recs, err := m.Recall(t.Context(), Query{Text: "favourite editor Helix", K: 4})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
		if isToolTrafficRecord(r) {
			t.Errorf("recall returned tool traffic %s (%s): %q", r.ID, r.Role, r.Text)
		}
	}
	if len(recs) != 4 || !strings.Contains(strings.Join(ids, " "), memID) || !strings.Contains(strings.Join(ids, " "), userID) {
		t.Errorf("recall = %v, want 4 with the memory %s and the user's turn %s", ids, memID, userID)
	}
	for i, r := range recs {
		if y, ok := r.Why.(map[string]any); ok && y["rank"] != i+1 {
			t.Errorf("record %d has rank %v", i, y["rank"])
		}
	}

	recs, err = m.Recall(t.Context(), Query{Text: "favourite editor Helix", K: 30, Kinds: []string{mem.KindTurn}})
	if err != nil {
		t.Fatal(err)
	}
	tools := 0
	for _, r := range recs {
		if isToolTrafficRecord(r) {
			tools++
		}
	}
	if tools != 24 {
		t.Errorf("recall --kind turn returned %d tool turns of 24 (%d records)", tools, len(recs))
	}

	// A front end that wants turns but not tool traffic (mira-proxy).
	recs, err = m.Recall(t.Context(), Query{Text: "favourite editor Helix", K: 4, Kinds: []string{mem.KindTurn, mem.KindPreference}, HideToolTurns: true})
	if err != nil {
		t.Fatal(err)
	}
	ids = ids[:0]
	for _, r := range recs {
		ids = append(ids, r.ID)
		if isToolTrafficRecord(r) {
			t.Errorf("recall with HideToolTurns returned tool traffic %s (%s): %q", r.ID, r.Role, r.Text)
		}
	}
	if !strings.Contains(strings.Join(ids, " "), userID) {
		t.Errorf("recall with HideToolTurns = %v, want the user's turn %s among them", ids, userID)
	}
}

// BenchmarkRecallToolTraffic is a recall whose best matches are tool
// traffic (24 tool turns above a store of 1,000 memories): left out, they
// make the search ask again for more; "with turns" names every kind, as a
// caller that wants them does, and is searched once.
func BenchmarkRecallToolTraffic(b *testing.B) {
	home := benchStore(b, 1000)
	m := benchOpen(b, home, Options{Index: index.ReaderOptions{Warm: true}})
	defer m.Close()
	storeToolTraffic(b, m, 12)
	for _, c := range []struct {
		name  string
		kinds []string
	}{{"left out", nil}, {"with turns", mem.Kinds}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Recall(b.Context(), Query{Text: "favourite editor Helix", K: 10, Kinds: c.kinds}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
