package index

import (
	"regexp"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"

	"github.com/miramem/mira/mem"
)

// intent is what a query asks for, read from its words: what was chosen
// or decided, or what someone prefers. A memory of the kind that records
// it answers such a question better than another that shares more of
// its words ("the staging database runs on…" for "which database did we
// pick"), so it gets a bounded bonus (Ranking.DecisionBonus). The reading
// is a handful of rules, not a model: a question it misreads only gives
// the bonus to memories of a kind that were not asked for, and a store
// without such memories (a transcript of turns) ranks as before.
type intent uint8

const (
	intentDecision   intent = 1 << iota // what was picked, chosen, decided
	intentPreference                    // what someone prefers, likes, favours
)

// readIntent returns what text asks for (0: neither). The text is
// analysed once, in the pooled room analyse uses.
func readIntent(text string) intent {
	if text == "" {
		return 0
	}
	a := textAnalysis()
	familyTable(a)
	prefer := preferenceTerms()
	var in intent
	sc := tokScratchPool.Get().(*tokScratch)
	defer tokScratchPool.Put(sc)
	var toks analysis.TokenStream
	if fa, ok := a.(fastAnalyzer); ok {
		sc.text = append(sc.text[:0], text...)
		toks = fa.analyzeIn(sc.text, sc)
	} else {
		toks = a.Analyze([]byte(text))
	}
	for _, tok := range toks {
		for _, t := range choiceFamily.terms {
			if string(tok.Term) == t {
				in |= intentDecision
			}
		}
		for _, t := range prefer {
			if string(tok.Term) == t {
				in |= intentPreference
			}
		}
	}
	if in&intentDecision == 0 && (choicePhrase.MatchString(text) || decisionPhrase.MatchString(text)) {
		in |= intentDecision
	}
	if in&intentPreference == 0 && preferencePhrase.MatchString(text) {
		in |= intentPreference
	}
	return in
}

// favours reports whether a memory of kind answers what the query asks.
func (in intent) favours(kind string) bool {
	switch kind {
	case mem.KindDecision:
		return in&intentDecision != 0
	case mem.KindPreference:
		return in&intentPreference != 0
	}
	return false
}

var (
	// decisionPhrase is what asks for a decision beside the words of
	// choosing (asksForDecision): "what did we agree on", "which
	// framework do we use for the UI", "what did we land on".
	decisionPhrase = regexp.MustCompile(`(?i)\b(agreed?|agreeing)\s+(on|upon)\b|\bland(ed)?\s+on\b|\b(what|which)\s+(\w+\s+){0,3}(do|did|are|were|should|will)\s+(we|i|you)\s+(use|using)\b|\bthe\s+call\s+on\b|\bwhat\s+was\s+decided\b`)
	// preferencePhrase is what asks what someone likes without a word of
	// preferring: "which editor do I like best", "how does she like her
	// coffee", "would I rather", "what do I want in a review".
	preferencePhrase = regexp.MustCompile(`(?i)\b(do|does|did|would)\s+(\w+\s+){1,4}(like|love|enjoy|hate|dislike|want)\b|\b(like|love|enjoy)s?\s+(\w+\s+)?(best|most|better|more)\b|\bwould\s+(\w+\s+)?rather\b|\bcan'?t\s+stand\b|\bfan\s+of\b`)
)

// preferenceTerms are the analysed words of preferring (prefer, preferred,
// preference, favourite, favorite).
var preferenceTerms = sync.OnceValue(func() []string {
	var out []string
	for _, w := range []string{"prefer", "prefers", "preferred", "preference", "preferences", "favorite", "favourite", "favorites", "favor", "favour"} {
		for _, tok := range textAnalysis().Analyze([]byte(w)) {
			if t := string(tok.Term); !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
})
