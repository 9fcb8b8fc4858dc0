// Package gittree reads git tree objects in their encoded form: the
// entries "<octal mode> <name>\x00<20-byte hash>" one after the other,
// sorted as git sorts them. Walking the bytes instead of decoding the
// tree into a list saves most of the time of a diff of large trees.
package gittree

import (
	"bytes"
	"cmp"
	"errors"

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
