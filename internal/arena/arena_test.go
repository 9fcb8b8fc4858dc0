package arena

import (
	"strings"
	"testing"
)

// TestCopies: what the arena returns equals what it was given, owns its
// bytes (a change to the original does not reach it), and a block filled
// up leaves the values already handed out as they were.
func TestCopies(t *testing.T) {
	var a Arena
	src := []byte("entries/proj/note/01ABC.md")
	s := a.String(string(src))
	b := a.Bytes(src)
	src[0] = 'X'
	if s != "entries/proj/note/01ABC.md" || string(b) != s {
		t.Fatalf("copies changed with their source: %q %q", s, b)
	}
	if a.String("") != "" || a.Bytes(nil) != nil || a.List(nil) != nil {
		t.Error("empty values should stay empty")
	}
	var got []string
	for i := range 3 * Block / 100 {
		got = append(got, a.String(strings.Repeat(string(rune('a'+i%26)), 100)))
	}
	for i, g := range got {
		if g != strings.Repeat(string(rune('a'+i%26)), 100) {
			t.Fatalf("string %d changed after more were added", i)
		}
	}
	big := strings.Repeat("z", Block)
	if a.String(big) != big {
		t.Error("a string larger than a block is not copied whole")
	}
	tags := []string{"x", "y"}
	l := a.List(tags)
	tags[0] = "changed"
	if len(l) != 2 || l[0] != "x" || l[1] != "y" || cap(l) != 2 {
		t.Errorf("List = %q (cap %d), want [x y] cap 2", l, cap(l))
	}
	// Appending to a list or to bytes must not write over the next one.
	l2 := a.List([]string{"p"})
	_ = append(l, "q")
	if l2[0] != "p" {
		t.Errorf("appending to one list changed the next: %q", l2)
	}
	b1 := a.Bytes([]byte("ab"))
	b2 := a.Bytes([]byte("cd"))
	_ = append(b1, 'z')
	if string(b2) != "cd" {
		t.Errorf("appending to one copy changed the next: %q", b2)
	}
}
