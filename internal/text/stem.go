package text

import "github.com/blevesearch/go-porterstemmer"

// Stem reduces a lower-case English word to its Porter stem (M. F. Porter,
// "An algorithm for suffix stripping", 1980), with the stemmer the memory
// index's English analyzer (bleve) uses, so that the lexical index, the
// built-in embedder and the code ranking reduce a word alike. Words that
// are not plain a–z, or shorter than 3 or longer than 64 bytes, are
// returned as they are.
func Stem(w string) string {
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
