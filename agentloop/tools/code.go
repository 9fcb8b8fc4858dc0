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

// CodeIndex is the project's code index behind the code tool. Each method
// returns its answer as text for the model.
type CodeIndex interface {
	// Symbols finds up to k definitions by name or words.
	Symbols(ctx context.Context, query string, k int) (string, error)
	// Card describes one definition (ref: a name, Parent.Name,
	// path:line or path#Name), with its whole body when body is set.
	Card(ctx context.Context, ref string, body bool) (string, error)
	// Callers and Callees list call sites up to depth levels away.
	Callers(ctx context.Context, ref string, depth int) (string, error)
	Callees(ctx context.Context, ref string, depth int) (string, error)
	// Touchpoints ranks the k definitions a task most likely needs.
	Touchpoints(ctx context.Context, text string, k int) (string, error)
	// Cochange lists up to k files that changed together with path.
	Cochange(ctx context.Context, path string, k int) (string, error)
}

// codeActions are the code tool's actions.
var codeActions = []string{"symbols", "card", "callers", "callees", "touchpoints", "cochange"}

// Bounds of the code tool's arguments.
const (
	codeMaxK     = 50
	codeMaxDepth = 5
)

var codeSchema = object(map[string]jsonschema.Definition{
	"action": {Type: jsonschema.String, Enum: codeActions, Description: "symbols: find definitions by name or words; card: one definition's signature, doc and place (with body: its whole source); callers / callees: the call sites of a definition, or the calls it makes; touchpoints: the definitions a task most likely needs, with excerpts; cochange: the files that changed together with a file in the project's history."},
	"query":  {Type: jsonschema.String, Description: "What the action is about: words or a name (symbols, touchpoints), a definition as a name, Type.Method, path:line or path#Name (card, callers, callees), or a file path (cochange)."},
	"body":   {Type: jsonschema.Boolean, Description: "card: show the whole definition, not just its first lines."},
	"depth":  {Type: jsonschema.Integer, Description: fmt.Sprintf("callers / callees: how many levels of calls to follow. Default 1, at most %d.", codeMaxDepth)},
	"k":      {Type: jsonschema.Integer, Description: fmt.Sprintf("symbols / touchpoints / cochange: how many results. Default 10, at most %d.", codeMaxK)},
}, "action", "query")

// codeTool is the code tool.
type codeTool struct{ ix CodeIndex }

// NewCodeTool returns the code tool over ix: the model asks the project's
// code index for definitions, bodies, callers and callees, the code a task
// needs and what changes together, instead of grepping for them.
func NewCodeTool(ix CodeIndex) Tool { return codeTool{ix} }

// Definition implements Tool.
func (codeTool) Definition() openai.Tool {
	return schemaTool("code", "Ask the project's code index: find definitions, show one with its body, follow its callers and callees, rank the code a task needs, or list the files that change together with one. Prefer it to grep and read_file for finding your way in code.", codeSchema)
}

// Run implements Tool.
func (t codeTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Action string `json:"action"`
		Query  string `json:"query"`
		Body   bool   `json:"body"`
		Depth  int    `json:"depth"`
		K      int    `json:"k"`
	}
	if err := decodeArgs(args, codeSchema, &a); err != nil {
		return errorf("%v", err), nil
	}
	q := strings.TrimSpace(a.Query)
	switch {
	case q == "":
		return errorf("query is empty"), nil
	case a.K < 0:
		return errorf("k must be positive"), nil
	case a.Depth < 0:
		return errorf("depth must be positive"), nil
	}
	k, depth := min(cmp.Or(a.K, 10), codeMaxK), min(cmp.Or(a.Depth, 1), codeMaxDepth)
	var out string
	var err error
	switch a.Action {
	case "symbols":
		out, err = t.ix.Symbols(ctx, q, k)
	case "card":
		out, err = t.ix.Card(ctx, q, a.Body)
	case "callers":
		out, err = t.ix.Callers(ctx, q, depth)
	case "callees":
		out, err = t.ix.Callees(ctx, q, depth)
	case "touchpoints":
		out, err = t.ix.Touchpoints(ctx, q, k)
	case "cochange":
		out, err = t.ix.Cochange(ctx, q, k)
	}
	if err != nil {
		if ctx.Err() != nil {
			return errorf("code was interrupted"), ctx.Err()
		}
		return errorf("code %s %q: %v", a.Action, q, err), nil
	}
	if strings.TrimSpace(out) == "" {
		out = fmt.Sprintf("code %s: nothing found for %q.", a.Action, q)
	}
	return Result{Content: out}, nil
}
