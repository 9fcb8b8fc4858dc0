package agentloop

import (
	"context"

	"github.com/sashabaranov/go-openai"
)

// The agent's tests run in package agentloop_test: they drive it over a
// real *mira.Memory, and the root package imports agentloop's lower
// neighbours, never the other way round. These are the internals they
// read.
var (
	CallsOf     = callsOf
	BoolField   = boolField
	StringField = stringField
	FirstLine   = firstLine
)

// Front matter fields of a turn and the note an interrupted reply ends with.
const (
	FieldToolCalls   = fieldToolCalls
	FieldToolCallID  = fieldToolCallID
	FieldNoText      = fieldNoText
	FieldIsError     = fieldIsError
	FieldDenied      = fieldDenied
	FieldArtifacts   = fieldArtifacts
	FieldInterrupted = fieldInterrupted
	InterruptedNote  = interruptedNote
)

// RequestMessages are the messages the agent would send for text, built
// as Send builds them.
func (a *Agent) RequestMessages(ctx context.Context, text string) ([]openai.ChatCompletionMessage, error) {
	p, err := a.prepare(ctx, text)
	if err != nil {
		return nil, err
	}
	return a.request(p, "", EffortAuto).Messages, nil
}

// Refresh reloads the conversation when the store moved, as the next
// message does first.
func (a *Agent) Refresh() error { return a.refresh() }
