package ctx

import (
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
	s := "naïve 日本語のテキスト 🙂🙂 Ω"
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
