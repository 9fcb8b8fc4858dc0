package secret

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Finding is one suspected secret. Line and Column locate the first byte of
// the secret itself (the value, not the name it is assigned to).
type Finding struct {
	// Rule is the stable rule id, such as "aws-access-key-id" or
	// "generic-assignment"; scripts may match on it.
	Rule string
	// Desc is a short human description of what was found.
	Desc string
	// Line is the 1-based line number in the scanned text.
	Line int
	// Column is the 1-based byte column within that line.
	Column int
	// Redacted is the secret with most of it masked; it never holds the
	// whole secret, so it is safe to print in an error message.
	Redacted string
	// Field names the text the finding is in when a caller scans several
	// texts of one record, such as "tags[0]" or "project"; Line and Column
	// are within that text. Scan leaves it empty.
	Field string
}

// String formats f for an error message, for example
// `line 3, column 9: AWS access key ID (aws-access-key-id): AKIA************MPLE`,
// with the field first when there is one: `tags[0]: line 1, column 1: …`.
func (f Finding) String() string {
	s := fmt.Sprintf("line %d, column %d: %s (%s): %s", f.Line, f.Column, f.Desc, f.Rule, f.Redacted)
	if f.Field != "" {
		s = f.Field + ": " + s
	}
	return s
}

// Scan returns every finding in text, in order of position. It returns nil
// when nothing looks like a secret.
func Scan(text string) []Finding {
	hits := scan(text)
	if len(hits) == 0 {
		return nil
	}
	rules, _ := compiled()
	out := make([]Finding, len(hits))
	line, lineStart, pos := 1, 0, 0
	for i, h := range hits {
		// Hits are sorted, so lines are counted in one pass over the text.
		for ; pos < h.lo; pos++ {
			if text[pos] == '\n' {
				line++
				lineStart = pos + 1
			}
		}
		out[i] = Finding{
			Rule:     rules[h.rule].id,
			Desc:     rules[h.rule].desc,
			Line:     line,
			Column:   h.lo - lineStart + 1,
			Redacted: h.redacted,
		}
	}
	return out
}

// Redact returns text with every secret Scan finds replaced by its
// redacted form, for messages that quote what a user gave (an error naming
// a bad value must not print a credential on a terminal or into a log).
func Redact(text string) string {
	hits := scan(text)
	if len(hits) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for _, h := range hits {
		if h.lo < last {
			continue
		}
		b.WriteString(text[last:h.lo])
		b.WriteString(h.redacted)
		last = h.hi
	}
	b.WriteString(text[last:])
	return b.String()
}

// A rule finds one kind of secret. Running a regular expression over a whole
// document is slow in Go (there is no lazy DFA), so each rule names literal
// keywords that every match contains at a known place; the text is searched
// for all keywords at once, and the rule's expression runs anchored at each
// occurrence.
type rule struct {
	id, desc string
	// keywords are literals at least one of which occurs in every match.
	keywords []string
	// fold marks keywords that match regardless of ASCII case.
	fold bool
	// back is how many bytes before its keyword a match starts.
	back int
	// span is how far past its start a match may reach (default
	// maxSpan); only multiline rules may cross a newline within it.
	span      int
	multiline bool
	// bounded rules match whole words only: a start in the middle of a word
	// is skipped without running the expression.
	bounded bool
	// pre, if set, is a cheap test of the text after the keyword that
	// must pass before the expression is run.
	pre func(text string, i int) bool
	// re is anchored (^) at the start of the match.
	re *regexp.Regexp
	// check validates a match (m holds submatch indexes into text) and
	// returns the secret's span and its redacted form.
	check func(text string, m []int) (hit, bool)
	// match replaces re and check for rules parsed by hand: it is given the
	// keyword's position and length.
	match func(text string, p, k int) (hit, bool)
	// whole, for rules that have no keyword, runs once over the whole text
	// and reports each hit by calling add; a hit names its rule (see
	// ruleIndex), as one pass may find secrets of several rules.
	whole func(text string, depth int, add func(hit))
}

// hit is a validated match: the byte span [lo, hi) of the secret in the text.
type hit struct {
	rule     int // index in rules, which is also its priority
	lo, hi   int
	redacted string
}

// maxSpan bounds how far past its start a match is looked for, so that a
// huge single-line text costs linear time.
const maxSpan = 4096

