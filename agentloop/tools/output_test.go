package tools

import (
	"os"
	"path/filepath"
	"testing"
)

// Output of exactly the cap is read whole; one byte more is cut to its
// first and last halves, never inside a character.
func TestReadCappedEdges(t *testing.T) {
	read := func(s string, limit int64) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "out")
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		got, err := readCapped(f, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	tests := []struct {
		in    string
		limit int64
		want  string
	}{
		{"abcdefgh", 8, "abcdefgh"},
		{"", 8, ""},
		{"abcdefghi", 8, "abcd\n[… 1 B of output omitted …]\nfghi"},
		{"abc€defghi", 8, "abc\n[… 5 B of output omitted …]\nfghi"},            // € cut at the head
		{"abcdefg€hi", 8, "abcd\n[… 6 B of output omitted …]\nhi"},             // € cut at the tail
		{"abcdefgh\x80\x80\x80\x80", 8, "abcd\n[… 8 B of output omitted …]\n"}, // not UTF-8: no panic
	}
	for _, tt := range tests {
		if got := read(tt.in, tt.limit); got != tt.want {
			t.Errorf("readCapped(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}

func TestTrimPartialRune(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"\xe2\x82", ""}, // nothing but a partial €
		{"abc", "abc"},
		{"ab€", "ab€"},
		{"ab\xe2\x82", "ab"},   // € without its last byte
		{"ab\xe2", "ab"},       // € with only its first
		{"a🦜", "a🦜"},           // four bytes, whole
		{"a\xf0\x9f\xa6", "a"}, // four bytes, one missing
		{"\x80\x80\x80\x80\x80", "\x80\x80\x80\x80\x80"}, // no start within reach: kept
	}
	for _, tt := range tests {
		if got := trimPartialRune(tt.in); got != tt.want {
			t.Errorf("trimPartialRune(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPlainOutput(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain\n", "plain\n"},
		{"\x1b[1;31mred\x1b[0m\n", "red\n"},
		{"10%\r50%\r100%\ndone\n", "100%\ndone\n"},
		{"line\r\nnext\r\n", "line\nnext\n"},
		{"\rstart", "start"},
		{"\x1b]0;title\x07text", "text"},
	}
	for _, tt := range tests {
		if got := plainOutput(tt.in); got != tt.want {
			t.Errorf("plainOutput(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
