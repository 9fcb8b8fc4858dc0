package tools

import (
	"strings"
	"testing"

	"github.com/miramem/mira/internal/text"
)

// A file is binary when its first sniffLen bytes hold a NUL, wherever in
// them it is; a NUL past them is not looked at.
func TestIsBinaryEdges(t *testing.T) {
	text := []byte(strings.Repeat("a", sniffLen+10))
	for _, at := range []int{0, 1, sniffLen - 1} {
		b := append([]byte(nil), text...)
		b[at] = 0
		if !isBinary(b) {
			t.Errorf("NUL at %d: not taken for binary", at)
		}
	}
	b := append([]byte(nil), text...)
	b[sniffLen] = 0
	if isBinary(b) || isBinary(text) || isBinary(nil) {
		t.Error("text taken for binary")
	}
}

// clip and clipLine keep a string that fits exactly, and cut one byte too
// long at a character boundary.
func TestClipEdges(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abcd", 4, "abcd"},
		{"abcde", 4, "abcd"},
		{"abcé", 5, "abcé"}, // é is 2 bytes: exactly 5
		{"abcé", 4, "abc"},  // would split é
		{"ééé", 3, "é"},     // back to the start of the second é
		{"日本語", 2, ""},      // nothing fits
		{"", 0, ""},
		{"\x80\x80ab", 1, ""}, // not UTF-8: still no panic
	}
	for _, tt := range tests {
		if got := text.Cut(tt.s, tt.n); got != tt.want {
			t.Errorf("clip(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
	if got := clipLine("abcd", 4); got != "abcd" {
		t.Errorf("clipLine of a line that fits = %q", got)
	}
	if got, want := clipLine("abcdef", 4), "abcd… [line clipped: 2 more bytes]"; got != want {
		t.Errorf("clipLine = %q, want %q", got, want)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 lines", 1: "1 line", 2: "2 lines"} {
		if got := plural(n, "line"); got != want {
			t.Errorf("plural(%d) = %q, want %q", n, got, want)
		}
	}
}
