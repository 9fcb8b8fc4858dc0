package agentloop

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/mem"
	openai "github.com/sashabaranov/go-openai"
)

func turnEntry(role, body string, extra map[string]any) *mem.Entry {
	return &mem.Entry{Kind: mem.KindTurn, Role: role, Body: body, Extra: extra}
}

func callList(ids ...string) []storedCall {
	var out []storedCall
	for _, id := range ids {
		out = append(out, storedCall{ID: id, Name: "glob", Arguments: `{"pattern":"*"}`})
	}
	return out
}

// Stored turns become a valid conversation whatever the store holds.
func TestMessagesOf(t *testing.T) {
	call := func(id string) openai.ToolCall {
		return openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "glob", Arguments: `{"pattern":"*"}`}}
	}
	tests := []struct {
		name  string
		turns []*mem.Entry
		want  []openai.ChatCompletionMessage
	}{
		{
			name: "complete exchange",
			turns: []*mem.Entry{
				turnEntry("user", "hi", nil),
				turnEntry("assistant", "→ glob", map[string]any{fieldToolCalls: callList("a"), fieldNoText: true}),
				turnEntry("tool", "x.go", map[string]any{fieldToolCallID: "a", fieldToolName: "glob"}),
				turnEntry("assistant", "done", nil),
			},
			want: []openai.ChatCompletionMessage{
				{Role: "user", Content: "hi"},
				{Role: "assistant", ToolCalls: []openai.ToolCall{call("a")}},
				{Role: "tool", ToolCallID: "a", Content: "x.go"},
				{Role: "assistant", Content: "done"},
			},
		},
		{
			name: "missing result is answered",
			turns: []*mem.Entry{
				turnEntry("assistant", "looking", map[string]any{fieldToolCalls: callList("a", "b")}),
				turnEntry("tool", "x.go", map[string]any{fieldToolCallID: "b"}),
				turnEntry("user", "still there?", nil),
			},
			want: []openai.ChatCompletionMessage{
				{Role: "assistant", Content: "looking", ToolCalls: []openai.ToolCall{call("a"), call("b")}},
				{Role: "tool", ToolCallID: "b", Content: "x.go"},
				{Role: "tool", ToolCallID: "a", Content: noResult},
				{Role: "user", Content: "still there?"},
			},
		},
		{
			name: "result whose call was summarized",
			turns: []*mem.Entry{
				turnEntry("tool", "x.go", map[string]any{fieldToolCallID: "gone", fieldToolName: "glob"}),
				turnEntry("assistant", "ok", nil),
			},
			want: []openai.ChatCompletionMessage{
				{Role: "user", Content: "[The result of an earlier glob call:]\nx.go"},
				{Role: "assistant", Content: "ok"},
			},
		},
		{
			name:  "a turn without a role is the user's",
			turns: []*mem.Entry{turnEntry("", "imported", nil)},
			want:  []openai.ChatCompletionMessage{{Role: "user", Content: "imported"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The calls are read back as YAML gives them.
			for _, e := range tt.turns {
				if calls, ok := e.Extra[fieldToolCalls].([]storedCall); ok {
					var list []any
					for _, c := range calls {
						list = append(list, map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments})
					}
					e.Extra[fieldToolCalls] = list
				}
			}
			if diff := cmp.Diff(tt.want, messagesOf(tt.turns)); diff != "" {
				t.Errorf("messagesOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProjectScope(t *testing.T) {
	for in, want := range map[string]string{"mira": "mira", "my project": "my-project", "..": "", "": "", "ü-tool": "tool"} {
		if got := ProjectScope(mem.Project{Name: in}); got != want {
			t.Errorf("ProjectScope(%q) = %q, want %q", in, got, want)
		}
	}
}

// words counts words, as a tokenizer for tests.
type words struct{}

func (words) Count(s string) int { return len(strings.Fields(s)) }

// The cut keeps the newest exchanges within the budget and falls before a
// user message, never between a call and its result.
func TestCut(t *testing.T) {
	mk := func(id, role, body string) *mem.Entry {
		return &mem.Entry{ID: id, Kind: mem.KindTurn, Role: role, Body: body}
	}
	a := &Agent{tok: words{}, tokens: map[string]int{}, buffer: []*mem.Entry{
		mk("u1", "user", "one two three"),
		mk("a1", "assistant", "four five"),
		mk("u2", "user", "six seven"),
		mk("a2", "assistant", "eight nine ten eleven"),
		mk("t2", "tool", "twelve"),
		mk("u3", "user", "thirteen"),
		mk("a3", "assistant", "fourteen fifteen"),
	}}
	tests := []struct {
		keep int
		want string
	}{
		{keep: 3, want: "t2"},   // only the last exchange (3 words) fits
		{keep: 2, want: "t2"},   // not even that: keep the last exchange anyway
		{keep: 10, want: "a1"},  // the last two exchanges (10 words)
		{keep: 100, want: "a1"}, // everything but the first exchange: the cut needs something before it
	}
	for _, tt := range tests {
		if got := a.cut(tt.keep); got != tt.want {
			t.Errorf("cut(%d) = %q, want %q", tt.keep, got, tt.want)
		}
	}
}
