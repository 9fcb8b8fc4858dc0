package agentloop

import (
	"context"
	"fmt"

	plan "github.com/miramem/mira/ctx"
)

// Code is the project's code as the agent's context takes it, from its
// code index.
type Code interface {
	// Limits returns the code limits of a context mode: how many cards,
	// how many lines of excerpt, how many tokens of map.
	Limits(mode plan.Mode) plan.Limits
	// Map returns the code map of the current project as a candidate
	// (marked Auto), fitted to the mode's map tokens; none without an
	// index. It should stay the same bytes while the project does, so
	// that the standing context keeps a provider's cache.
	Map(ctx context.Context, mode plan.Mode) ([]plan.Item, error)
	// Touchpoints returns the code cards a message most likely needs
	// (marked Auto), at most the mode's code cards and a few more.
	Touchpoints(ctx context.Context, mode plan.Mode, text string) ([]plan.Item, error)
}

// Code budgets of the context sent with each message, on top of
// RecallBudget, by mode: thin cards in light, excerpts in heavy.
const (
	DefaultCodeBudgetLight = 1500
	DefaultCodeBudgetHeavy = 6000
)

// codeNote tells the model how to use the code map and the cards. It
// heads the standing context's code map, and only when there is one.
const codeNote = "The code map below is the project's module tree with its central definitions, from its code index; a message may come with code cards for it (\"## Code\"). Use the code tool to expand a definition (its body, callers, callees, files changed with it) rather than reading or grepping whole files.\n"

// mode is the context mode of the agent.
func (a *Agent) mode() plan.Mode {
	m, _ := plan.ParseMode(string(a.cfg.ContextMode))
	return m
}

// codeMap returns the map candidates of the standing context. A code
// index that fails is reported and done without.
func (a *Agent) codeMap(ctx context.Context) ([]plan.Item, error) {
	if a.cfg.Code == nil || a.mode() == plan.ModeOff {
		return nil, nil
	}
	items, err := a.cfg.Code.Map(ctx, a.mode())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		a.cfg.Warn(fmt.Errorf("code map: %w", err))
		return nil, nil
	}
	return items, nil
}

// codeTouchpoints returns the code cards of a message.
func (a *Agent) codeTouchpoints(ctx context.Context, text string) ([]plan.Item, error) {
	if a.cfg.Code == nil || a.mode() == plan.ModeOff {
		return nil, nil
	}
	items, err := a.cfg.Code.Touchpoints(ctx, a.mode(), text)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		a.cfg.Warn(fmt.Errorf("code for the message: %w", err))
		return nil, nil
	}
	return items, nil
}

// codeBudget is the budget code cards add to a message's context.
func (a *Agent) codeBudget() int {
	if a.mode() == plan.ModeHeavy {
		return DefaultCodeBudgetHeavy
	}
	return DefaultCodeBudgetLight
}

// hasMap reports whether a plan includes a code map.
func hasMap(p *plan.Plan) bool {
	for _, e := range p.Included {
		if e.Section == plan.SectionCodeMap {
			return true
		}
	}
	return false
}
