package rank

import (
	"strings"

	"github.com/miramem/mira/internal/text"
)

// Split breaks an identifier or a phrase into its lower-case word parts:
// on anything that is not a letter or a digit, on snake_case underscores,
// between a lower-case letter and an upper-case one (camelCase), before the
// last capital of an acronym followed by a lower-case letter (HTTPServer:
// http, server), and between letters and digits (utf8: utf, 8).
// Non-ASCII letters stay inside their word.
func Split(s string) []string {
	var out []string
	splitInto(s, func(p string) { out = append(out, p) })
	return out
}

// class of a byte for splitting: 0 separator, 1 lower (and non-ASCII),
// 2 upper, 3 digit.
func class(c byte) uint8 {
	switch {
	case c >= 'a' && c <= 'z', c >= 0x80:
		return 1
	case c >= 'A' && c <= 'Z':
		return 2
	case c >= '0' && c <= '9':
		return 3
	}
	return 0
}

// splitInto calls emit with each lower-cased part of s, in order.
func splitInto(s string, emit func(string)) {
	splitBounds(s, func(a, b int) { emit(lower(s[a:b])) })
}

// splitBounds calls emit with the bounds of each part of s, in order, as
// splitInto splits it.
func splitBounds(s string, emit func(a, b int)) {
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			emit(start, end)
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		c := class(s[i])
		if c == 0 {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := class(s[i-1])
		switch {
		case p == 1 && c == 2, // fooBar
			p == 3 && c != 3, c == 3 && p != 3: // utf8, 8bit
			flush(i)
			start = i
		case p == 2 && c == 1 && i-1 > start: // HTTPServer: cut before S
			flush(i - 1)
			start = i - 1
		}
	}
	flush(len(s))
}

// lower is strings.ToLower without the allocation when s is already
// lower-case ASCII.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return strings.ToLower(s)
		}
	}
	return s
}

// stopWords are dropped from documents and queries: English function words,
// and keywords common to the languages parsed, which say nothing about what
// a file is for.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during
each few for from further had has have having he her here hers herself him
himself his how i if in into is it its itself just me more most my myself no nor
not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where
which while who whom whose why will with would you your yours yourself
yourselves don didn doesn isn wasn weren won also use used using via eg ie etc
func return var const package import def self elif else nil none null true false
let fn pub mut impl struct class interface type function begin end go break
continue switch case default`) {
		m[w] = true
	}
	return m
}()

// identifiers calls emit with each identifier-like run of text (letters,
// digits, underscores; non-ASCII bytes count as letters) that has a letter.
func identifiers(text []byte, emit func([]byte)) {
	start := -1
	letter := false
	for i := 0; i <= len(text); i++ {
		var c byte
		if i < len(text) {
			c = text[i]
		}
		if i < len(text) && (class(c) != 0 || c == '_') {
			if start < 0 {
				start, letter = i, false
			}
			if cl := class(c); cl == 1 || cl == 2 {
				letter = true
			}
			continue
		}
		if start >= 0 {
			if letter && i-start <= maxIdent {
				emit(text[start:i])
			}
			start = -1
		}
	}
}

// maxIdent bounds the identifiers indexed: longer runs are data (hashes,
// base64), not names.
const maxIdent = 64

// terms calls emit with the index terms of one identifier: the Porter stem
// of each part of two or more characters that is not a stop word, and,
// when it has several parts, the whole identifier lower-cased without
// separators (ExecuteC: execut, executec), so that a query naming the
// identifier finds it exactly.
func terms(ident string, stemmer func(string) string, emit func(string)) {
	n := 0
	splitInto(ident, func(p string) {
		n++
		if len(p) < 2 || stopWords[p] {
			return
		}
		emit(stemmer(p))
	})
	if n > 1 {
		var b strings.Builder
		splitInto(ident, func(p string) { b.WriteString(p) })
		if w := b.String(); len(w) >= 3 && !stopWords[w] {
			emit(w)
		}
	}
}

// QueryTerms returns the distinct terms of a query, first occurrence first:
// its identifiers split and stemmed as documents are, plus whole compound
// identifiers.
func QueryTerms(q string) []string {
	var out []string
	seen := map[string]bool{}
	identifiers([]byte(q), func(id []byte) {
		terms(string(id), text.Stem, func(t string) {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		})
	})
	return out
}
