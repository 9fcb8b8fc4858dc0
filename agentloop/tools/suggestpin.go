package tools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// PinSuggester takes the model's suggestions of pins. It only records
// them: the user decides (*agentloop.Agent satisfies it).
type PinSuggester interface {
	// SuggestPin records the suggestion to pin the memory id, and returns
	// a short confirmation for the model. An unknown id is an error.
	SuggestPin(ctx context.Context, id, reason string) (string, error)
}

// suggestPinTool is the suggest_pin tool.
type suggestPinTool struct{ s PinSuggester }

// NewSuggestPinTool returns the suggest_pin tool over s.
func NewSuggestPinTool(s PinSuggester) Tool { return suggestPinTool{s} }

var suggestPinSchema = object(map[string]jsonschema.Definition{
	"id":     {Type: jsonschema.String, Description: "The id of the memory to pin, as the context or recall shows it."},
	"reason": {Type: jsonschema.String, Description: "Why it should stay in every context, in a few words the user will read."},
}, "id", "reason")

// Definition implements Tool.
func (suggestPinTool) Definition() openai.Tool {
	return schemaTool("suggest_pin", "Suggest that the user pin a memory that this work keeps needing, so that it stays in the standing context. The user sees the suggestion and decides; nothing is pinned by this call.", suggestPinSchema)
}

// Run implements Tool.
func (t suggestPinTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		ID     string `json:"id"`
		Reason string `json:"reason"`
	}
	if err := decodeArgs(args, suggestPinSchema, &a); err != nil {
		return errorf("%v", err), nil
	}
	id := strings.TrimSpace(a.ID)
	if id == "" {
		return errorf("id is empty"), nil
	}
	out, err := t.s.SuggestPin(ctx, id, a.Reason)
	if err != nil {
		if ctx.Err() != nil {
			return errorf("suggest_pin was interrupted"), ctx.Err()
		}
		return errorf("could not suggest it: %v", err), nil
	}
	return Result{Content: out}, nil
}
