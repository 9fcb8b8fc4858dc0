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

// TestDiff: files added, removed and changed (content or mode) are
// reported with their sides, a directory on one side only file by file,
// a file that became a directory as a removal and additions, unchanged
// subtrees and those enter refuses are not read.
func TestDiff(t *testing.T) {
	objs := map[plumbing.Hash][]byte{}
	tree := func(entries ...object.TreeEntry) plumbing.Hash {
		slices.SortFunc(entries, func(a, b object.TreeEntry) int {
			return Compare(Entry{Name: []byte(a.Name), Mode: uint32(a.Mode)}, Entry{Name: []byte(b.Name), Mode: uint32(b.Mode)})
		})
		b := encode(t, entries)
		h := plumbing.ComputeHash(plumbing.TreeObject, b)
		objs[h] = b
		return h
	}
	blob := func(s string) plumbing.Hash { return plumbing.ComputeHash(plumbing.BlobObject, []byte(s)) }
	file := func(name, body string) object.TreeEntry {
		return object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: blob(body)}
	}
	dir := func(name string, h plumbing.Hash) object.TreeEntry {
		return object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h}
	}
	same := tree(file("x.go", "x"))
	old := tree(file("a.go", "1"), file("b.go", "2"), file("c", "3"), dir("same", same),
		dir("gone", tree(file("g1", "g"), dir("sub", tree(file("g2", "h"))))), dir("skip", tree(file("s", "1"))))
	new := tree(file("a.go", "1"), object.TreeEntry{Name: "b.go", Mode: filemode.Executable, Hash: blob("2")},
		dir("c", tree(file("d", "4"))), dir("same", same), file("new.go", "5"), dir("skip", tree(file("s", "2"))))
	var read []plumbing.Hash
	readTree := func(h plumbing.Hash) ([]byte, error) {
		if h.IsZero() {
			return nil, nil
		}
		read = append(read, h)
		return objs[h], nil
	}
	var got []string
	err := Diff(old, new, readTree, func(dir string) bool { return dir != "skip/" }, func(p string, o, n Entry) {
		switch {
		case o.Mode == 0:
			got = append(got, "+"+p)
		case n.Mode == 0:
			got = append(got, "-"+p)
		default:
			got = append(got, "~"+p)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"~b.go", "-c", "+c/d", "-gone/g1", "-gone/sub/g2", "+new.go"}
	if !slices.Equal(got, want) {
		t.Errorf("Diff = %q, want %q", got, want)
	}
	if slices.Contains(read, same) {
		t.Error("an unchanged subtree was read")
	}
	got = nil
	if err := Diff(plumbing.ZeroHash, same, readTree, nil, func(p string, o, n Entry) { got = append(got, p) }); err != nil || !slices.Equal(got, []string{"x.go"}) {
		t.Errorf("Diff from the empty tree = %q, %v; want [x.go]", got, err)
	}
	objs[same] = []byte("100644 x.go")
	if err := Diff(plumbing.ZeroHash, same, readTree, nil, func(string, Entry, Entry) {}); err == nil {
		t.Error("a malformed tree gave no error")
	}
}
