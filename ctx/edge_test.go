package ctx

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/miramem/mira/mem"
)

// A truncated item keeps as much of its text as fits: its block is within
// the cap, and one more token of text would not be. Text whose tokens cost
// more than one each once quoted (a run of blank lines is one token and a
// quoted line each) must not make the cut overshoot.
func TestShortenKeepsAsMuchAsFits(t *testing.T) {
	texts := map[string]string{
		"prose":       strings.Repeat("Exports go through the queue and are retried three times. ", 20),
		"blank lines": "First paragraph stays." + strings.Repeat("\n", 120) + "Last line.",
		"short lines": strings.Repeat("w1 w2\n\n\n\n", 40),
	}
	note := regexp.MustCompile(`\n… \[truncated: ([0-9,]+) of ([0-9,]+) tokens\]\n`)
	enc := mustTokenizer(t, "")
	exact := 0
	for name, text := range texts {
		it := retrieved("01A", text, 1, 0.5)
		lim := Limits{Budget: 16000, MaxItemTokens: 16000}
		p := &planner{opt: Options{Mode: ModeHeavy}, lim: lim, enc: enc}
		c := &cand{it: it, label: it.Record.ID, text: cleanText(text)}
		full := enc.Count(p.draw(c))
		toks := enc.encode(c.text)
		for limit := 40; limit < full; limit += 7 {
			b, n, ok := p.shorten(c, limit)
			if !ok || n > limit || n != enc.Count(b) {
				t.Fatalf("%s, limit %d: %d tokens, ok %v", name, limit, n, ok)
			}
			if n == limit {
				exact++
			}
			m := note.FindStringSubmatch(b)
			if m == nil {
				t.Fatalf("%s, limit %d: no truncation note in\n%s", name, limit, b)
			}
			k, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
			if m[2] != thousands(len(toks)) || k >= len(toks) {
				t.Fatalf("%s, limit %d: note %q for %d tokens", name, limit, m[0], len(toks))
			}
			if more := enc.Count(p.cut(c, toks, k+1)); more <= limit {
				t.Errorf("%s, limit %d: kept %d tokens of text in %d; %d would fit in %d", name, limit, k, n, k+1, more)
			}
		}
	}
	if exact == 0 {
		t.Error("no cut filled its limit exactly; the cases miss that edge")
	}
	// Through Build: the capped memory keeps its first paragraph.
	items := []Item{retrieved("01A", texts["blank lines"], 1, 0.5)}
	pl := build(t, items, Options{Mode: ModeHeavy, Limits: Limits{Budget: 4000, MaxItemTokens: 140}})
	if e, _ := entryByID(pl, "01A"); !e.Truncated || !strings.Contains(pl.Prompt(), "> First paragraph stays.\n") {
		t.Errorf("truncated %v, prompt:\n%s", e.Truncated, pl.Prompt())
	}
}

// An item whose block costs exactly MaxItemTokens is within the cap: it is
// shown whole. One token less and it is cut.
func TestCapExactFit(t *testing.T) {
	text := strings.Repeat("Exports go through the queue and are retried three times. ", 6)
	items := []Item{retrieved("01A", text, 1, 0.5)}
	whole := build(t, items, Options{Mode: ModeHeavy})
	cost := whole.Included[0].Tokens
	p := build(t, items, Options{Mode: ModeHeavy, Limits: Limits{Budget: 4000, MaxItemTokens: cost}})
	if e := p.Included[0]; e.Truncated || e.Tokens != cost || p.Prompt() != whole.Prompt() {
		t.Errorf("cap %d = cost: %+v, want the whole item", cost, e)
	}
	p = build(t, items, Options{Mode: ModeHeavy, Limits: Limits{Budget: 4000, MaxItemTokens: cost - 1}})
	if e := p.Included[0]; !e.Truncated || e.Tokens > cost-1 {
		t.Errorf("cap %d = cost-1: %+v, want it truncated within the cap", cost-1, e)
	}
}

