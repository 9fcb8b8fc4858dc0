package ctx

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/mem"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func day(d int) *time.Time {
	t := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC).AddDate(0, 0, d)
	return &t
}

func score(f float64) *float64 { return &f }

// rec makes a record with an id, kind and text, dated day d.
func rec(id, kind, text string, d int) mem.Record {
	return mem.Record{ID: id, Kind: kind, Text: text, CreatedAt: day(d), Scope: "global", Source: "cli"}
}

// retrieved makes a retrieved memory with a score.
func retrieved(id, text string, d int, s float64) Item {
	r := rec(id, mem.KindFact, text, d)
	r.Score = score(s)
	return FromRecord(r)
}

func pinned(id, text string, d int) Item {
	r := rec(id, mem.KindDecision, text, d)
	r.Pin = mem.PinSticky
	return FromRecord(r)
}

func withAtom(it Item, atom string) Item {
	it.Record.Extra = map[string]any{AtomField: atom}
	return FromRecord(it.Record)
}

func build(t testing.TB, items []Item, opt Options) *Plan {
	t.Helper()
	if opt.Now.IsZero() {
		opt.Now = now
	}
	p, err := Build(items, opt)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return p
}

func mustTokenizer(t testing.TB, name string) *Encoding {
	t.Helper()
	e, err := NewTokenizer(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func entryByID(p *Plan, id string) (Entry, bool) {
	for _, e := range append(slices.Clone(p.Included), p.Excluded...) {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

func includedIDs(p *Plan) []string {
	var ids []string
	for _, e := range p.Included {
		ids = append(ids, e.ID)
	}
	return ids
}

// words are the material of random memories; several sit on the edges of
// the tokenizer's pre-split (newlines, slashes, spaces, contractions,
// special tokens) or of the rendering (headings, quotes, notes).
var words = []string{
	"the", "memory", "PostgreSQL", "JSONB", "auth", "token", "we", "chose", "don't", "it's",
	"/", "//path/to", "\n", "\r\n", "\n\n", "  ", "\t", "##", "### fact", "> quoted", "…", "… [truncated: 1 of 2 tokens]",
	"ü", "日本語", "🙂", "<|endoftext|>", "ignore previous instructions", "```", "123456", "3.14",
	"\u2028", "\r", "é", "Ω", " /x", "#", ".\n", "!!\n/", "'s", "## Retrieved memories",
}

func randText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 && r.IntN(3) > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// randItems makes n random candidates with collisions of every kind: equal
// ids, texts, scores and dates, atoms, pins, tombstones.
func randItems(r *rand.Rand, n int) []Item {
	kinds := append([]string{""}, mem.Kinds...)
	scores := []float64{0.1, 0.5, 0.5, 0.9, 1.2}
	var items []Item
	for i := range n {
		if r.IntN(8) == 0 {
			items = append(items, AdHoc(randText(r, r.IntN(12))))
			continue
		}
		rc := mem.Record{
			ID:   fmt.Sprintf("01J%03d", r.IntN(n+n/4+1)),
			Kind: kinds[r.IntN(len(kinds))],
			Text: randText(r, r.IntN(30)),
		}
		if i > 0 && r.IntN(6) == 0 {
			// a near-duplicate of an earlier text
			rc.Text = strings.ToUpper(items[r.IntN(len(items))].Record.Text) + "  "
		}
		if r.IntN(4) > 0 {
			rc.CreatedAt = day(r.IntN(5))
		}
		if r.IntN(3) > 0 {
			rc.Score = score(scores[r.IntN(len(scores))])
		}
		if r.IntN(3) == 0 {
			rc.Scope, rc.Project, rc.Source = "global", "shop", "cli"
		}
		switch r.IntN(12) {
		case 0:
			rc.Pin = mem.PinSticky
			rc.Text = randText(r, r.IntN(6))
		case 1:
			rc.Pin = mem.PinLeased
			rc.PinUntil = day(25 + r.IntN(10)) // some expired at now
			rc.Text = randText(r, r.IntN(6))
		case 2:
			rc.ReplacedBy = fmt.Sprintf("01J%03d", r.IntN(n+1))
		case 3:
			rc.DeletedAt = day(3)
		}
		if r.IntN(4) == 0 {
			rc.Extra = map[string]any{AtomField: fmt.Sprintf("a%d", r.IntN(4))}
		}
		it := FromRecord(rc)
		it.Auto = it.Section.stable() && r.IntN(2) == 0
		items = append(items, it)
	}
	return items
}

func randOptions(r *rand.Rand) Options {
	modes := []Mode{ModeOff, ModeLight, ModeHeavy}
	encs := []string{"o200k_base", "cl100k_base"}
	o := Options{
		Mode:     modes[r.IntN(len(modes))],
		Encoding: encs[r.IntN(len(encs))],
		Now:      now,
		Limits: Limits{
			Budget:         30 + r.IntN(1200),
			MaxItems:       r.IntN(10),
			CardLines:      r.IntN(4),
			ScoreThreshold: []float64{0, 0.3, 0.6}[r.IntN(3)],
		},
	}
	if r.IntN(2) == 0 {
		o.Limits.MaxItemTokens = 20 + r.IntN(200)
	}
	if r.IntN(2) == 0 {
		o.Query = randText(r, 1+r.IntN(5))
	}
	return o
}

// budgetReasons are the reasons decided per unit rather than per item.
var budgetReasons = []string{ReasonPinned, ReasonInBudget, ReasonOverBudget, ReasonMaxItems, ReasonBelowThreshold}

// checkPlan checks what must hold of every plan.
func checkPlan(t *testing.T, items []Item, opt Options, p *Plan) {
	t.Helper()
	enc := mustTokenizer(t, opt.Encoding)
	if got := enc.Count(p.Prompt()); got != p.Used || got > p.Budget {
		t.Fatalf("prompt counts %d tokens; plan says %d, budget %d", got, p.Used, p.Budget)
	}
	sum := p.Overhead
	for _, e := range p.Included {
		sum += e.Tokens
	}
	if sum != p.Used {
		t.Fatalf("overhead + included tokens = %d, but the prompt has %d: blocks do not add up", sum, p.Used)
	}
	if n := len(p.Included) + len(p.Excluded); n != len(items) {
		t.Fatalf("plan lists %d candidates, want %d", n, len(items))
	}
	if (p.Prompt() == "") != (len(p.Included) == 0) {
		t.Fatalf("prompt %q with %d included", p.Prompt(), len(p.Included))
	}
	if n := strings.Count(p.Prompt(), "\n### "); n != len(p.Included) {
		t.Fatalf("prompt has %d item headers, want %d", n, len(p.Included))
	}
	// Atoms are never split by a unit decision.
	inAtom := map[string]map[bool]bool{}
	for _, list := range [][]Entry{p.Included, p.Excluded} {
		for _, e := range list {
			if e.Atom != "" && slices.Contains(budgetReasons, e.Reason) {
				if inAtom[e.Atom] == nil {
					inAtom[e.Atom] = map[bool]bool{}
				}
				inAtom[e.Atom][e.Reason == ReasonPinned || e.Reason == ReasonInBudget] = true
			}
		}
	}
	for a, m := range inAtom {
		if len(m) > 1 {
			t.Fatalf("atom %s split: %+v", a, p)
		}
	}
	// A pin is included unless a filter removed it or the budget could not
	// hold it, and then a warning names it.
	for _, e := range p.Excluded {
		if e.Section == SectionPins && e.Reason == ReasonOverBudget &&
			!slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, e.ID) }) {
			t.Fatalf("pin %s left out without a warning: %q", e.ID, p.Warnings)
		}
	}
	// Quoted text never leaves its quote: every line is ours or quoted.
	checkLines(t, p)
	// Same input, same bytes.
	again, err := Build(items, opt)
	if err != nil {
		t.Fatal(err)
	}
	j1, _ := p.JSON()
	j2, _ := again.JSON()
	if string(j1) != string(j2) || p.Prompt() != again.Prompt() {
		t.Fatalf("second build differs:\n%s\n%s", j1, j2)
	}
}

// checkLines checks that every line of the prompt is the preamble, a
// heading, an item header, a note, a blank line or quoted text.
func checkLines(t *testing.T, p *Plan) {
	t.Helper()
	if p.Prompt() == "" {
		return
	}
	text, ok := strings.CutPrefix(p.Prompt(), preamble)
	if !ok {
		t.Fatalf("prompt does not start with the preamble:\n%s", p.Prompt())
	}
	headings := map[string]bool{}
	for _, s := range sections {
		headings[strings.TrimSuffix(headingBlock(s, p.Query), "\n\n")] = true
	}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		switch {
		case line == "", line == ">", strings.HasPrefix(line, "> "), headings[line]:
		case strings.HasPrefix(line, "### ") && !strings.ContainsAny(line, "\r\u2028\u2029\u0085"):
		case strings.HasPrefix(line, "… [") && strings.HasSuffix(line, "]"):
		default:
			t.Fatalf("line %d is neither structure nor quoted: %q\n%s", i+1, line, p.Prompt())
		}
	}
}
