package rank

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An encoding of an earlier version is refused (the index rebuilds it),
// and so are terms out of order, which binary search would miss.
func TestDecodeRefusesOldAndUnsorted(t *testing.T) {
	b, err := build(tiny()).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	old := slices.Clone(b)
	old[len(magic)] = 2
	if err := New().UnmarshalBinary(old); !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("version 2: %v, want a version error", err)
	}
	tw := newTable(2, 0)
	for _, s := range []string{"beta", "alpha"} {
		tw.data = append(tw.data, s...)
		tw.end()
	}
	tab, err := parseTable(tw.bytes(), 2, "terms")
	if err != nil {
		t.Fatal(err)
	}
	if got := block(tab); !slices.Equal(got, []string{"beta", "alpha"}) {
		t.Fatalf("block = %q", got)
	}
	// Offsets that go back, or do not end at the end, are refused.
	bad := tw.bytes()
	binary.LittleEndian.PutUint32(bad[4:], 10)
	if _, err := parseTable(bad, 2, "terms"); !errors.Is(err, errCorrupt) {
		t.Errorf("offsets out of order: %v", err)
	}
	if _, err := parseTable(append(tw.bytes(), 'x'), 2, "terms"); !errors.Is(err, errCorrupt) {
		t.Errorf("trailing bytes: %v", err)
	}
}

// A decoded model answers from its encoded form without decoding it
// whole, and answers as the model it was made from; the first change
// decodes the rest.
func TestDecodeLazily(t *testing.T) {
	m := build(tiny())
	want := snapshot(m)
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	n := New()
	if err := n.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if n.lz == nil || n.post != nil || n.nameStr != nil {
		t.Fatal("decoded whole on opening")
	}
	n.Files(Query{Text: "persistent flags"})
	if n.lz == nil || len(n.lz.posts) == 0 || len(n.lz.posts) > 3 {
		t.Errorf("a query decoded %d terms' postings, want its own", len(n.lz.posts))
	}
	if d := cmp.Diff(want, snapshot(n)); d != "" {
		t.Errorf("lazily decoded model differs (-want +got):\n%s", d)
	}
	if n.lz == nil {
		t.Error("queries decoded the model whole")
	}
	n.Remove("nothing.go")
	if n.lz == nil {
		t.Error("removing a file the model does not hold decoded it whole")
	}
	n.Remove("util.go")
	m.Remove("util.go")
	if n.lz != nil {
		t.Error("a change left the model lazy")
	}
	if d := cmp.Diff(snapshot(m), snapshot(n)); d != "" {
		t.Errorf("changed model differs (-want +got):\n%s", d)
	}
	if n.Err() != nil {
		t.Errorf("Err = %v", n.Err())
	}
}

// Damage in a part decoded lazily is found when a query reaches it: the
// query answers without it, Err reports it, and the first change gives an
// empty model rather than a wrong one.
func TestDecodeLazyDamage(t *testing.T) {
	b, err := build(tiny()).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	probe := New()
	if err := probe.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	t0, ok := probe.findTerm("flag")
	if !ok {
		t.Fatal("no term flag")
	}
	// Point the term's first file posting past the last file.
	e := probe.lz.post.entry(t0)
	i := bytesIndex(b, e)
	if i < 0 || e[0] == 0 {
		t.Fatalf("posting bytes not found (%d) or empty list", i)
	}
	c := slices.Clone(b)
	c[i+1] = 100 // the first id delta: far beyond the 5 files
	n := New()
	if err := n.UnmarshalBinary(c); err != nil {
		t.Fatalf("damage in postings found on opening: %v", err)
	}
	hits := n.Files(Query{Text: "flags"})
	if n.Err() == nil || !errors.Is(n.Err(), errCorrupt) {
		t.Errorf("Err = %v, want the damage", n.Err())
	}
	for _, h := range hits {
		if h.Path == "" {
			t.Errorf("hit without a path: %+v", hits)
		}
	}
	n.Remove("util.go")
	if n.Len() != 0 || n.Err() == nil {
		t.Errorf("after a change: %d files, Err %v; want an empty model and the damage", n.Len(), n.Err())
	}
}

func bytesIndex(b, sub []byte) int { return strings.Index(string(b), string(sub)) }
