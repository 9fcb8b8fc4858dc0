package agentloop

import (
	"context"
	"fmt"
	"strings"

	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/internal/text"
)

// View is what the model is shown for a message, and why (/context).
type View struct {
	// InstructionsTokens counts the first system message.
	InstructionsTokens int
	// Tools is the number of tools offered.
	Tools int
	// Standing is the plan of the standing context; StandingTokens counts
	// the whole system message, project line included.
	Standing       *plan.Plan
	StandingTokens int
	// BufferTurns and BufferTokens measure the conversation since the
	// summary; BufferLimit is where summarizing starts.
	BufferTurns, BufferTokens, BufferLimit int
	// TailTurns and TailTokens measure the summarized turns still sent
	// whole.
	TailTurns, TailTokens int
	// Query is the message the memories were recalled for, and Recall
	// their plan (nil when nothing is recalled).
	Query  string
	Recall *plan.Plan
}

// Context plans the context as the next request would have it, with the
// memories recalled for query (the last message when empty). It stores
// nothing.
func (a *Agent) Context(ctx context.Context, query string) (*View, error) {
	if err := a.refresh(); err != nil {
		return nil, err
	}
	if query == "" {
		query = a.query
	}
	standing, err := a.planStanding(ctx)
	if err != nil {
		return nil, err
	}
	v := &View{
		InstructionsTokens: a.tok.Count(a.cfg.Instructions),
		Standing:           standing,
		StandingTokens:     a.tok.Count(a.standingText(standing)),
		BufferTurns:        len(a.buffer),
		BufferTokens:       a.bufferTokens(),
		BufferLimit:        a.cfg.BufferTokens,
		TailTurns:          len(a.tail),
		Query:              query,
	}
	for _, e := range a.tail {
		v.TailTokens += a.turnTokens(e)
	}
	if a.tools != nil {
		v.Tools = len(a.tools.Definitions())
	}
	if query != "" && a.recalls() {
		if v.Recall, err = a.planRecall(ctx, query, standing); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Meter is the budget meter of the view on one line, such as
// "instructions 690 · standing 1,204/6,000 tok (5 in, 2 pinned) · buffer
// 3,410/24,000 tok (14 turns) · recall 312/2,000 tok (3 in)".
func (v *View) Meter() string {
	parts := []string{
		fmt.Sprintf("instructions %s tok", text.Thousands(v.InstructionsTokens)),
		fmt.Sprintf("standing %s/%s tok (%s)", text.Thousands(v.StandingTokens), text.Thousands(v.Standing.Budget), counts(v.Standing)),
		fmt.Sprintf("buffer %s/%s tok (%d %s)", text.Thousands(v.BufferTokens), text.Thousands(v.BufferLimit), v.BufferTurns, plural(v.BufferTurns, "turn", "turns")),
	}
	if v.TailTurns > 0 {
		parts = append(parts, fmt.Sprintf("tail %s tok (%d summarized %s)", text.Thousands(v.TailTokens), v.TailTurns, plural(v.TailTurns, "turn", "turns")))
	}
	if v.Recall != nil {
		parts = append(parts, fmt.Sprintf("recall %s/%s tok (%s)", text.Thousands(v.Recall.Used), text.Thousands(v.Recall.Budget), counts(v.Recall)))
	}
	return strings.Join(parts, " · ")
}

func counts(p *plan.Plan) string {
	pinned := 0
	for _, e := range p.Included {
		if e.Reason == plan.ReasonPinned {
			pinned++
		}
	}
	s := fmt.Sprintf("%d in", len(p.Included))
	if pinned > 0 {
		s += fmt.Sprintf(", %d pinned", pinned)
	}
	if len(p.Excluded) > 0 {
		s += fmt.Sprintf(", %d out", len(p.Excluded))
	}
	return s
}
