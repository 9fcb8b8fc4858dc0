package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// Memory is the store behind the remember and recall tools.
type Memory interface {
	// Remember stores text as a memory of the given kind and returns a
	// short confirmation for the model, such as the new entry's id.
	Remember(ctx context.Context, text, kind string, tags []string) (string, error)
	// Recall returns the k memories that best match query, formatted for
	// the model.
	Recall(ctx context.Context, query string, k int) (string, error)
}

// memoryKinds are the kinds the model may store; turns and summaries are
// written by the loop, not by the model.
var memoryKinds = []string{"fact", "preference", "decision", "correction", "goal", "task", "note"}

// recallMax bounds recall's k.
const recallMax = 50

// rememberTool is the remember tool.
type rememberTool struct{ m Memory }

var rememberSchema = object(map[string]jsonschema.Definition{
	"text": {Type: jsonschema.String, Description: "The memory, self-contained: it will be read later without this conversation."},
	"kind": {Type: jsonschema.String, Enum: memoryKinds, Description: "What it is: a fact, a preference of the user, a decision and its reason, a correction of something wrong, a goal, a task, or a note (the default)."},
	"tags": {Type: jsonschema.Array, Items: &jsonschema.Definition{Type: jsonschema.String}, Description: "Optional tags to find it by. A task that serves a goal takes the tag goal:<the goal's id>."},
}, "text")

// Definition implements Tool.
func (rememberTool) Definition() openai.Tool {
	return schemaTool("remember", "Store something worth knowing in later sessions in the user's persistent memory: decisions, preferences, corrections, facts about the project. Never store secrets.", rememberSchema)
}

// Run implements Tool.
func (t rememberTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Text string   `json:"text"`
		Kind string   `json:"kind"`
		Tags []string `json:"tags"`
	}
	if err := decodeArgs(args, rememberSchema, &a); err != nil {
		return errorf("%v", err), nil
	}
	text := strings.TrimSpace(a.Text)
	if text == "" {
		return errorf("text is empty"), nil
	}
	out, err := t.m.Remember(ctx, text, cmp.Or(a.Kind, "note"), a.Tags)
	if err != nil {
		if ctx.Err() != nil {
			return errorf("remember was interrupted"), ctx.Err()
		}
		return errorf("could not remember it: %v", err), nil
	}
	return Result{Content: cmp.Or(out, "Remembered.")}, nil
}

// recallTool is the recall tool.
type recallTool struct{ m Memory }

var recallSchema = object(map[string]jsonschema.Definition{
	"query": {Type: jsonschema.String, Description: "What to look for, in words."},
	"k":     {Type: jsonschema.Integer, Description: fmt.Sprintf("How many memories to return. Default 5, at most %d.", recallMax)},
}, "query")

// Definition implements Tool.
func (recallTool) Definition() openai.Tool {
	return schemaTool("recall", "Search the user's persistent memory: earlier decisions, preferences, corrections and facts, from this and other sessions.", recallSchema)
}

// Run implements Tool.
func (t recallTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Query string `json:"query"`
		K     int    `json:"k"`
	}
	if err := decodeArgs(args, recallSchema, &a); err != nil {
		return errorf("%v", err), nil
	}
	if strings.TrimSpace(a.Query) == "" {
		return errorf("query is empty"), nil
	}
	if a.K < 0 {
		return errorf("k must be positive"), nil
	}
	k := min(cmp.Or(a.K, 5), recallMax)
	out, err := t.m.Recall(ctx, strings.TrimSpace(a.Query), k)
	if err != nil {
		if ctx.Err() != nil {
			return errorf("recall was interrupted"), ctx.Err()
		}
		return errorf("recall failed: %v", err), nil
	}
	if strings.TrimSpace(out) == "" {
		out = fmt.Sprintf("No memories match %q.", a.Query)
	}
	return Result{Content: out}, nil
}
