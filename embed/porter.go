package embed

import "github.com/blevesearch/go-porterstemmer"

// stem reduces an ASCII lower-case English word to its Porter stem (M. F.
// Porter, "An algorithm for suffix stripping", 1980). Words that are not
// plain a–z, that have at most two letters or more than 64 are returned
// unchanged.
//
// The stemmer is the one the lexical index's English analyzer (bleve)
// uses, so that both halves of hybrid retrieval reduce a word alike.
// Character n-grams cover what stemming misses (misspellings, compounds).
func stem(w string) string {
	if len(w) <= 2 || len(w) > 64 {
		return w
	}
	var buf [64]rune
	r := buf[:len(w)]
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
		r[i] = rune(w[i])
	}
	return string(porterstemmer.StemWithoutLowerCasing(r))
}
