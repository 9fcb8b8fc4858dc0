package mcpserver

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// task_done closes a task: the context block no longer carries it, the
// new version says done, and an id that is no task is a tool error that
// names it.
func TestTaskDone(t *testing.T) {
	cs := session(t)
	var task, fact RememberOut
	if _, isErr := call(t, cs, "remember", map[string]any{"text": "Migrate the orders table", "kind": "task"}, &task); isErr || len(task.Memories) != 1 {
		t.Fatalf("remember task: %+v", task)
	}
	if _, isErr := call(t, cs, "remember", map[string]any{"text": "Orders live in PostgreSQL", "kind": "fact"}, &fact); isErr || len(fact.Memories) != 1 {
		t.Fatalf("remember fact: %+v", fact)
	}
	id := task.Memories[0].ID
	if text, _ := call(t, cs, "context", map[string]any{}, nil); !strings.Contains(text, "Migrate the orders table") {
		t.Fatalf("the open task is not in the context:\n%s", text)
	}
	var done TaskDoneOut
	text, isErr := call(t, cs, "task_done", map[string]any{"id": id}, &done)
	if isErr || done.Replaced != id || done.Memory.Status != "done" || done.Memory.ID == id || done.Memory.Text != "Migrate the orders table" {
		t.Fatalf("task_done = %q, %+v", text, done)
	}
	if text, _ := call(t, cs, "context", map[string]any{}, nil); strings.Contains(text, "Migrate the orders table") {
		t.Errorf("the done task is still in the context:\n%s", text)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"id": fact.Memories[0].ID}, fact.Memories[0].ID + " is a fact, not a goal or task"},
		{map[string]any{"id": id}, id},
		{map[string]any{"id": done.Memory.ID, "status": "finished"}, "finished"},
	} {
		res, err := cs.CallTool(t.Context(), toolParams("task_done", c.args))
		if err == nil && !res.IsError {
			t.Errorf("task_done %v succeeded", c.args)
			continue
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		} else {
			msg = resultText(res)
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("task_done %v: %q, want %q", c.args, msg, c.want)
		}
	}
}

func toolParams(name string, args map[string]any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: name, Arguments: args}
}

// resultText is the text of a tool's result.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
