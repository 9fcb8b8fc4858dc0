package ctx

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCountLines: counting line by line, from the cache or not, gives the
// whole text's count, for every encoding, on texts made to find the
// places where a piece could cross a newline (punctuation, slashes,
// indentation, blank lines, carriage returns, non-ASCII).
func TestCountLines(t *testing.T) {
	parts := []string{"\n", "\n\n", "\r\n", " \n", "\n ", "\n\t", "/", "./", ".", "!?", "\n/", "-", "#", "*", "[x]",
		"word", "Word", "WORD", "'s", "'ll", "123", "45678", " ", "  ", "\t", "é", "日本", "—", "\u00a0", "\u2028", "😀", "(", ")", ":"}
	r := rand.New(rand.NewPCG(7, 11))
	var texts []string
	for range 400 {
		var b strings.Builder
		for range 1 + r.IntN(40) {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		texts = append(texts, b.String())
	}
	texts = append(texts,
		"## Summary\nWe chose PostgreSQL.\n- [decision] JSONB support (id 01J9Z)\n- [fact] the queue retries\n",
		"a.\n/b", "x\n\n\ny", "line one\r\nline two\r\n", "ends with newline\n", strings.Repeat("=", 600)+"\nnext")
	for _, name := range encodings {
		if name == "p50k_edit" {
			continue // p50k_base's pattern; TestEmptyPlanLoadsNoEncoding needs it never loaded
		}
		enc, err := NewTokenizer(name)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 { // the second from the cache
			for _, s := range texts {
				if got, want := enc.Count(s), len(enc.encode(s)); got != want {
					t.Errorf("%s round %d: Count(%q) = %d, the whole text has %d", name, round, s, got, want)
				}
			}
		}
	}
}

// TestCountCache: the cache stays bounded, and a count after it was
// emptied is still the text's.
func TestCountCache(t *testing.T) {
	enc, err := NewTokenizer("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("tok ", 3000)
	if got, want := enc.Count(long), len(enc.encode(long)); got != want {
		t.Errorf("a long text: %d, want %d", got, want)
	}
	if _, ok := enc.seen.get(long); ok {
		t.Errorf("a line of %d bytes was kept", len(long))
	}
	for i := range countCacheTexts + 10 {
		s := fmt.Sprintf("note %d about things", i)
		if got, want := enc.Count(s), len(enc.encode(s)); got != want {
			t.Fatalf("Count(%q) = %d, want %d", s, got, want)
		}
	}
	if n := len(enc.seen.n); n > countCacheTexts {
		t.Errorf("the cache holds %d lines, at most %d", n, countCacheTexts)
	}
	if got, want := enc.Count("hello world"), len(enc.encode("hello world")); got != want {
		t.Errorf("after the cache was emptied: %d, want %d", got, want)
	}
}

// FuzzCountLines: for any text, counting line by line is the whole
// text's count.
func FuzzCountLines(f *testing.F) {
	for _, s := range []string{"a.\n/b", "x\n\ny", "- [fact] a\n- [note] b\n", "é\n日本\n😀"} {
		f.Add(s)
	}
	enc, err := NewTokenizer("")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		if got, want := enc.countLines(s), len(enc.encode(s)); got != want {
			t.Errorf("Count(%q) = %d, the whole text has %d", s, got, want)
		}
	})
}

// BenchmarkCount: counting a planned block of 30 memories the first time
// (every line new) and again with one line changed, as the next request
// of a conversation does.
func BenchmarkCount(b *testing.B) {
	enc, err := NewTokenizer("")
	if err != nil {
		b.Fatal(err)
	}
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("- [decision] We chose PostgreSQL for JSONB support; the queue worker retries payments %d times (id 01J9Z%03d)", i, i))
	}
	block := "## Memory\n" + strings.Join(lines, "\n") + "\n"
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			enc.encode(block)
		}
	})
	b.Run("lines", func(b *testing.B) {
		enc.Count(block)
		i := 0
		for b.Loop() {
			i++
			enc.Count(block + fmt.Sprintf("- [note] asked %d\n", i))
		}
	})
}

// TestCountCacheBounds: a line of countCacheMax bytes is kept and a
// longer one is not; the cache holds countCacheTexts lines and is emptied
// by the one after.
func TestCountCacheBounds(t *testing.T) {
	var c countCache
	edge := strings.Repeat("a", countCacheMax)
	c.put(edge, 7)
	if n, ok := c.get(edge); !ok || n != 7 {
		t.Errorf("a line of %d bytes: get = %d, %v; want 7, true", len(edge), n, ok)
	}
	over := edge + "a"
	c.put(over, 8)
	if _, ok := c.get(over); ok {
		t.Errorf("a line of %d bytes was kept", len(over))
	}
	if len(c.n) != 1 {
		t.Errorf("%d lines kept, want 1", len(c.n))
	}
	for i := 1; i < countCacheTexts; i++ {
		c.put(fmt.Sprint(i), i)
	}
	if len(c.n) != countCacheTexts {
		t.Fatalf("%d lines kept, want %d", len(c.n), countCacheTexts)
	}
	if n, ok := c.get("17"); !ok || n != 17 {
		t.Errorf("get(17) = %d, %v; want 17, true", n, ok)
	}
	c.put("one more", 1)
	if len(c.n) != 1 {
		t.Errorf("full cache, one more line: %d lines kept, want 1 (emptied)", len(c.n))
	}
	if n, ok := c.get("one more"); !ok || n != 1 {
		t.Errorf("get after emptying = %d, %v; want 1, true", n, ok)
	}
}

// TestNextLine: where a text is cut into lines.
func TestNextLine(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"a\nb", 2},
		{"\nabc", 1},
		{"a\n/b", 4},    // a newline before "/" is not cut
		{"a\n b", 4},    // nor before white space
		{"a\n\nb", 3},   // the run of newlines stays with the line
		{"a\n\x7fb", 4}, // nor before a control character
		{"a\n~b\nc", 2}, // "~" is the last printable ASCII character
		{"a\n!b", 2},    // "!" the first
		{"a\nébc", 6},   // nor before non-ASCII
		{"x\n/\ny", 4},  // the first cut is after "/\n"
	} {
		if got := nextLine(tc.s); got != tc.want {
			t.Errorf("nextLine(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}
