// Package text cuts strings to a size in bytes without splitting a
// character, for every layer that bounds what it stores, indexes or
// prints, and reduces English words to their stems for every layer that
// searches, and writes sizes for messages. It imports nothing of Mira's, so
// any package may use it.
package text

import (
	"fmt"
	"unicode/utf8"
)

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

// Distance is the Levenshtein distance of a and b, in bytes: how many
// bytes to insert, delete or replace to make one the other. It is meant
// for short words, as in "did you mean" suggestions.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Size formats a number of bytes for a message: 812 B, 7.9 KiB, 1.2 MiB,
// 3.0 GiB.
func Size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
