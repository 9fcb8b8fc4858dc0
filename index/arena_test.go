package index

import (
	"strings"
	"testing"
	"time"
)

// TestArenaCopies: what the arena returns equals what it was given, owns
// its bytes (a change to the original does not reach it), and a block
// filled up leaves the strings already handed out as they were.
func TestArenaCopies(t *testing.T) {
	var a, terms arena
	src := []byte("entries/proj/note/01ABC.md")
	s := a.str(string(src))
	b := a.bytes(src)
	src[0] = 'X'
	if s != "entries/proj/note/01ABC.md" || string(b) != s {
		t.Fatalf("arena copies changed with their source: %q %q", s, b)
	}
	if a.str("") != "" || a.bytes(nil) != nil || a.list(nil) != nil {
		t.Error("empty values should stay empty")
	}
	// Fill several blocks; every string keeps its value.
	var got []string
	for i := range 3 * arenaBlock / 100 {
		got = append(got, a.str(strings.Repeat(string(rune('a'+i%26)), 100)))
	}
	for i, g := range got {
		if g != strings.Repeat(string(rune('a'+i%26)), 100) {
			t.Fatalf("string %d changed after more were added", i)
		}
	}
	big := strings.Repeat("z", arenaBlock)
	if a.str(big) != big {
		t.Error("a string larger than a block is not copied whole")
	}
	tags := []string{"x", "y"}
	l := a.list(tags)
	tags[0] = "changed"
	if len(l) != 2 || l[0] != "x" || l[1] != "y" || cap(l) != 2 {
		t.Errorf("list = %q (cap %d), want [x y] cap 2", l, cap(l))
	}
	// Appending to a list must not write over the next one.
	l2 := a.list([]string{"p"})
	_ = append(l, "q")
	if l2[0] != "p" {
		t.Errorf("appending to one list changed the next: %q", l2)
	}

	zone := time.FixedZone("X", 3600)
	d := Doc{Path: "entries/p/note/01A.md", ID: "01A", Kind: "note", Scope: "p", Text: "some words",
		Hash: "abc", Tags: []string{"t1"}, From: []string{"01B"}, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, zone)}
	lx := lexOf(&d, nil)
	in := a.vecInput(d, lx, &terms)
	want := newVecInput(d, lx)
	if in.path != want.path || in.id != want.id || in.text != want.text || in.content != want.content ||
		!in.created.Equal(want.created) || in.created.Location() != time.UTC || string(in.terms) != string(want.terms) ||
		len(in.tags) != 1 || in.tags[0] != "t1" || len(in.from) != 1 || in.from[0] != "01B" || in.lsum != want.lsum {
		t.Errorf("vecInput in the arena differs:\n got %+v\nwant %+v", in.vecDoc, want.vecDoc)
	}
}