// A unit whose best score equals the threshold reaches it.
func TestScoreAtThreshold(t *testing.T) {
	items := []Item{
		retrieved("01AT", "At the threshold.", 1, 0.5),
		retrieved("01BELOW", "Just below it.", 1, 0.4999),
		withAtom(retrieved("01ATOM1", "Atom member below.", 1, 0.1), "a"),
		withAtom(retrieved("01ATOM2", "Atom member at the threshold.", 1, 0.5), "a"),
	}
	p := build(t, items, Options{Limits: Limits{Budget: 4000, ScoreThreshold: 0.5}})
	for id, want := range map[string]string{
		"01AT": ReasonInBudget, "01BELOW": ReasonBelowThreshold, "01ATOM1": ReasonInBudget, "01ATOM2": ReasonInBudget,
	} {
		if e, _ := entryByID(p, id); e.Reason != want {
			t.Errorf("%s: %q, want %q", id, e.Reason, want)
		}
	}
}

// Given text is read in rank order, newest first, unlike the stable
// sections before it, which read oldest first.
func TestAdHocInRankOrder(t *testing.T) {
	given := func(id, text string, d int) Item {
		return Item{Record: mem.Record{ID: id, Text: text, CreatedAt: day(d)}, Section: SectionAdHoc}
	}
	task := func(id, text string, d int) Item {
		return Item{Record: rec(id, mem.KindTask, text, d), Section: SectionTasks}
	}
	items := []Item{given("01OLD", "Older text.", 1), given("01NEW", "Newer text.", 5), task("01T1", "Older task.", 1), task("01T2", "Newer task.", 5)}
	p := build(t, items, Options{Mode: ModeHeavy})
	if got, want := strings.Join(includedIDs(p), " "), "01T1 01T2 01NEW 01OLD"; got != want {
		t.Errorf("included %s, want %s", got, want)
	}
	if i, j := strings.Index(p.Prompt(), "Newer text."), strings.Index(p.Prompt(), "Older text."); i < 0 || j < 0 || i > j {
		t.Errorf("given text out of rank order:\n%s", p.Prompt())
	}
}

// A pinned atom that does not fit is left out with a warning that gives its
// cost and what was left of the budget once the pins before it were in.
func TestPinnedAtomWarning(t *testing.T) {
	first := pinned("01P", "A short standing rule.", 2)
	long := strings.Repeat("An architecture rule that matters. ", 40)
	items := []Item{first, withAtom(pinned("01C", long, 0), "x"), withAtom(retrieved("01D", long+"!", 0, 1), "x")}
	const budget = 300
	alone := build(t, []Item{first}, Options{Limits: Limits{Budget: budget}})
	p := build(t, items, Options{Limits: Limits{Budget: budget}})
	c, _ := entryByID(p, "01C")
	d, _ := entryByID(p, "01D")
	if c.Reason != ReasonOverBudget || d.Reason != ReasonOverBudget {
		t.Fatalf("atom: %q, %q; want both %q", c.Reason, d.Reason, ReasonOverBudget)
	}
	want := fmt.Sprintf("pin 01C left out: %s tokens do not fit in the %s left of the budget of %s",
		thousands(c.Tokens+d.Tokens), thousands(budget-alone.Used), thousands(budget))
	if len(p.Warnings) != 1 || p.Warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", p.Warnings, want)
	}
}

// An empty plan counts nothing, so it does not pay for loading the
// encoding's ranks. No other test uses p50k_edit.
func TestEmptyPlanLoadsNoEncoding(t *testing.T) {
	e := mustTokenizer(t, "p50k_edit")
	p := build(t, nil, Options{Encoding: "p50k_edit"})
	if p.Used != 0 || p.Prompt() != "" {
		t.Errorf("empty plan: used %d, prompt %q", p.Used, p.Prompt())
	}
	if e.tk != nil {
		t.Error("an empty plan loaded the encoding")
	}
}
