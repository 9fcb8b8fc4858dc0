package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Model is the chat model extraction needs: its name, for provenance, and
// a JSON completion whose reply is checked by check after it is decoded into
// out, a failed check being sent back to the model for one repair.
type Model interface {
	Model() string
	CompleteJSON(ctx context.Context, system, user string, out any, check func() error) error
}

// Kinds are the kinds an extracted memory may have; the first is the
// default.
var Kinds = []string{"fact", "preference", "decision", "correction", "goal", "task"}

// MaxFacts is the most facts taken from one user message: a message says a
// few things worth keeping, and a model asked for more pads the list with
// paraphrases.
const MaxFacts = 3

// DefaultK is the number of existing memories a new fact is compared with.
const DefaultK = 5

// DefaultBatch is the number of facts reconciled in one call: enough to
// save calls on a long conversation, few enough for a small model to keep
// every fact in view.
const DefaultBatch = 6

// contextChars bounds the assistant message shown as context: it helps to
// read "yes, that one" but is not what facts are taken from.
const contextChars = 600

// Turn is one message of a conversation.
type Turn struct {
	// ID is the stored turn's id; empty for input that is not stored.
	ID string
	// Role is user, assistant or tool; empty means user.
	Role string
	Text string
	// Time is when the message was written; zero when unknown.
	Time time.Time
}

// User reports whether the turn is the user's: facts come from those only.
func (t Turn) User() bool { return t.Role == "" || t.Role == "user" }

// Fact is one atomic, standalone statement extracted from a user message.
type Fact struct {
	Text string
	Kind string // one of Kinds
	// Turn is the id of the turn it came from, empty when the turn is not
	// stored.
	Turn string
}

// Memory is an existing memory a new fact is compared with.
type Memory struct {
	ID, Kind, Text string
}

// Operations of an Action, the values of the store's --dry-run "op".
const (
	OpAdd    = "add"
	OpUpdate = "update"
	OpDelete = "delete"
	OpNone   = "none"
)

// Action is one step of applying a reconciliation to the store.
type Action struct {
	// Op is OpAdd, OpUpdate, OpDelete or OpNone.
	Op string
	// ID is the new memory's id: the one to store (add) or the one that
	// replaces Target (update, stored by an earlier add of the same run).
	ID string
	// Text and Kind are the memory to store (add).
	Text, Kind string
	// Fact is the extracted fact the action comes from.
	Fact Fact
	// Target is the existing memory replaced (update), deleted (delete) or
	// found to say the same already (none; zero when the model named none).
	Target Memory
	// Reason says why, in the model's words or the rule's.
	Reason string
	// Exact marks a none settled without the model: Target has the same
	// text.
	Exact bool
}

// Extractor runs extraction and reconciliation with one model.
type Extractor struct {
	// LLM is the chat model.
	LLM Model
	// Neighbours returns, for each text, the existing memories nearest to
	// it, at most k, best first. Nil means the store has none.
	Neighbours func(ctx context.Context, texts []string, k int) ([][]Memory, error)
	// NewID returns an id for a new memory.
	NewID func() string
	// K is the number of neighbours per fact; DefaultK when not positive.
	K int
	// Batch is the number of facts per reconciliation call; DefaultBatch
	// when not positive.
	Batch int
	// Now dates messages that carry no time, so that the model can turn
	// "yesterday" into a date; nil means time.Now.
	Now func() time.Time
	// Warn receives what went wrong without stopping the run: a failed
	// reconciliation call whose facts were added as they are. Nil
	// discards it.
	Warn func(error)
}

func (x *Extractor) warn(err error) {
	if x.Warn != nil {
		x.Warn(err)
	}
}

func (x *Extractor) now() time.Time {
	if x.Now != nil {
		return x.Now()
	}
	return time.Now()
}

// Facts asks the model for at most MaxFacts facts from each user message of
// turns, in order. The message before a user message, when it is not the
// user's, is shown as context. A failed call fails the whole extraction:
// the caller then writes nothing.
func (x *Extractor) Facts(ctx context.Context, turns []Turn) ([]Fact, error) {
	if x.LLM == nil {
		return nil, errNoModel
	}
	var out []Fact
	for i, t := range turns {
		if !t.User() || strings.TrimSpace(t.Text) == "" {
			continue
		}
		var prev string
		if i > 0 && !turns[i-1].User() {
			prev = turns[i-1].Text
		}
		when := t.Time
		if when.IsZero() {
			when = x.now()
		}
		facts, err := x.askFacts(ctx, factsMessage(t.Text, prev, when))
		if err != nil {
			name := t.ID
			if name == "" {
				name = fmt.Sprintf("message %d", i+1)
			}
			return nil, fmt.Errorf("extract facts from %s: %w", name, err)
		}
		for _, f := range facts {
			f.Turn = t.ID
			out = append(out, f)
		}
	}
	return out, nil
}

// askFacts makes one extraction call. The reply is decoded as raw JSON and
// parsed in the check, so that every shape the parser refuses goes back to
// the model for repair rather than failing outright.
func (x *Extractor) askFacts(ctx context.Context, msg string) ([]Fact, error) {
	var raw json.RawMessage
	var facts []Fact
	err := x.LLM.CompleteJSON(ctx, factsPrompt, msg, &raw, func() error {
		f, err := parseFacts(raw)
		if err != nil {
			return err
		}
		facts = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	return facts, nil
}

// errNoModel is returned when an Extractor has no model.
var errNoModel = errors.New("no chat model")
