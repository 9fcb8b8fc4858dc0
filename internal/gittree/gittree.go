// Package gittree reads git tree objects in their encoded form: the
// entries "<octal mode> <name>\x00<20-byte hash>" one after the other,
// sorted as git sorts them. Walking the bytes instead of decoding the
// tree into a list saves most of the time of a diff of large trees.
package gittree

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Entry is a tree entry as encoded: its name points into the tree's
// bytes.
type Entry struct {
	Mode uint32
	Name []byte
	Hash plumbing.Hash
}

// Dir reports whether the entry is a subtree.
func (e Entry) Dir() bool { return e.Mode == uint32(filemode.Dir) }

// Walk reads the entries of an encoded tree in order.
type Walk struct{ data []byte }

// NewWalk returns a Walk over the encoded tree data.
func NewWalk(data []byte) Walk { return Walk{data: data} }

// Next returns the next entry, or ok false at the end.
func (w *Walk) Next() (e Entry, ok bool, err error) {
	if len(w.data) == 0 {
		return e, false, nil
	}
	sp := bytes.IndexByte(w.data, ' ')
	if sp <= 0 {
		return e, false, errors.New("malformed tree entry")
	}
	for _, c := range w.data[:sp] {
		if c < '0' || c > '7' {
			return e, false, errors.New("malformed tree entry mode")
		}
		e.Mode = e.Mode<<3 | uint32(c-'0')
	}
	rest := w.data[sp+1:]
	nul := bytes.IndexByte(rest, 0)
	if nul <= 0 || len(rest) < nul+1+len(e.Hash) {
		return e, false, errors.New("malformed tree entry")
	}
	e.Name = rest[:nul]
	copy(e.Hash[:], rest[nul+1:])
	w.data = rest[nul+1+len(e.Hash):]
	return e, true, nil
}

// Compare orders two entries as git sorts a tree: by name, a directory's
// name followed by "/". Two trees' entries can thus be paired in one
// merge pass; a file and a directory of the same name never pair.
func Compare(a, b Entry) int {
	n := min(len(a.Name), len(b.Name))
	if c := bytes.Compare(a.Name[:n], b.Name[:n]); c != 0 {
		return c
	}
	return cmp.Compare(after(a, n), after(b, n))
}

// after is the byte of e's sort name at i, or -1 past its end.
func after(e Entry, i int) int {
	switch {
	case i < len(e.Name):
		return int(e.Name[i])
	case i == len(e.Name) && e.Dir():
		return '/'
	}
	return -1
}

// Diff compares the trees a and b (the zero hash for the empty tree) and
// calls change for every file that differs, in git's tree order: with old
// zero (Mode 0) for a file only in b, new zero for one only in a, else
// both, whose hash or mode differ. read returns a tree's encoded entries
// (none for the zero hash). enter, unless nil, says whether to look below
// a directory, named by its path and a final "/": below one it refuses,
// nothing is read or reported.
//
// Only subtrees whose hashes differ are read, so the cost follows the
// number of changed paths, not the size of the trees. Both entry lists
// are in git's order, so one merge pass pairs them up; a file and a
// directory of the same name never pair, which reports a type change as
// a removal and an addition.
func Diff(a, b plumbing.Hash, read func(plumbing.Hash) ([]byte, error), enter func(dir string) bool, change func(path string, old, new Entry)) error {
	d := differ{read: read, enter: enter, change: change}
	return d.trees(a, b, "")
}

type differ struct {
	read   func(plumbing.Hash) ([]byte, error)
	enter  func(dir string) bool
	change func(path string, old, new Entry)
}

func (d *differ) enters(dir string) bool { return d.enter == nil || d.enter(dir) }

// trees compares the trees a and b found at base.
func (d *differ) trees(a, b plumbing.Hash, base string) error {
	if a == b {
		return nil
	}
	ta, err := d.walk(a)
	if err != nil {
		return err
	}
	tb, err := d.walk(b)
	if err != nil {
		return err
	}
	x, okA, err := ta.next()
	if err != nil {
		return err
	}
	y, okB, err := tb.next()
	if err != nil {
		return err
	}
	for okA || okB {
		c := 0
		switch {
		case !okB:
			c = -1
		case !okA:
			c = 1
		default:
			c = Compare(x, y)
		}
		switch {
		case c < 0:
			err = d.whole(x, base, true)
		case c > 0:
			err = d.whole(y, base, false)
		case x.Hash != y.Hash || x.Mode != y.Mode:
			name := base + string(x.Name)
			if !x.Dir() {
				d.change(name, x, y)
			} else if dir := name + "/"; d.enters(dir) {
				err = d.trees(x.Hash, y.Hash, dir)
			}
		}
		if err != nil {
			return err
		}
		if c <= 0 {
			if x, okA, err = ta.next(); err != nil {
				return err
			}
		}
		if c >= 0 {
			if y, okB, err = tb.next(); err != nil {
				return err
			}
		}
	}
	return nil
}

// whole reports an entry found on one side only, the old one or the new:
// a file, or every file below a directory.
func (d *differ) whole(e Entry, base string, old bool) error {
	name := base + string(e.Name)
	if !e.Dir() {
		if old {
			d.change(name, e, Entry{})
		} else {
			d.change(name, Entry{}, e)
		}
		return nil
	}
	dir := name + "/"
	if !d.enters(dir) {
		return nil
	}
	w, err := d.walk(e.Hash)
	if err != nil {
		return err
	}
	for {
		c, ok, err := w.next()
		if err != nil || !ok {
			return err
		}
		if err := d.whole(c, dir, old); err != nil {
			return err
		}
	}
}

// treeWalk is a Walk whose errors name the tree.
type treeWalk struct {
	Walk
	h plumbing.Hash
}

func (d *differ) walk(h plumbing.Hash) (treeWalk, error) {
	b, err := d.read(h)
	return treeWalk{NewWalk(b), h}, err
}

func (w *treeWalk) next() (Entry, bool, error) {
	e, ok, err := w.Next()
	if err != nil {
		return e, false, fmt.Errorf("read tree %s: %w", w.h, err)
	}
	return e, ok, nil
}
