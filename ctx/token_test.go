package ctx

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNewTokenizer(t *testing.T) {
	tests := []struct {
		name, want string
		wantErr    bool
	}{
		{"", "o200k_base", false},
		{"o200k_base", "o200k_base", false},
		{"cl100k_base", "cl100k_base", false},
		{"gpt-5", "", true},
		{"O200K_BASE", "", true},
	}
	for _, tt := range tests {
		e, err := NewTokenizer(tt.name)
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "unknown token encoding") || !strings.Contains(err.Error(), tt.name) {
				t.Errorf("NewTokenizer(%q) error = %v, want one naming the encoding", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("NewTokenizer(%q): %v", tt.name, err)
		}
		if e.Name() != tt.want {
			t.Errorf("NewTokenizer(%q).Name() = %q, want %q", tt.name, e.Name(), tt.want)
		}
	}
	a, _ := NewTokenizer("")
	b, _ := NewTokenizer(DefaultEncoding)
	if a != b {
		t.Error("NewTokenizer returns a new encoding for a name already loaded")
	}
}

func TestCount(t *testing.T) {
	// Reference counts from OpenAI's tiktoken.
	tests := []struct {
		enc, text string
		want      int
	}{
		{"o200k_base", "", 0},
		{"o200k_base", "hello world", 2},
		{"cl100k_base", "hello world", 2},
		{"cl100k_base", "tiktoken is great!", 6},
		{"o200k_base", "<|endoftext|>", 7},
	}
	for _, tt := range tests {
		if got := mustTokenizer(t, tt.enc).Count(tt.text); got != tt.want {
			t.Errorf("%s.Count(%q) = %d, want %d", tt.enc, tt.text, got, tt.want)
		}
	}
	var _ Tokenizer = mustTokenizer(t, "")
}

func TestPrefixIsValidUTF8(t *testing.T) {
	e := mustTokenizer(t, "")
	// The parrot, the fraktur letter and the hieroglyph each take several
	// tokens, so some prefixes end inside a character.
	s := "naïve 日本語のテキスト 🙂🙂 Ω 🦜𝔘 ꙮ𓀀"
	toks := e.encode(s)
	for k := range len(toks) + 1 {
		p := e.prefix(toks, k)
		if !utf8.ValidString(p) || !strings.HasPrefix(s, p) {
			t.Fatalf("prefix(%d) = %q: not a valid prefix of %q", k, p, s)
		}
	}
	if got := e.prefix(toks, len(toks)); got != s {
		t.Errorf("prefix(all) = %q, want %q", got, s)
	}
}

// Long runs without spaces are encoded in chunks: the tokens still decode
// to the exact text, and the count stays within a token per chunk of the
// unchunked one.
func TestLongRunsChunked(t *testing.T) {
	e, err := NewTokenizer("")
	if err != nil {
		t.Fatal(err)
	}
	b64 := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkrLw", 30)
	for _, s := range []string{
		"Some words and base64 " + b64 + " more words",
		strings.Repeat("=", 5000),
		"héllo " + strings.Repeat("ñ", 700) + " wörld",
		strings.Repeat("0123456789abcdef", 100) + "\n" + strings.Repeat("x", 257),
	} {
		toks := e.encode(s)
		if got := e.tk.Decode(toks); got != s {
			t.Errorf("chunked tokens of %.40q… decode to %.40q…", s, got)
		}
		whole := len(e.tk.EncodeOrdinary(s))
		chunks := len(s)/maxRun + 2
		if n := e.Count(s); n < whole-chunks || n > whole+chunks {
			t.Errorf("Count(%.40q…) = %d, unchunked %d: more than %d apart", s, n, whole, chunks)
		}
	}
	if hasLongRun(strings.Repeat("word ", 1000)) {
		t.Error("ordinary text has no long run")
	}
}

// The count of a text with long runs is exactly that of its pieces: the
// text around the runs as it is, and each run in chunks of maxRun bytes.
// A run of maxRun bytes or fewer is not a long run: its text is counted
// whole. Each case is chosen so that the chunked count differs from the
// whole one.
func TestLongRunCountIsChunkSum(t *testing.T) {
	e := mustTokenizer(t, "")
	if err := e.Load(); err != nil {
		t.Fatal(err)
	}
	whole := func(s string) int { return len(e.tk.EncodeOrdinary(s)) }
	run := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkrLw", 14)[:600]
	chunks := []string{run[:maxRun], run[maxRun : 2*maxRun], run[2*maxRun:]}
	tests := []struct {
		name   string
		pieces []string // counted one by one
	}{
		{"run first", append(slices.Clone(chunks), " tail words")},
		{"run last", append([]string{"head words "}, chunks...)},
		{"run alone", chunks},
		{"one byte over", []string{"x ", run[:maxRun], run[maxRun : maxRun+1], " y"}},
	}
	for _, sep := range []string{"\n", "\t", "\r", "\f", "\v"} {
		tests = append(tests, struct {
			name   string
			pieces []string
		}{fmt.Sprintf("after %q", sep), append([]string{"word" + sep}, chunks...)})
	}
	for _, tt := range tests {
		s, want := "", 0
		for _, p := range tt.pieces {
			s += p
			want += whole(p)
		}
		if want == whole(s) {
			t.Fatalf("%s: chunked and whole counts agree; the case tests nothing", tt.name)
		}
		if got := e.Count(s); got != want {
			t.Errorf("%s: Count = %d, want %d (whole text: %d)", tt.name, got, want, whole(s))
		}
	}
	// At maxRun bytes a run is still counted with its surroundings.
	s := "x " + run[:maxRun] + " y"
	if n := whole("x ") + whole(run[:maxRun]) + whole(" y"); n == whole(s) {
		t.Fatal("split and whole counts agree; the case tests nothing")
	}
	if got, want := e.Count(s), whole(s); got != want {
		t.Errorf("Count of a run of exactly maxRun bytes = %d, want the whole count %d", got, want)
	}
}
