package agentloop

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Activation is how much an item of the context has been in use lately.
// Each turn it decays by half every ActivationHalfLife turns, then gains
// GainIncluded when the item was in the turn's plans, GainUser when the
// user's message references it and GainReply when the model's reply does
// (quotes its id, its path or symbol, or a run of SpanWords words of its
// text).
//
// The rules that follow from it, at the end of each turn:
//   - an ephemeral pin is kept for the next turn when its activation is
//     at least KeepAt, and promoted to a lease when it is at least
//     PromoteAt; otherwise it ends;
//   - a recalled memory (no pin) that reached KeepAt becomes an
//     ephemeral pin, so that what the conversation uses stays at hand;
//   - a lease the session promoted ends once its activation falls below
//     EndBelow; a lease the user gave for some turns ends after them;
//   - nothing becomes sticky but by the user's /pin.
//
// Being shown alone cannot keep an item: GainIncluded/(1-decay), the
// activation of an item shown every turn and never referenced, is below
// EndBelow and KeepAt.
const (
	ActivationHalfLife = 2.0 // turns
	GainIncluded       = 0.25
	GainUser           = 2.0
	GainReply          = 2.0
	KeepAt             = 1.0
	PromoteAt          = 4.0
	EndBelow           = 1.5
	// SpanWords is the length of a run of words of a memory that counts
	// as quoting it; only runs of at least SpanLetters letters count, so
	// that a run of short common words does not.
	SpanWords   = 6
	SpanLetters = 24
	// spanMaxWords bounds the words of a memory searched for spans.
	spanMaxWords = 400
)

// decayPerTurn is what activation keeps of itself from one turn to the
// next.
var decayPerTurn = math.Pow(0.5, 1/ActivationHalfLife)

// decay is activation a one turn later, before the turn's gains; tiny
// values become zero.
func decay(a float64) float64 {
	a *= decayPerTurn
	if a < 0.01 {
		return 0
	}
	return a
}

// Fates of an item at the end of a turn (settle).
const (
	fateNone    = ""
	fateKeep    = "keep"    // an ephemeral pin stays for the next turn
	fatePromote = "promote" // an ephemeral pin becomes a lease
	fateEnd     = "end"     // a pin ends
	fateHint    = "hint"    // a recalled memory becomes an ephemeral pin
)

// settle applies the rules to an item with activation a: kind is its pin
// in the session ("ephemeral", "leased", or "" for none), promoted says a
// lease came from promotion, stored that the store pins it already.
func settle(a float64, kind string, promoted, stored bool) string {
	switch {
	case kind == "ephemeral" && a >= PromoteAt:
		return fatePromote
	case kind == "ephemeral" && a >= KeepAt:
		return fateKeep
	case kind == "ephemeral":
		return fateEnd
	case kind == "leased" && promoted && a < EndBelow:
		return fateEnd
	case kind == "" && !stored && a >= KeepAt:
		return fateHint
	}
	return fateNone
}

// refs is what identifies an item when quoted: its id, path or symbol,
// and the runs of words of its text.
type refs struct {
	id, path, symbol string
	spans            []string // " w1 w2 … wn ", in normalised form
}

// newRefs prepares the references of an item.
func newRefs(id, path, symbol, text string) refs {
	r := refs{id: id, path: path}
	if len(symbol) >= 3 {
		r.symbol = symbol
	}
	words := strings.FieldsFunc(strings.ToLower(text), notWord)
	if len(words) > spanMaxWords {
		words = words[:spanMaxWords]
	}
	for i := 0; i+SpanWords <= len(words); i++ {
		run := words[i : i+SpanWords]
		letters := 0
		for _, w := range run {
			letters += len(w)
		}
		if letters >= SpanLetters {
			r.spans = append(r.spans, " "+strings.Join(run, " ")+" ")
		}
	}
	return r
}

// notWord splits text into words: letters and digits, and the _ of
// identifiers.
func notWord(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }

// said is a message as references are looked for in it: the raw text,
// and the set of its runs of SpanWords words, so that looking for every
// span of every item costs a map lookup each, not a scan of the text.
type said struct {
	raw  string
	runs map[string]bool
}

// newText indexes a message.
func newText(raw string) said {
	words := strings.FieldsFunc(strings.ToLower(raw), notWord)
	t := said{raw: raw, runs: make(map[string]bool, max(len(words)-SpanWords+1, 0))}
	for i := 0; i+SpanWords <= len(words); i++ {
		t.runs[" "+strings.Join(words[i:i+SpanWords], " ")+" "] = true
	}
	return t
}

// in reports whether t references the item.
func (r refs) in(t said) bool {
	if t.raw == "" {
		return false
	}
	if r.id != "" && strings.Contains(t.raw, r.id) {
		return true
	}
	if r.path != "" && strings.Contains(t.raw, r.path) {
		return true
	}
	if r.symbol != "" && hasIdent(t.raw, r.symbol) {
		return true
	}
	for _, s := range r.spans {
		if t.runs[s] {
			return true
		}
	}
	return false
}

// hasIdent reports whether text has name as a whole identifier, case and
// all.
func hasIdent(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(name)
		before, after := ' ', ' '
		if j > 0 {
			before, _ = utf8.DecodeLastRuneInString(text[:j])
		}
		if end < len(text) {
			after, _ = utf8.DecodeRuneInString(text[end:])
		}
		if notWord(before) && notWord(after) {
			return true
		}
		i = j + 1
	}
}
