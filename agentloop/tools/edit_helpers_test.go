package tools

import (
	"slices"
	"strings"
	"testing"
)

// lineList names up to ten lines, then counts the rest.
func TestLineList(t *testing.T) {
	at := func(n int) []int {
		var s []int
		for i := 1; i <= n; i++ {
			s = append(s, i)
		}
		return s
	}
	tests := []struct {
		n    int
		want string
	}{
		{0, ""},
		{1, "1"},
		{10, "1, 2, 3, 4, 5, 6, 7, 8, 9, 10"},
		{11, "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, and 1 more"},
	}
	for _, tt := range tests {
		if got := lineList(at(tt.n)); got != tt.want {
			t.Errorf("lineList of %d lines = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestOccurrenceLines(t *testing.T) {
	tests := []struct {
		text, old string
		want      []int
	}{
		{"a\nb\na\n", "a", []int{1, 3}},
		{"x\na\nb\na\nb\n", "a\nb", []int{2, 4}},
		{"aaa", "a", []int{1, 1, 1}},
		{"abc", "z", nil},
	}
	for _, tt := range tests {
		if got := occurrenceLines(tt.text, tt.old); !slices.Equal(got, tt.want) {
			t.Errorf("occurrenceLines(%q, %q) = %v, want %v", tt.text, tt.old, got, tt.want)
		}
	}
}

// similarAt finds old's lines with other spacing anywhere, the last lines
// of the text included, the first and last of them possibly parts of
// lines.
func TestSimilarAt(t *testing.T) {
	text := "func a() {\n\tx := 1\n\treturn x\n}"
	tests := []struct {
		old  string
		i, k int
	}{
		{"x := 1\nreturn x", 1, 2},
		{"return x\n}", 2, 2}, // the last lines
		{"}", 3, 1},
		{"x := 1\nreturn", 1, 2},     // the last line's start
		{"a() {\n  x := 1", 0, 2},    // the first line's end
		{"return x\n} // end", 0, 0}, // the last line must begin it
		{"return", 2, 1},             // one line: any part of it
		{"\n\n", 0, 0},
		{"y := 2", 0, 0},
	}
	for _, tt := range tests {
		if i, k := similarAt(text, tt.old); i != tt.i || k != tt.k {
			t.Errorf("similarAt(%q) = %d, %d, want %d, %d", tt.old, i, k, tt.i, tt.k)
		}
	}
}

// preview shows up to previewLines lines, then counts the rest.
func TestPreview(t *testing.T) {
	lines := func(n int) string { return strings.Repeat("l\n", n) }
	if got := preview("+ ", lines(previewLines)); strings.Count(got, "+ l") != previewLines || strings.Contains(got, "more") {
		t.Errorf("preview of %d lines = %q", previewLines, got)
	}
	if got := preview("+ ", lines(previewLines+1)); !strings.HasSuffix(got, "+ … (1 more line)") || strings.Count(got, "+ l") != previewLines {
		t.Errorf("preview of %d lines = %q", previewLines+1, got)
	}
	if got := preview("+ ", lines(previewLines+2)); !strings.HasSuffix(got, "+ … (2 more lines)") {
		t.Errorf("preview of %d lines = %q", previewLines+2, got)
	}
	if got := preview("- ", ""); got != "- (empty)" {
		t.Errorf("preview of nothing = %q", got)
	}
}
