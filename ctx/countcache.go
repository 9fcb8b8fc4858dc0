package ctx

import (
	"strings"
	"sync"
)

// A server plans a block for every request, and most of what it counts
// (the rolling summary, the pins, the memories a conversation keeps
// recalling) it counted a moment before. Exact counting is most of a
// plan's time (about 0.3 ms for one memory's line; pre-tokenizing with
// the encoding's regular expression is most of that), a lookup some
// nanoseconds. So a text is counted line by line and the counts of recent
// lines are kept, keyed by the line itself, since a count depends on
// nothing else.
//
// Counting line by line is exact for o200k_base and cl100k_base. Their
// pre-tokenizers take a whole run of white space that ends in newlines as
// one piece ("\s*[\r\n]+" comes before the other white-space rules), end
// a piece at a newline followed by a character that is neither white
// space nor "/" (o200k_base lets a run of punctuation take the newlines
// and slashes after it, "./\n/"), and byte-pair merging never crosses
// pieces: the tokens of the text are the tokens of its lines. The older
// encodings decide a run of white space by what follows it ("\s+(?!\S)"),
// so their texts are counted whole, and kept whole. The lines are cut
// only where it is exact (see nextLine); TestCountLines checks the sums
// against whole-text counts for every encoding, and FuzzCountLines goes
// on looking.
const (
	countCacheTexts = 8192    // lines kept at most; all dropped when full
	countCacheMax   = 8 << 10 // longer lines are counted every time
)

// countCache holds the token counts of recently counted lines.
type countCache struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countCache) get(s string) (int, bool) {
	if len(s) > countCacheMax {
		return 0, false
	}
	c.mu.Lock()
	n, ok := c.n[s]
	c.mu.Unlock()
	return n, ok
}

func (c *countCache) put(s string, n int) {
	if len(s) > countCacheMax {
		return
	}
	c.mu.Lock()
	if c.n == nil || len(c.n) >= countCacheTexts {
		c.n = make(map[string]int, 256)
	}
	c.n[s] = n
	c.mu.Unlock()
}

// nextLine returns the length of s's first line as Count cuts it: up to
// and including a newline followed by a printable ASCII character other
// than "/"; all of s when there is no such newline.
func nextLine(s string) int {
	from := 0
	for {
		i := strings.IndexByte(s[from:], '\n')
		if i < 0 {
			return len(s)
		}
		end := from + i + 1
		if end < len(s) && s[end] > ' ' && s[end] < 0x7f && s[end] != '/' {
			return end
		}
		from = end
	}
}

// byLines lists the encodings whose texts are counted line by line.
var byLines = map[string]bool{"o200k_base": true, "cl100k_base": true}

// countLines counts s line by line (whole for the older encodings), each
// line from the cache when it can.
func (e *Encoding) countLines(s string) int {
	total := 0
	lines := byLines[e.name]
	for s != "" {
		n := len(s)
		if lines {
			n = nextLine(s)
		}
		line := s[:n]
		s = s[n:]
		c, ok := e.seen.get(line)
		if !ok {
			c = len(e.encode(line))
			e.seen.put(line, c)
		}
		total += c
	}
	return total
}
