package rank

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// An encoding of the first version, whose names and terms were in the
// order they were met, is refused (the index rebuilds it), and so are
// names or terms out of order, which binary search would miss.
func TestDecodeRefusesOldAndUnsorted(t *testing.T) {
	b, err := build(tiny()).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	old := slices.Clone(b)
	old[len(magic)] = 1
	if err := New().UnmarshalBinary(old); !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("version 1: %v, want a version error", err)
	}
	for _, l := range [][]string{{"beta", "alpha"}, {"same", "same"}} {
		var enc []byte
		for _, s := range l {
			enc = appendString(enc, s)
		}
		r := &reader{b: enc}
		r.sorted("term", len(l), 0)
		if !errors.Is(r.err, errCorrupt) {
			t.Errorf("%q: %v, want out of order", l, r.err)
		}
	}
	r := &reader{b: appendString(appendString(nil, "alpha"), "beta")}
	if got := r.sorted("name", 3, 1); r.err != nil || !slices.Equal(got, []string{"", "alpha", "beta"}) {
		t.Errorf("sorted names: %q, %v", got, r.err)
	}
}
