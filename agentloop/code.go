package agentloop

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
	// (marked Auto), at most the mode's code cards and a few more. files
	// are what look like file paths in the message and the recent turns
	// (tool calls and results too), newest first, not checked: those of
	// the project count, with what changes with them.
	Touchpoints(ctx context.Context, mode plan.Mode, text string, files []string) ([]plan.Item, error)
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

// ContextMode returns the context mode the next message is planned with.
func (a *Agent) ContextMode() plan.Mode { return a.mode() }

// SetContextMode changes the context mode of the messages that follow: the
// standing context, the recalled memories and the code are planned with
// m from the next message on. What was sent before stays as it was.
func (a *Agent) SetContextMode(m plan.Mode) error {
	m, err := plan.ParseMode(string(m))
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	a.cfg.ContextMode = m
	return nil
}

// LastPlans returns the plans of the last message sent: its standing
// context and its recalled memories and code cards (nil when it had
// none). Both are nil before the first message.
func (a *Agent) LastPlans() (standing, recall *plan.Plan) { return a.standing, a.recall }

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
	items, err := a.cfg.Code.Touchpoints(ctx, a.mode(), text, a.mentionedPaths(text))
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

// Bounds of the paths a message's code cards take from the conversation:
// the turns looked at, and the paths passed on.
const (
	pathTurns = 8
	maxPaths  = 32
)

// mentionedPaths returns what looks like a file path in text and in the
// recent turns (their text and their tool calls' arguments), newest
// first, each once.
func (a *Agent) mentionedPaths(text string) []string {
	texts := []string{text}
	turns := append(slices.Clip(a.tail), a.buffer...)
	for i := len(turns) - 1; i >= 0 && i >= len(turns)-pathTurns; i-- {
		e := turns[i]
		for _, c := range callsOf(e) {
			texts = append(texts, c.Function.Arguments)
		}
		texts = append(texts, e.Body)
	}
	var out []string
	seen := map[string]bool{}
	for _, t := range texts {
		for _, p := range pathWords(t) {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
				if len(out) == maxPaths {
					return out
				}
			}
		}
	}
	return out
}

// pathWords returns the words of s that look like file paths: with a
// slash or a file extension, without a trailing :line or punctuation.
func pathWords(s string) []string {
	var out []string
	words := strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r == ':' || r == '~' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	for _, w := range words {
		w, _, _ = strings.Cut(w, ":")
		w = strings.TrimRight(w, ".")
		if len(w) < 3 || strings.Contains(w, "//") {
			continue
		}
		base := w[strings.LastIndexByte(w, '/')+1:]
		dot := strings.LastIndexByte(base, '.')
		if !strings.Contains(w, "/") && (dot <= 0 || dot == len(base)-1) {
			continue
		}
		out = append(out, w)
	}
	return out
}
