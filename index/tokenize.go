package index

import (
	"bytes"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
)

// The analyser's tokenizer splits text into words by the Unicode word
// boundary rules (UAX #29), through a state machine over every code point;
// at 100k documents that was two thirds of the analysis and a tenth of a
// rebuild. Text that is all ASCII, nearly all of it in practice, is split
// here by the same rules as they apply to ASCII, into the same tokens
// (TestASCIITokensMatch); anything else goes to the state machine. The
// filters after it (possessives, lower case, stop words, stemming) are the
// analyser's own.
//
// In ASCII the rules that join characters into a word are: letters and
// digits run together (WB5, WB8-WB10); a letter, then ':', '.' or an
// apostrophe, then a letter stay one word (WB6-WB7); a digit, then ',',
// ';', '.' or an apostrophe, then a digit too (WB11-WB12); '_' joins
// whatever letters, digits and underscores stand on either side
// (WB13a-b). Every other character is a break, and a segment of them
// (spaces, punctuation) is no token.

// asciiClass is a byte's word-break class.
type asciiClass uint8

const (
	clOther     asciiClass = iota
	clLetter               // A-Z a-z
	clDigit                // 0-9
	clUnder                // _ (ExtendNumLet)
	clMidLetter            // : (MidLetter)
	clMidNum               // , ; (MidNum)
	clMidBoth              // . ' (MidNumLet, Single_Quote)
)

var asciiClasses = func() (t [128]asciiClass) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = clLetter, clLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clDigit
	}
	t['_'], t[':'], t[','], t[';'], t['.'], t['\''] = clUnder, clMidLetter, clMidNum, clMidNum, clMidBoth, clMidBoth
	return t
}()

// isASCII reports whether b has only ASCII bytes.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// tokScratch is the room an analysis of ASCII text makes its tokens in,
// kept for the next one (see analyse): at 100k entries the tokens of a
// rebuild were 0.7 GB of allocations.
type tokScratch struct {
	text   []byte
	toks   []analysis.Token
	stream analysis.TokenStream
}

var tokScratchPool = sync.Pool{New: func() any { return new(tokScratch) }}

// asciiTokensIn splits ASCII text into the tokens the Unicode tokenizer
// gives: the same terms (slices of b), offsets and positions. The tokens
// are made in sc's room.
func asciiTokensIn(b []byte, sc *tokScratch) analysis.TokenStream {
	toks := sc.toks[:0]
	pos := 1
	for i := 0; i < len(b); {
		c := asciiClasses[b[i]]
		if c != clLetter && c != clDigit && c != clUnder {
			i++
			continue
		}
		start := i
		typ := analysis.AlphaNumeric
		if c == clDigit {
			typ = analysis.Numeric
		}
		for i+1 < len(b) {
			cur, next := asciiClasses[b[i]], asciiClasses[b[i+1]]
			if next == clLetter || next == clDigit || next == clUnder {
				if cur == clLetter || cur == clDigit || cur == clUnder {
					i++
					if next == clLetter {
						typ = analysis.AlphaNumeric
					}
					continue
				}
				break
			}
			if i+2 < len(b) {
				after := asciiClasses[b[i+2]]
				if cur == clLetter && after == clLetter && (next == clMidLetter || next == clMidBoth) ||
					cur == clDigit && after == clDigit && (next == clMidNum || next == clMidBoth) {
					i += 2
					continue
				}
			}
			break
		}
		i++
		if toks == nil {
			toks = make([]analysis.Token, 0, len(b)/5+1)
		}
		toks = append(toks, analysis.Token{Term: b[start:i], Start: start, End: i, Position: pos, Type: typ})
		pos++
	}
	out := sc.stream[:0]
	if cap(out) < len(toks) {
		out = make(analysis.TokenStream, 0, len(toks))
	}
	for i := range toks {
		out = append(out, &toks[i])
	}
	sc.toks, sc.stream = toks, out
	return out
}

// fastAnalyzer is the text analyser with asciiTokensIn in front of its own
// tokenizer and, when its last filter is the Porter stemmer, English word
// forms joined before it (wordForm) and the stems of the words it has seen
// kept: the stemmer turns every word into runes and back, a tenth of a
// rebuild's analysis, and most words of a store repeat.
type fastAnalyzer struct {
	a     *analysis.DefaultAnalyzer
	stems *stemCache // nil: every word is stemmed
}

func newFastAnalyzer(a *analysis.DefaultAnalyzer) fastAnalyzer {
	f := fastAnalyzer{a: a}
	if n := len(a.TokenFilters); n > 0 {
		if _, ok := a.TokenFilters[n-1].(*porter.PorterStemmer); ok {
			f.stems = &stemCache{m: map[string][]byte{}}
		}
	}
	return f
}

func (f fastAnalyzer) Analyze(input []byte) analysis.TokenStream {
	return f.analyzeIn(input, &tokScratch{})
}

// analyzeIn is Analyze making the tokens of ASCII text in sc's room: the
// tokens are sc's until it is used again.
func (f fastAnalyzer) analyzeIn(input []byte, sc *tokScratch) analysis.TokenStream {
	var toks analysis.TokenStream
	if isASCII(input) {
		toks = asciiTokensIn(input, sc)
	} else {
		toks = f.a.Tokenizer.Tokenize(input)
	}
	filters := f.a.TokenFilters
	if f.stems != nil {
		filters = filters[:len(filters)-1]
	}
	for _, filter := range filters {
		toks = filter.Filter(toks)
	}
	if f.stems != nil {
		f.stems.stem(toks, f.a.TokenFilters[len(f.a.TokenFilters)-1])
	}
	return toks
}

// stemCache keeps the stems of up to maxStems words, shared by the
// goroutines that analyse. A stem is never written to once kept: the
// tokens that take it only read it.
type stemCache struct {
	mu sync.RWMutex
	m  map[string][]byte
}

const maxStems = 1 << 16

// noWordForms turns wordForm off, for a test to analyse as an index of
// FormatVersion 10 and before did.
var noWordForms bool

// stem stems toks as stemmer does, after taking each word to its form
// (wordForm), taking the stems of words seen before from the cache.
func (c *stemCache) stem(toks analysis.TokenStream, stemmer analysis.TokenFilter) {
	for _, t := range toks {
		if t.KeyWord {
			continue // the stemmer leaves them as they are
		}
		c.mu.RLock()
		s, ok := c.m[string(t.Term)]
		c.mu.RUnlock()
		if ok {
			t.Term = s
			continue
		}
		word := string(t.Term)
		if form, ok := wordForm(word); ok && !noWordForms {
			t.Term = []byte(form)
		}
		stemmer.Filter(analysis.TokenStream{t})
		c.mu.Lock()
		if len(c.m) < maxStems {
			// A copy: the term may share the text's bytes, which
			// analyse reuses.
			t.Term = bytes.Clone(t.Term)
			c.m[word] = t.Term
		}
		c.mu.Unlock()
	}
}
