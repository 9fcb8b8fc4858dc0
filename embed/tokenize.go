package embed

import (
	"unicode"
	"unicode/utf8"

	txt "github.com/miramem/mira/internal/text"
)

// token is one word of a text: its lower-cased surface form, its stem (the
// key features are built from) and whether it is a stop word.
type token struct {
	word string
	stem string
	stop bool
}

// tokenize splits text into lower-cased words: runs of letters and digits.
// Apostrophes inside a word end it and the clitic after them ("'s", "'m",
// "n't", "'ll", ...) is dropped, so "Caroline's" and "Caroline" meet; every
// other non-alphanumeric rune separates words. The result is deterministic and
// depends only on the text.
func tokenize(text string) []token {
	return tokenizeInto(make([]token, 0, len(text)/5+1), text, nil)
}

// maxCachedWords bounds a featureSet's cache of words.
const maxCachedWords = 1 << 16

// tokenize is the package's tokenize, into the set's scratch: a word seen
// before takes its token from the set's cache instead of being stemmed
// and allocated again. Most words of a store repeat: a 100k rebuild had
// spent 1.3 s of CPU tokenizing.
func (fs *featureSet) tokenize(text string) []token {
	switch {
	case fs.words == nil:
		// Grown as words come: a query's set sees a few words, and a map
		// made for a thousand cost a served recall 0.2 ms.
		fs.words = map[string]token{}
	case len(fs.words) >= maxCachedWords:
		fs.words = make(map[string]token, 1024)
	}
	fs.toks = tokenizeInto(fs.toks[:0], text, fs.words)
	return fs.toks
}

// tokenizeInto appends the tokens of text to toks, looking words up in
// cache and adding them to it (nil: no cache).
func tokenizeInto(toks []token, text string, cache map[string]token) []token {
	var buf []byte
	skip := false // inside the clitic after an apostrophe
	flush := func() {
		if len(buf) > 0 && !skip {
			t, ok := cache[string(buf)]
			if !ok {
				w := string(buf)
				t = token{word: w, stem: txt.Stem(w), stop: stopWords[w]}
				if cache != nil {
					cache[w] = t
				}
			}
			toks = append(toks, t)
		}
		buf = buf[:0]
		skip = false
	}
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if !skip {
				buf = append(buf, byte(r))
			}
		case r >= 'A' && r <= 'Z':
			if !skip {
				buf = append(buf, byte(r+'a'-'A'))
			}
		case r == '\'' || r == '\u2019':
			// "don't" → "don" + clitic: keep the head, drop the tail. A
			// quote that does not follow a letter just separates.
			if len(buf) > 0 && !skip {
				if w := string(buf); w == "don" || w == "won" || w == "can" || w == "isn" ||
					w == "didn" || w == "doesn" || w == "wasn" || w == "aren" ||
					w == "couldn" || w == "wouldn" || w == "shouldn" || w == "haven" ||
					w == "hasn" || w == "weren" || w == "ain" {
					// Negations carry meaning a stop list would throw away.
					buf = append(buf[:0], "not"...)
				}
				flush()
				skip = true
			} else {
				flush()
			}
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if !skip {
				buf = utf8.AppendRune(buf, unicode.ToLower(r))
			}
		case r >= utf8.RuneSelf && unicode.Is(unicode.Mn, r):
			// Combining marks stay with their letter.
			if !skip {
				buf = utf8.AppendRune(buf, r)
			}
		default:
			flush()
		}
	}
	flush()
	return toks
}

// stopWords are English function words. They carry little topic and, without
// corpus statistics (the pure hashing embedder), would dominate every vector;
// with a model their IDF is low anyway and they are down-weighted further.
// Question words are on the list because recall queries are often questions
// ("when did …", "what is …") while memories are statements.
var stopWords = func() map[string]bool {
	m := make(map[string]bool)
	for _, w := range []string{
		"a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and",
		"any", "are", "as", "at", "be", "because", "been", "before", "being", "below",
		"between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down",
		"during", "each", "few", "for", "from", "further", "had", "has", "have", "having",
		"he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if",
		"in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my",
		"myself", "no", "nor", "of", "off", "on", "once", "only", "or", "other", "our",
		"ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some",
		"such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
		"there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
		"up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who",
		"whom", "why", "will", "with", "would", "you", "your", "yours", "yourself",
		"yourselves", "s", "t", "d", "ll", "m", "re", "ve", "yes", "yeah", "oh", "ok",
		"okay", "really", "much", "many", "lot", "lots", "get", "got", "let", "us", "may",
		"might", "must", "shall", "whose", "thing", "things",
	} {
		m[w] = true
	}
	return m
}()
