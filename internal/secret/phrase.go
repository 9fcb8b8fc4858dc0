package secret

import (
	"strings"

	"github.com/miramem/mira/internal/secret/bip39"
)

// seedPhraseRule finds BIP 39 recovery phrases: 12, 15, 18, 21 or 24
// words of the BIP 39 English list in a row, with nothing but blanks,
// commas, line breaks (also written \n, as in JSON) and list numbers
// ("1." "2)") between them, whose checksum holds. The run of list words
// must be exactly that long: prose that happens to use many list words in
// a row is not searched for a phrase inside it, so one such run in 16 (of
// 12 words) or in 256 (of 24) is taken for a phrase, and such runs are
// rare.
func seedPhraseRule(text string, _ int, add func(hit)) {
	// n list words in a row so far, from lo to hi.
	n, lo, hi := 0, 0, 0
	end := func() {
		if n >= 12 && n <= 24 && n%3 == 0 {
			words := strings.FieldsFunc(text[lo:hi], func(r rune) bool { return r < 'a' || r > 'z' })
			if len(words) == n && bip39.Valid(words) {
				add(hit{rule: ruleIndex["seed-phrase"], lo: lo, hi: hi, redacted: mask(text[lo:hi])})
			}
		}
		n = 0
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case 'a' <= c && c <= 'z':
			j := i + 1
			for j < len(text) && 'a' <= text[j] && text[j] <= 'z' {
				j++
			}
			switch {
			case j < len(text) && wordByte(text[j]):
				// Part of a longer name: db_seed, word2.
				if n > 0 {
					end()
				}
				for j < len(text) && wordByte(text[j]) {
					j++
				}
			case j-i >= 3 && j-i <= 8 && bip39.Contains(text[i:j]):
				if n == 0 {
					lo = i
				}
				n++
				hi = j
			case n > 0:
				end()
			}
			i = j
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			i++
		case c == '\\' && i+1 < len(text) && text[i+1] == 'n':
			i += 2
		case isDigit(c) && n > 0:
			// A list number: one or two digits and one of . ) : before a
			// blank.
			j := i
			for j < len(text) && isDigit(text[j]) {
				j++
			}
			if j-i <= 2 && j+1 < len(text) && strings.IndexByte(".):", text[j]) >= 0 && text[j+1] == ' ' {
				i = j + 1
				continue
			}
			end()
			i = j
		default:
			if n > 0 {
				end()
			}
			if wordByte(c) && !isDigit(c) {
				for i < len(text) && wordByte(text[i]) {
					i++
				}
				continue
			}
			if isDigit(c) {
				// A list number before the first word: "1. word".
				j := i
				for j < len(text) && isDigit(text[j]) {
					j++
				}
				if j-i <= 2 && j+1 < len(text) && strings.IndexByte(".):", text[j]) >= 0 && text[j+1] == ' ' {
					i = j + 1
					continue
				}
				for j < len(text) && wordByte(text[j]) {
					j++
				}
				i = j
				continue
			}
			i++
		}
	}
	if n > 0 {
		end()
	}
}
