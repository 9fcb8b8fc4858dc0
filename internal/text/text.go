// Package text cuts strings to a size in bytes without splitting a
// character, for every layer that bounds what it stores, indexes or
// prints, and reduces English words to their stems for every layer that
// searches. It imports nothing of Mira's, so any package may use it.
package text

import "unicode/utf8"

// Cut returns the longest prefix of s that is at most n bytes long and
// does not end inside a UTF-8 sequence: s itself when it fits, "" when n
// is not positive.
func Cut(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Shorten is Cut followed by "…" when it cut something, for messages
// that quote text of any size.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Cut(s, n) + "…"
}
