package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// TaskStatus is a Memory that can also give a goal or task a new status.
// When Config.Memory has it, the model gets the task_done tool.
type TaskStatus interface {
	// SetStatus gives the goal or task id the status (done, another
	// closed status, or open) and returns a short confirmation for the
	// model. An id that is no live goal or task, or a status that is
	// unknown, is an error that names it; nothing is changed then.
	SetStatus(ctx context.Context, id, status string) (string, error)
	// Statuses are the statuses SetStatus takes, offered to the model.
	Statuses() []string
}

// taskDoneTool is the task_done tool.
type taskDoneTool struct{ m TaskStatus }

func (t taskDoneTool) schema() *jsonschema.Definition {
	return object(map[string]jsonschema.Definition{
		"id":     {Type: jsonschema.String, Description: "The id of the goal or task, as the standing context, recall or the user give it."},
		"status": {Type: jsonschema.String, Enum: t.m.Statuses(), Description: "The new status: done (the default), another closed status such as cancelled or dropped, or open to reopen it."},
	}, "id")
}

// Definition implements Tool.
func (t taskDoneTool) Definition() openai.Tool {
	return schemaTool("task_done", "Mark a goal or task done (or cancelled, dropped, ...; or open again) when the user says it is finished or abandoned. "+
		"A closed one leaves the standing context; the memory is kept. Ids that are not a live goal or task are refused.", t.schema())
}

// Run implements Tool.
func (t taskDoneTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := decodeArgs(args, t.schema(), &a); err != nil {
		return errorf("%v", err), nil
	}
	id := strings.TrimSpace(a.ID)
	if id == "" {
		return errorf("id is empty"), nil
	}
	out, err := t.m.SetStatus(ctx, id, cmp.Or(strings.TrimSpace(a.Status), "done"))
	if err != nil {
		if ctx.Err() != nil {
			return errorf("task_done was interrupted"), ctx.Err()
		}
		return errorf("could not change its status: %v", err), nil
	}
	return Result{Content: out}, nil
}
