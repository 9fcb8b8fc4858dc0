package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgress checks that the indexing bar is drawn only for work that
// lasts, once per operation however many index opens report small ones,
// and is cleared at the end.
func TestProgress(t *testing.T) {
	var errb bytes.Buffer
	o := &IO{Err: &errb, progName: "mira-agent"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	p := newProgress(o)
	p.now = func() time.Time { return now }

	// One message of the agent: three index opens take in a new turn each.
	for range 3 {
		p.update(0, 1)
		now = now.Add(5 * time.Millisecond)
		p.update(1, 1)
	}
	if errb.Len() != 0 {
		t.Fatalf("short updates drew %q, want nothing", errb.String())
	}

	// A rebuild: drawn once it has lasted, at most ten times a second,
	// then cleared.
	for i := 0; i <= 100; i++ {
		p.update(i, 100)
		now = now.Add(10 * time.Millisecond)
	}
	out := errb.String()
	draws := strings.Count(out, "mira-agent: indexing [")
	if draws < 1 || draws > 8 {
		t.Errorf("a 1 s operation drew the bar %d times, want 1 to 8:\n%q", draws, out)
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("the bar is not cleared at the end: %q", out)
	}

	// Work that ends without reporting its end is cleared by clear.
	errb.Reset()
	p.update(0, 10)
	now = now.Add(time.Second)
	p.update(5, 10)
	p.clear()
	if out := errb.String(); !strings.Contains(out, "indexing [") || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("an unfinished bar is not cleared: %q", out)
	}
	errb.Reset()
	p.clear()
	if errb.Len() != 0 {
		t.Errorf("clear without a bar wrote %q", errb.String())
	}
}
