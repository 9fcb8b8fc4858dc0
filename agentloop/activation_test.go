package agentloop

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestActivationRules(t *testing.T) {
	// Half the activation is left after ActivationHalfLife turns.
	a := 8.0
	for range int(ActivationHalfLife) {
		a = decay(a)
	}
	if math.Abs(a-4) > 1e-9 {
		t.Errorf("after %v turns: %v, want 4", ActivationHalfLife, a)
	}
	// Being shown every turn, never used, converges below both the
	// threshold that keeps an ephemeral pin and the one that ends a
	// promoted lease.
	a = 0
	for range 100 {
		a = decay(a) + GainIncluded
	}
	if a >= KeepAt || a >= EndBelow {
		t.Errorf("shown alone converges to %v: it would keep an item forever", a)
	}
	for _, tc := range []struct {
		a                float64
		kind             string
		promoted, stored bool
		want             string
	}{
		{PromoteAt, "ephemeral", false, false, fatePromote},
		{KeepAt, "ephemeral", false, false, fateKeep},
		{KeepAt - 0.01, "ephemeral", false, false, fateEnd},
		{EndBelow - 0.01, "leased", true, false, fateEnd},
		{0, "leased", false, false, fateNone}, // the user's lease of turns: its count ends it
		{EndBelow, "leased", true, false, fateNone},
		{KeepAt, "", false, false, fateHint},
		{PromoteAt * 10, "", false, true, fateNone}, // pinned in the store already
		{PromoteAt * 10, "sticky", false, false, fateNone},
	} {
		if got := settle(tc.a, tc.kind, tc.promoted, tc.stored); got != tc.want {
			t.Errorf("settle(%v, %q, %v, %v) = %q, want %q", tc.a, tc.kind, tc.promoted, tc.stored, got, tc.want)
		}
	}
}

func TestReferences(t *testing.T) {
	r := newRefs("01ABCDEF", "", "", "The invoice exporter writes UTF-8 CSV with semicolons as separators.")
	code := newRefs("", "internal/export/csv.go", "WriteInvoices", "")
	for _, tc := range []struct {
		refs refs
		text string
		want bool
	}{
		{r, "see 01ABCDEF", true},
		{r, "It writes utf-8 csv, with SEMICOLONS as separators!", true},
		{r, "It writes CSV.", false},
		{r, "the invoice is in the the of and", false},
		{code, "look at internal/export/csv.go", true},
		{code, "WriteInvoices does it", true},
		{code, "WriteInvoicesTo does it", false},
		{code, "writeinvoices", false},
	} {
		if got := tc.refs.in(newText(tc.text)); got != tc.want {
			t.Errorf("%+v in %q = %v, want %v", tc.refs, tc.text, got, tc.want)
		}
	}
	// Short common words do not make a span.
	if s := newRefs("", "", "", "it is in the way of it all to be so"); len(s.spans) != 0 {
		t.Errorf("spans of common words: %q", s.spans)
	}
}

// BenchmarkReferences checks a reply of some 4 KB against 50 memories of
// 400 words: the work endTurn does after every reply.
func BenchmarkReferences(b *testing.B) {
	word := func(i int) string { return "word" + strconv.Itoa(i) }
	var items []refs
	for n := range 50 {
		var w []string
		for i := range 400 {
			w = append(w, word(n*400+i))
		}
		items = append(items, newRefs("01MEMORY"+strconv.Itoa(n), "", "", strings.Join(w, " ")))
	}
	var rw []string
	for i := range 600 {
		rw = append(rw, word(1_000_000+i))
	}
	reply := strings.Join(rw, " ")
	b.ReportAllocs()
	for b.Loop() {
		msg := newText(reply)
		for _, r := range items {
			if r.in(msg) {
				b.Fatal("found")
			}
		}
	}
}
