package tools

import (
	"strings"
	"testing"
)

// A result of exactly the most lines or bytes allowed is passed whole; one
// more line or byte cuts it to its first and last lines.
func TestFitEdges(t *testing.T) {
	r := &Registry{limits: Limits{ResultBytes: 100, ResultLines: 5, HeadLines: 2, TailLines: 2}}
	five := "l1\nl2\nl3\nl4\nl5"
	for _, s := range []string{five, five + "\n", strings.Repeat("x", 100), ""} {
		if got := r.fit(Result{Content: s}, "").Content; got != s {
			t.Errorf("fit(%q) = %q, want it whole", s, got)
		}
	}
	want := "[The output was too long (6 lines, 17 B); only its first 2 and last 2 lines are shown and the rest is lost. Narrow the command or search to see more.]\n" +
		"l1\nl2\n[… 2 lines omitted …]\nl5\nl6"
	if got := r.fit(Result{Content: five + "\nl6"}, "").Content; got != want {
		t.Errorf("fit of 6 lines = %q, want %q", got, want)
	}
	if got := r.fit(Result{Content: strings.Repeat("x", 101)}, "").Content; !strings.HasPrefix(got, "[The output was too long (1 line, 101 B);") {
		t.Errorf("fit of 101 bytes = %q", got)
	}
}

// A result too long only by lines, whose head and tail together show
// every line, says nothing was omitted: no "0 lines omitted".
func TestFitNothingOmitted(t *testing.T) {
	r := &Registry{limits: Limits{ResultBytes: 100, ResultLines: 3, HeadLines: 2, TailLines: 2}}
	want := "[The output was too long (4 lines, 11 B); only its first 2 and last 2 lines are shown and the rest is lost. Narrow the command or search to see more.]\n" +
		"l1\nl2\nl3\nl4"
	if got := r.fit(Result{Content: "l1\nl2\nl3\nl4"}, "").Content; got != want {
		t.Errorf("fit of 4 lines = %q, want %q", got, want)
	}
}

// takeLines takes lines while they fit in maxBytes exactly, from either
// end, and clips a first line that does not fit alone.
func TestTakeLinesEdges(t *testing.T) {
	lines := []string{"aaaa\n", "bbbb\n", "cccc\n"}
	tests := []struct {
		n, max  int
		fromEnd bool
		want    string
	}{
		{3, 10, false, "aaaa\nbbbb\n"},
		{3, 9, false, "aaaa\n"},
		{3, 10, true, "bbbb\ncccc\n"},
		{1, 15, false, "aaaa\n"},
		{3, 15, false, "aaaa\nbbbb\ncccc\n"},
		{3, 3, false, "aaa\n"},
		{3, 3, true, "ccc\n"},
	}
	for _, tt := range tests {
		if got := strings.Join(takeLines(lines, tt.n, tt.max, tt.fromEnd), ""); got != tt.want {
			t.Errorf("takeLines(%d, %d, %v) = %q, want %q", tt.n, tt.max, tt.fromEnd, got, tt.want)
		}
	}
}

// Artifact ids and scopes are letters, digits, '-', '_' and inner dots.
func TestValidNameEdges(t *testing.T) {
	for _, s := range []string{"azAZ09_-", "a.b", "z", "Z", "9", strings.Repeat("a", 200)} {
		if !validName(s) {
			t.Errorf("validName(%q) = false", s)
		}
	}
	for _, s := range []string{"", ".a", "a..b", "a/b", "a@b", "a[b", "a`b", "a{b", "a b", strings.Repeat("a", 201)} {
		if validName(s) {
			t.Errorf("validName(%q) = true", s)
		}
	}
}
