package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/miramem/mira"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TaskDoneIn are task_done's arguments.
type TaskDoneIn struct {
	ID     string `json:"id" jsonschema:"id of the goal or task, as recall, list or context show it"`
	Status string `json:"status,omitempty" jsonschema:"the new status: done (default), another closed status such as cancelled or dropped, or open to reopen it"`
}

// TaskDoneOut is the goal or task with its new status.
type TaskDoneOut struct {
	Memory   Memory `json:"memory" jsonschema:"the new version of the goal or task"`
	Replaced string `json:"replaced,omitempty" jsonschema:"id of the version replaced; empty when the status was already that"`
}

func taskDoneTool() *mcp.Tool {
	return tool[TaskDoneIn, TaskDoneOut]("task_done", "Mark a goal or task done",
		"Mark a goal or task done (or cancelled, dropped, ...; or open again): a new version with the status replaces it, "+
			"and a closed one leaves the standing context of every prompt. Use it when the user says a task is finished or abandoned. "+
			"The memory is kept; ids that are not a live goal or task are refused.",
		func(p map[string]*jsonschema.Schema) {
			p["status"].Enum = enum(slices.Concat([]string{mira.StatusOpen}, mira.ClosedStatus)...)
		}, mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true})
}

func (s *server) taskDone(ctx context.Context, in TaskDoneIn) (*mcp.CallToolResult, TaskDoneOut, error) {
	var out TaskDoneOut
	res, err := s.m.SetStatus(ctx, in.ID, cmp.Or(in.Status, "done"), mira.RememberOptions{Source: "mcp"})
	if err != nil {
		return nil, out, err
	}
	e := res.Items[0].Entry
	out.Memory = memoryOf(e.Record())
	if res.Replaced == nil {
		return textResult(fmt.Sprintf("%s %s is already %s.", e.Kind, e.ID, e.Status)), out, nil
	}
	out.Replaced = res.Replaced.ID
	return textResult(fmt.Sprintf("Marked %s %s %s; it is now %s.", e.Kind, res.Replaced.ID, e.Status, e.ID)), out, nil
}
