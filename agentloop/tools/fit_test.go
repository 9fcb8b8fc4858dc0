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
		if got := r.fit(Result{Content: s}).Content; got != s {
			t.Errorf("fit(%q) = %q, want it whole", s, got)
		}
	}
	want := "[The output was too long (6 lines, 17 B); only its first 2 and last 2 lines are shown and the rest is lost. Narrow the command or search to see more.]\n" +
		"l1\nl2\n[… 2 lines omitted …]\nl5\nl6"
	if got := r.fit(Result{Content: five + "\nl6"}).Content; got != want {
		t.Errorf("fit of 6 lines = %q, want %q", got, want)
	}
	if got := r.fit(Result{Content: strings.Repeat("x", 101)}).Content; !strings.HasPrefix(got, "[The output was too long (1 line, 101 B);") {
		t.Errorf("fit of 101 bytes = %q", got)
	}
}