// compiled holds the rules and their keyword automaton, built on first use
// so that programs linking the package but not scanning pay nothing at
// start-up.
var compiled = sync.OnceValues(func() ([]*rule, *keywordSet) {
	rs := buildRules()
	for i, r := range rs {
		ruleIndex[r.id] = i
	}
	var kws []keyword
	for i, r := range rs {
		for _, k := range r.keywords {
			if strings.IndexFunc(k, func(c rune) bool { return c >= utf8.RuneSelf }) >= 0 {
				// Bytes of other scripts would each take a column of the
				// automaton's table and push it out of the cache, for
				// keywords that English text never holds: they are looked
				// for one by one, and only in text that is not ASCII.
				nonASCII = append(nonASCII, keyword{text: k, rule: i})
				if r.fold && 'a' <= k[0] && k[0] <= 'z' {
					// Only ASCII letters fold: "Contraseña" starts a sentence.
					nonASCII = append(nonASCII, keyword{text: string(k[0]-'a'+'A') + k[1:], rule: i})
				}
				continue
			}
			kws = append(kws, keyword{text: k, rule: i, fold: r.fold})
		}
	}
	for _, kw := range nonASCII {
		nonASCIIAt = append(nonASCIIAt, strings.IndexFunc(kw.text, func(c rune) bool { return c >= utf8.RuneSelf }))
	}
	return rs, newKeywordSet(kws)
})

// nonASCII are the keywords with bytes outside ASCII.
var nonASCII []keyword

// findNonASCII calls fn for every occurrence of the keywords in nonASCII
// in text. It looks only where text has a character outside ASCII, which
// English text seldom has: an occurrence is found at its first such
// character.
func findNonASCII(text string, fn func(kw *keyword, pos int)) {
	for q := 0; q < len(text); q++ {
		if text[q] < 0xc0 {
			continue // ASCII, or not the first byte of a character
		}
		for k := range nonASCII {
			kw := &nonASCII[k]
			lo := q - nonASCIIAt[k]
			if lo >= 0 && strings.HasPrefix(text[lo:], kw.text) {
				fn(kw, lo)
			}
		}
	}
}

// nonASCIIAt holds the offset of each keyword's first byte outside ASCII.
var nonASCIIAt []int

// scan runs every rule and resolves overlaps: rules are ordered from the
// most specific to the most generic, and a hit that overlaps a hit of an
// earlier rule is dropped, so `GITHUB_TOKEN=ghp_…` is one github-token
// finding rather than also a generic assignment.
func scan(text string) []hit {
	return scanAt(text, 0)
}

// ruleIndex maps a rule id to its index in the compiled rules, for the
// passes that report hits of several rules.
var ruleIndex = map[string]int{}

// maxDepth bounds the rescans of text decoded or joined from the text
// (see encodedRule and joinedRule): what they produce is not rescanned
// again.
const maxDepth = 1

// rescan is scanAt, for the rules that scan what they decode or join: a
// variable set at start-up, since the rules are part of what scanAt uses.
var rescan func(text string, depth int) []hit

func init() { rescan = scanAt }

// scanAt is scan of a text found at the given depth of decoding.
func scanAt(text string, depth int) []hit {
	rs, ks := compiled()
	var cands []hit
	found := func(kw *keyword, p int) {
		if h, ok := rs[kw.rule].find(text, p, len(kw.text)); ok {
			h.rule = kw.rule
			cands = append(cands, h)
		}
	}
	ks.find(text, found)
	findNonASCII(text, found)
	for _, r := range rs {
		if r.whole != nil {
			r.whole(text, depth, func(h hit) { cands = append(cands, h) })
		}
	}
	if len(cands) == 0 {
		return nil
	}
	slices.SortStableFunc(cands, func(a, b hit) int {
		return cmp.Or(cmp.Compare(a.rule, b.rule), cmp.Compare(a.lo, b.lo))
	})
	// accepted is sorted by position and free of overlaps, so only the
	// neighbours of a candidate's place in it can overlap the candidate.
	var accepted []hit
	for _, h := range cands {
		i, _ := slices.BinarySearchFunc(accepted, h.lo, func(a hit, lo int) int { return cmp.Compare(a.lo, lo) })
		if i > 0 && accepted[i-1].hi > h.lo || i < len(accepted) && accepted[i].lo < h.hi {
			continue
		}
		accepted = slices.Insert(accepted, i, h)
	}
	return accepted
}

// find tries the rule at a keyword occurrence at p of length k.
func (r *rule) find(text string, p, k int) (hit, bool) {
	if r.match != nil {
		return r.match(text, p, k)
	}
	lo := p - r.back
	if lo < 0 {
		return hit{}, false
	}
	if r.bounded && lo > 0 && wordByte(text[lo-1]) && wordByte(text[lo]) {
		return hit{}, false
	}
	if r.pre != nil && !r.pre(text, p+k) {
		return hit{}, false
	}
	span := r.span
	if span == 0 {
		span = maxSpan
	}
	hi := min(len(text), lo+span)
	if !r.multiline {
		if i := strings.IndexByte(text[p:hi], '\n'); i >= 0 {
			hi = p + i
		}
	}
	m := r.re.FindStringSubmatchIndex(text[lo:hi])
	if m == nil {
		return hit{}, false
	}
	for i := range m {
		if m[i] >= 0 {
			m[i] += lo
		}
	}
	return r.check(text, m)
}
