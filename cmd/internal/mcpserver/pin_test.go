package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	var out map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(raw, &out)
	return b.String(), res.IsError, out
}

func TestUnpinAndTaskLease(t *testing.T) {
	cs := session(t)
	_, isErr, task := callText(t, cs, "remember", map[string]any{"text": "Port the parser", "kind": "task"})
	if isErr {
		t.Fatal("remember task failed")
	}
	taskID := task["memories"].([]any)[0].(map[string]any)["id"].(string)
	_, isErr, note := callText(t, cs, "remember", map[string]any{"text": "The parser keeps its old API", "pin": "leased", "until": "task:" + taskID})
	if isErr {
		t.Fatalf("remember leased for a task failed: %v", note)
	}
	m := note["memories"].([]any)[0].(map[string]any)
	if m["pin"] != "leased" {
		t.Fatalf("remember leased for a task: %v", m)
	}
	id := m["id"].(string)
	text, isErr, _ := callText(t, cs, "unpin", map[string]any{"id": id})
	if isErr || !strings.Contains(text, "Unpinned "+id) {
		t.Errorf("unpin = %q (error %v)", text, isErr)
	}
	text, isErr, _ = callText(t, cs, "unpin", map[string]any{"id": "01JZZZZZZZZZZZZZZZZZZZZZZZ"})
	if !isErr || !strings.Contains(text, "01JZZZZZZZZZZZZZZZZZZZZZZZ") {
		t.Errorf("unpin of an unknown id = %q (error %v)", text, isErr)
	}
	text, isErr, _ = callText(t, cs, "pin", map[string]any{"id": id, "pin": "leased", "until": "3turns"})
	if !isErr || !strings.Contains(text, "mira-agent") {
		t.Errorf("pin leased for turns = %q (error %v)", text, isErr)
	}
}
