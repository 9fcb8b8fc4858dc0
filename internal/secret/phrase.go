package secret

import (
	"strings"

	"github.com/miramem/mira/internal/secret/bip39"
)

// phraseScan finds BIP 39 recovery phrases: 12, 15, 18, 21 or 24 words
// of the BIP 39 English list in a row, with nothing but blanks, commas,
// line breaks (also written \n, as in JSON) and list numbers ("1." "2)")
// between them, whose checksum holds. The run of list words must be
// exactly that long: prose that happens to use many list words in a row
// is not searched for a phrase inside it, so one such run in 16 (of 12
// words) or in 256 (of 24) is taken for a phrase, and such runs are rare.
//
// It is fed by blobRule's pass over the text, which cuts it into runs of
// base64 characters (words among them) and the bytes between them.
type phraseScan struct {
	text string
	add  func(hit)
	list bip39.Set
	// n list words in a row so far, from lo to hi.
	n, lo, hi int
	// num is set after a list number, whose punctuation may follow.
	num bool
}

// run takes the run of base64 characters text[lo:hi].
func (s *phraseScan) run(lo, hi int) {
	w := s.text[lo:hi]
	s.num = false
	if len(w) <= 2 && isDigit(w[0]) && (len(w) == 1 || isDigit(w[1])) &&
		hi+1 < len(s.text) && strings.IndexByte(".):", s.text[hi]) >= 0 && s.text[hi+1] == ' ' {
		s.num = true
		return
	}
	if len(w) < 3 || len(w) > 8 || !s.list.Contains(w) {
		s.end()
		return
	}
	if s.n == 0 {
		s.lo = lo
	}
	s.n++
	s.hi = hi
}

// gap takes the byte c at i, between runs.
func (s *phraseScan) gap(c byte, i int) {
	switch {
	case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
	case c == '\\' && i+1 < len(s.text) && s.text[i+1] == 'n':
	case s.num && (c == '.' || c == ')' || c == ':'):
	default:
		s.end()
	}
}

// end ends a run of list words, reporting it if it is a phrase.
func (s *phraseScan) end() {
	if n := s.n; n >= 12 && n <= 24 && n%3 == 0 {
		run := strings.ReplaceAll(s.text[s.lo:s.hi], `\n`, " ")
		words := strings.FieldsFunc(run, func(r rune) bool { return r < 'a' || r > 'z' })
		if len(words) == n && bip39.Valid(words) {
			s.add(hit{rule: ruleIndex["seed-phrase"], lo: s.lo, hi: s.hi, redacted: mask(s.text[s.lo:s.hi])})
		}
	}
	s.n = 0
}
