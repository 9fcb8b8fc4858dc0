package gittree

import (
	"io"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// encode returns a tree of the entries as go-git encodes it, entries in
// git's order.
func encode(t *testing.T, entries []object.TreeEntry) []byte {
	t.Helper()
	obj := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		t.Fatal(err)
	}
	rd, err := obj.Reader()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWalkAndOrder(t *testing.T) {
	h := func(c byte) plumbing.Hash {
		var x plumbing.Hash
		x[0] = c
		return x
	}
	// Git's order: "a" as a directory sorts as "a/", after "a.go" and
	// "a-b" ('/' is after '.' and '-'), before "a0".
	entries := []object.TreeEntry{
		{Name: "a-b", Mode: filemode.Regular, Hash: h(1)},
		{Name: "a.go", Mode: filemode.Executable, Hash: h(2)},
		{Name: "a", Mode: filemode.Dir, Hash: h(3)},
		{Name: "a0", Mode: filemode.Symlink, Hash: h(4)},
		{Name: "b", Mode: filemode.Submodule, Hash: h(5)},
	}
	w := NewWalk(encode(t, entries))
	var got []Entry
	for {
		e, ok, err := w.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, e)
	}
	if len(got) != len(entries) {
		t.Fatalf("%d entries, want %d", len(got), len(entries))
	}
	for i, e := range entries {
		g := got[i]
		if string(g.Name) != e.Name || g.Mode != uint32(e.Mode) || g.Hash != e.Hash || g.Dir() != (e.Mode == filemode.Dir) {
			t.Errorf("entry %d = %s %o %s, want %s %o %s", i, g.Name, g.Mode, g.Hash, e.Name, e.Mode, e.Hash)
		}
	}
	if !slices.IsSortedFunc(got, Compare) {
		t.Error("git's order is not Compare's")
	}
	file := Entry{Name: []byte("a"), Mode: uint32(filemode.Regular)}
	dir := Entry{Name: []byte("a"), Mode: uint32(filemode.Dir)}
	if Compare(file, dir) >= 0 || Compare(dir, file) <= 0 || Compare(dir, dir) != 0 {
		t.Error("a file sorts before the directory of its name")
	}
}

func TestWalkMalformed(t *testing.T) {
	for _, data := range []string{"100644", "100644 name", "10x644 a\x00" + string(make([]byte, 20)), " a\x00", "100644 \x00" + string(make([]byte, 20)), "100644 a\x00short"} {
		w := NewWalk([]byte(data))
		if _, _, err := w.Next(); err == nil {
			t.Errorf("%q: no error", data)
		}
	}
}

func FuzzWalk(f *testing.F) {
	f.Add([]byte("100644 a\x00aaaaaaaaaaaaaaaaaaaa40000 b\x00bbbbbbbbbbbbbbbbbbbb"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w := NewWalk(data)
		var prev *Entry
		for range len(data) + 1 {
			e, ok, err := w.Next()
			if err != nil || !ok {
				return
			}
			if prev != nil {
				Compare(*prev, e)
			}
			prev = &e
		}
		t.Fatal("more entries than bytes")
	})
}
