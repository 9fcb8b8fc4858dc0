package ctx

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// DefaultEncoding is the tiktoken encoding used when none is named: the one
// of current OpenAI chat models.
const DefaultEncoding = "o200k_base"

// encodings lists the encoding names NewTokenizer accepts.
var encodings = []string{"o200k_base", "cl100k_base", "p50k_base", "p50k_edit", "r50k_base"}

// Tokenizer counts the tokens of a text. Other packages that must keep text
// within a token budget (summaries, the agent's history) depend on this
// interface rather than on a particular tokenizer.
type Tokenizer interface {
	Count(s string) int
}

// Encoding is an exact tiktoken tokenizer. Its ranks are read from data
// compiled into the binary (no network) the first time a text is counted,
// which costs about 0.1 s for cl100k_base and 0.27 s for o200k_base, so a
// command that never counts never pays for it. An Encoding is safe for
// concurrent use.
type Encoding struct {
	name string
	once sync.Once
	tk   *tiktoken.Tiktoken
	err  error
	seen countCache
}

var (
	loaderOnce sync.Once
	encMu      sync.Mutex
	encByName  = map[string]*Encoding{}
)

// NewTokenizer returns the encoding called name: o200k_base, cl100k_base,
// p50k_base, p50k_edit or r50k_base ("" means DefaultEncoding).
// Every call with the same name returns the same *Encoding, so its data is
// loaded at most once per process. An unknown name is an error; nothing is
// loaded yet.
func NewTokenizer(name string) (*Encoding, error) {
	if name == "" {
		name = DefaultEncoding
	}
	if !slices.Contains(encodings, name) {
		return nil, fmt.Errorf("unknown token encoding %q (want one of %s)", name, strings.Join(encodings, ", "))
	}
	encMu.Lock()
	defer encMu.Unlock()
	e := encByName[name]
	if e == nil {
		e = &Encoding{name: name}
		encByName[name] = e
	}
	return e, nil
}

// Name returns the encoding's name, such as "o200k_base".
func (e *Encoding) Name() string { return e.name }

// Load reads the encoding's ranks if that has not happened yet. Count loads
// on demand; Load lets a caller surface a failure as an error, and pay the
// cost at a moment of its choosing.
func (e *Encoding) Load() error {
	e.once.Do(func() {
		// The default loader downloads the ranks; the offline one reads the
		// copy embedded in the binary. It must be set before the first
		// GetEncoding, and the setting is global to the tiktoken package.
		loaderOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
		e.tk, e.err = tiktoken.GetEncoding(e.name)
		if e.err != nil {
			e.err = fmt.Errorf("load token encoding %s: %w", e.name, e.err)
		}
	})
	return e.err
}

// Count returns the number of tokens of s. Special tokens such as
// "<|endoftext|>" are counted as the plain text they are. Count panics if
// the embedded data cannot be loaded, which only a broken build can cause;
// call Load first to get an error instead.
func (e *Encoding) Count(s string) int {
	if s == "" {
		return 0
	}
	return e.countLines(s)
}

func (e *Encoding) encode(s string) []int {
	if err := e.Load(); err != nil {
		panic(err)
	}
	if !hasLongRun(s) {
		return e.tk.EncodeOrdinary(s)
	}
	// Byte-pair merging is quadratic in the length of one pre-tokenized
	// piece, and a run of characters with no space in it (base64, a hex
	// dump, a line of "=") is one piece: 16 KB of "=" took 0.56 s and 64 KB
	// minutes. Such runs are encoded in chunks of maxRun bytes. The tokens
	// still decode to the exact text; the count can differ from the
	// unchunked one only inside those runs, by about a token per chunk
	// (merges across a chunk boundary are lost, so in practice it counts
	// more, never a surprise for a budget).
	var out []int
	start := 0
	for start < len(s) {
		i, j := nextLongRun(s, start)
		if i < 0 {
			break
		}
		if i > start {
			out = append(out, e.tk.EncodeOrdinary(s[start:i])...)
		}
		for k := i; k < j; {
			end := min(k+maxRun, j)
			for end < j && !utf8.RuneStart(s[end]) {
				end++
			}
			out = append(out, e.tk.EncodeOrdinary(s[k:end])...)
			k = end
		}
		start = j
	}
	if start < len(s) {
		out = append(out, e.tk.EncodeOrdinary(s[start:])...)
	}
	return out
}

// maxRun is the longest run of non-space bytes encoded in one piece.
const maxRun = 256

func isSpace(b byte) bool {
	return b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == '\f' || b == '\v'
}

// hasLongRun reports whether s has more than maxRun non-space bytes in a row.
func hasLongRun(s string) bool {
	i, _ := nextLongRun(s, 0)
	return i >= 0
}

// nextLongRun returns the bounds of the first run of more than maxRun
// non-space bytes at or after from, or -1.
func nextLongRun(s string, from int) (int, int) {
	run := from
	for i := from; i <= len(s); i++ {
		if i == len(s) || isSpace(s[i]) {
			if i-run > maxRun {
				return run, i
			}
			run = i + 1
		}
	}
	return -1, -1
}

// prefix returns the longest valid UTF-8 text that the first n tokens of
// toks decode to. A token can end inside a multi-byte character; the
// partial character is dropped rather than turned into U+FFFD.
func (e *Encoding) prefix(toks []int, n int) string {
	s := e.tk.Decode(toks[:n])
	for len(s) > 0 && !utf8.ValidString(s) {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
