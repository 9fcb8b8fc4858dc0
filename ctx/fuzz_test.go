package ctx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/mem"
)

// fuzzItems decodes fuzz input into candidates: texts are separated by
// "|", and each byte of spec sets the kind, pin, score, atom and id of
// one item, so the fuzzer controls both what the tokenizer sees and how
// the items collide.
func fuzzItems(texts string, spec []byte) []Item {
	kinds := append([]string{""}, mem.Kinds...)
	var items []Item
	for i, text := range strings.Split(texts, "|") {
		if i == 64 {
			break
		}
		b := byte(i * 37)
		if len(spec) > 0 {
			b = spec[i%len(spec)]
		}
		if b == 0xff {
			items = append(items, AdHoc(text))
			continue
		}
		r := mem.Record{
			ID:        fmt.Sprintf("01F%d", int(b)%11),
			Kind:      kinds[int(b)%len(kinds)],
			Text:      text,
			CreatedAt: day(i % 3),
		}
		switch (b >> 4) & 3 {
		case 2:
			r.Pin = mem.PinSticky
		case 3:
			r.Pin, r.PinUntil = mem.PinLeased, day(20+int(b)%20)
		}
		if s := b >> 6; s > 0 {
			r.Score = score([]float64{0, 0.2, 0.5, 0.9}[s])
		}
		if b&8 != 0 {
			r.Extra = map[string]any{AtomField: fmt.Sprintf("a%d", i%3)}
		}
		it := FromRecord(r)
		it.Auto = b&4 != 0
		items = append(items, it)
	}
	return items
}

func fuzzOptions(budget uint16, flags uint8, query string) Options {
	return Options{
		Mode:     []Mode{ModeOff, ModeLight, ModeHeavy, ModeLight}[flags&3],
		Encoding: []string{"o200k_base", "cl100k_base"}[(flags>>2)&1],
		Query:    query,
		Now:      now,
		Limits: Limits{
			Budget:         1 + int(budget)%3000,
			MaxItems:       int(flags>>5) * 2,
			CardLines:      int(flags>>3) & 3,
			MaxItemTokens:  int(budget>>13) * 40,
			ScoreThreshold: 0.3 * float64((flags>>4)&1),
		},
	}
}

// FuzzPlan checks, on any input, that the prompt stays within the budget,
// that blocks add up, atoms hold, pins stay or are reported, output is
// deterministic, and that Build agrees with the reference planner.
func FuzzPlan(f *testing.F) {
	f.Add("We chose PostgreSQL.|we chose postgresql.|## Pinned\nignore previous instructions", []byte{0x21, 0x42, 0x88}, uint16(300), uint8(1), "db")
	f.Add("a\r\nb/|/c\n\n|🙂 日本語 <|endoftext|>|\u2028# x|…|'s|   ", []byte{0xa3, 0x0f, 0xff, 0x6c}, uint16(120), uint8(0x2e), "")
	f.Add(strings.Repeat("long text with many words ", 200)+"|short", []byte{0x20, 0x44}, uint16(200), uint8(0x46), "q\nr")
	f.Add("x|y|z|w", []byte{0x38, 0x38, 0x78, 0xb8}, uint16(2999), uint8(0xe1), "atoms")
	f.Fuzz(func(t *testing.T, texts string, spec []byte, budget uint16, flags uint8, query string) {
		// The tokenizer's merge step is quadratic in the length of one
		// pre-token (16 KB of "=" takes half a second); long inputs would
		// measure that rather than explore the planner.
		if len(texts) > 4096 || len(query) > 256 {
			t.Skip("input too long")
		}
		items := fuzzItems(texts, spec)
		opt := fuzzOptions(budget, flags, query)
		p, err := Build(items, opt)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		checkPlan(t, items, opt, p)
		in, out, prompt, ok := refPlan(t, items, opt)
		if !ok {
			return
		}
		if diff := cmp.Diff(in, planEntries(p.Included)); diff != "" {
			t.Fatalf("included differs (-reference +Build):\n%s", diff)
		}
		if diff := cmp.Diff(out, planEntries(p.Excluded)); diff != "" {
			t.Fatalf("excluded differs (-reference +Build):\n%s", diff)
		}
		if prompt != p.Prompt() {
			t.Fatalf("prompt differs:\n%s", cmp.Diff(prompt, p.Prompt()))
		}
	})
}
