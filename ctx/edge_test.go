package ctx

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
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
