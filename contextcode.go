package mira

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/miramem/mira/code"
	plan "github.com/miramem/mira/ctx"
)

// Code in a context: the code map with the stable material, and the
// touchpoints of the query (with, in heavy mode, exemplars: call sites of
// the best ones) after the retrieved memories. See ctx for how they are
// planned.

// exemplarsOf bounds the touchpoints whose callers become exemplars, and
// exemplarsEach the exemplars of one.
const (
	exemplarsOf   = 2
	exemplarsEach = 2
)

// ContextLimits returns the limits of a context mode: the built-in ones,
// overridden by the configuration's context.budget and context.code.
func (m *Memory) ContextLimits(mode plan.Mode) plan.Limits {
	lim := mode.Defaults()
	cc := &m.cfg.Context
	pick := func(light, heavy int) int {
		return map[plan.Mode]int{plan.ModeLight: light, plan.ModeHeavy: heavy}[mode]
	}
	if n := map[plan.Mode]int{plan.ModeOff: cc.Budget.Off, plan.ModeLight: cc.Budget.Light, plan.ModeHeavy: cc.Budget.Heavy}[mode]; n > 0 {
		lim.Budget = n
	}
	if n := pick(cc.CodeBounds.Cards.Light, cc.CodeBounds.Cards.Heavy); n > 0 {
		lim.CodeCards = n
	}
	if n := pick(cc.CodeBounds.Lines.Light, cc.CodeBounds.Lines.Heavy); n > 0 {
		lim.ExcerptLines = n
	}
	if n := pick(cc.CodeBounds.Map.Light, cc.CodeBounds.Map.Heavy); n > 0 {
		lim.MapTokens = n
	}
	return lim
}

// CodeCardItem makes a context candidate of a card, with its score (nil:
// none) and why it was chosen.
func CodeCardItem(c CodeCard, score *float64, excerpt string, why []string) plan.Item {
	return plan.FromCode(plan.Code{
		Kind: c.Kind, Name: c.Name, Parent: c.Parent, Module: c.Module, Path: c.Path, Lang: c.Lang,
		Line: c.Line, EndLine: c.EndLine, Signature: c.Signature, Doc: c.Doc, Snippet: c.Snippet,
		Excerpt: excerpt, Why: why, Memories: c.Memories,
	}, score)
}

// CodeTouchpointItem makes a context candidate of a touchpoint.
func CodeTouchpointItem(tp CodeTouchpoint) plan.Item {
	s := tp.Score
	return CodeCardItem(tp.Card, &s, tp.Excerpt, tp.Why)
}

// CodeContext says what code a context takes.
type CodeContext struct {
	// Mode and Limits: no code in ModeOff; the map within MapTokens, and
	// up to CodeCards touchpoints (exemplars too, in ModeHeavy).
	Mode   plan.Mode
	Limits plan.Limits
	// Query is what the touchpoints are for; none without it.
	Query string
	// Files are files the conversation names: what changes with them
	// is favoured.
	Files []string
	// NoMap and NoTouchpoints leave out one of the two.
	NoMap, NoTouchpoints bool
}

// codeIndexFile is the file a built index has in its directory.
const codeIndexFile = "index"

// Indexed reports whether the project's code has an index already. A
// context takes code only from an index that exists: building one for a
// large tree is for mira-code index or a code tool to decide, not for
// every prompt.
func (c *Code) Indexed() bool {
	_, err := os.Stat(filepath.Join(c.ix.Dir(), codeIndexFile))
	return err == nil
}

// CodeIndexed reports whether the project at root has a code index
// already, in dir ("" for the default place), without opening it (which
// would make its directory): a command that only uses an index that
// exists asks this first.
func CodeIndexed(root, dir string, getenv func(string) string) bool {
	if dir == "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return false
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		if dir, err = code.DefaultDir(abs, getenv); err != nil {
			return false
		}
	}
	_, err := os.Stat(filepath.Join(dir, codeIndexFile))
	return err == nil
}

// ContextItems returns the code candidates of a context, all marked Auto
// (ModeOff leaves them out): the map, and the touchpoints of the query.
// An index never built gives none.
func (c *Code) ContextItems(ctx context.Context, cc CodeContext) ([]plan.Item, error) {
	if cc.Mode == plan.ModeOff || !c.Indexed() {
		return nil, nil
	}
	var items []plan.Item
	if !cc.NoMap && cc.Limits.MapTokens > 0 {
		m, err := c.Map(ctx, cc.Limits.MapTokens)
		if err != nil {
			return nil, fmt.Errorf("code map: %w", err)
		}
		if m.Text != "" {
			it := plan.CodeMap(m.Text)
			it.Auto = true
			items = append(items, it)
		}
	}
	if cc.NoTouchpoints || cc.Query == "" || cc.Limits.CodeCards <= 0 {
		return items, nil
	}
	// More candidates than cards: the planner says why the rest are out.
	tps, err := c.Touchpoints(ctx, CodeQuery{Text: cc.Query, K: cc.Limits.CodeCards + cc.Limits.CodeCards/2 + 1, Files: cc.Files, Explain: true})
	if err != nil {
		return nil, fmt.Errorf("code touchpoints: %w", err)
	}
	for _, tp := range tps {
		it := CodeTouchpointItem(tp)
		it.Auto = true
		items = append(items, it)
	}
	if cc.Mode == plan.ModeHeavy {
		ex, err := c.exemplars(ctx, tps)
		if err != nil {
			return nil, err
		}
		items = append(items, ex...)
	}
	return items, nil
}

// exemplars are the places that call the best touchpoints: how the code
// is used, scored below the touchpoint they show.
func (c *Code) exemplars(ctx context.Context, tps []CodeTouchpoint) ([]plan.Item, error) {
	var out []plan.Item
	for _, tp := range tps[:min(len(tps), exemplarsOf)] {
		if tp.Name == "" {
			continue
		}
		ref := tp.Path + ":" + strconv.Itoa(tp.Line)
		edges, err := c.Callers(ctx, ref, 1)
		if err != nil {
			return nil, fmt.Errorf("code exemplars: %w", err)
		}
		n := 0
		for _, e := range edges {
			if n == exemplarsEach || e.From.Path == "" {
				break
			}
			if e.From.Path == tp.Path && e.From.Line == tp.Line {
				continue // recursion
			}
			s := tp.Score / 2
			why := []string{fmt.Sprintf("exemplar: calls %s at %s:%d", tp.Name, e.Path, e.Line)}
			it := CodeCardItem(e.From, &s, "", why)
			it.Auto = true
			out = append(out, it)
			n++
		}
	}
	return out, nil
}
