package code

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNotFound is returned when a reference names no definition the index
// knows.
var ErrNotFound = errors.New("not found")

// snippetLines is how many lines of a definition a card shows without its
// body.
const snippetLines = 5

// Card describes one definition. ref is a name ("Execute"), a qualified
// name ("Command.Execute", or a package's "run.Execute"), a place
// ("cmd/run.go:42": the innermost definition holding that line) or a
// file's definition ("cmd/run.go#Execute"). When several definitions
// match, the likeliest is chosen: outside tests, exported, a type or
// function before a method or variable, the shallowest path. With body the
// Snippet is the whole definition, else its first lines (at most 5).
func (ix *Index) Card(ref string, body bool) (Card, error) {
	d, _ := ix.derive()
	ids, err := ix.resolve(d, ref)
	if err != nil {
		return Card{}, err
	}
	return ix.card(d, ids[0], true, body), nil
}

// resolve returns the definitions ref names, likeliest first.
func (ix *Index) resolve(d *derived, ref string) ([]int32, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return nil, errors.New("empty symbol reference")
	}
	ix.mu.RLock()
	by := ix.byPath
	ix.mu.RUnlock()
	if p, name, ok := strings.Cut(ref, "#"); ok {
		f := by[cleanPath(p)]
		if f == nil {
			return nil, fmt.Errorf("%s: file %w in the index", p, ErrNotFound)
		}
		parent, n := splitQual(name)
		var ids []int32
		for _, id := range d.fileSyms(f) {
			s := d.syms[id].sym()
			if s.Name == n && (parent == "" || s.Parent == parent) {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("%s: no definition of %s in %s", ref, name, p)
		}
		d.sortByRelevance(ids)
		return ids, nil
	}
	if i := strings.LastIndexByte(ref, ':'); i > 0 {
		if line, err := strconv.Atoi(ref[i+1:]); err == nil {
			p := cleanPath(ref[:i])
			f := by[p]
			if f == nil {
				return nil, fmt.Errorf("%s: file %w in the index", ref[:i], ErrNotFound)
			}
			if line < 1 {
				return nil, fmt.Errorf("%s: line %d out of range", ref, line)
			}
			if f.file() == nil {
				return nil, fmt.Errorf("%s: no definitions in %s", ref, p)
			}
			id := d.innermost(f, line)
			if id < 0 {
				return nil, fmt.Errorf("%s: no definition holds line %d", ref, line)
			}
			return []int32{id}, nil
		}
	}
	if ids := d.named(ref); len(ids) > 0 {
		ids = append([]int32(nil), ids...)
		d.sortByRelevance(ids)
		return ids, nil
	}
	if parent, n := splitQual(ref); parent != "" {
		var byParent, byPkg []int32
		for _, id := range d.named(n) {
			r := d.syms[id]
			if s := r.sym(); s.Parent == parent || strings.HasSuffix(s.Parent, "."+parent) {
				byParent = append(byParent, id)
			} else if s.Parent == "" && inPackage(r.fi, parent) {
				byPkg = append(byPkg, id)
			}
		}
		for _, ids := range [][]int32{byParent, byPkg} {
			if len(ids) > 0 {
				d.sortByRelevance(ids)
				return ids, nil
			}
		}
	}
	return nil, fmt.Errorf("%s: symbol %w", ref, ErrNotFound)
}

// splitQual splits "Parent.Name" at its last dot.
func splitQual(s string) (string, string) {
	if i := strings.LastIndexByte(s, '.'); i > 0 && i < len(s)-1 {
		return s[:i], s[i+1:]
	}
	return "", s
}

// inPackage reports whether f belongs to the package or module called
// name: its Package, the last element of its module, or its directory's
// name.
func inPackage(fi *finfo, name string) bool {
	if p := fi.pkg; p != "" && (p == name || strings.HasSuffix(p, "."+name) || strings.HasSuffix(p, "::"+name)) {
		return true
	}
	m := fi.mod
	return fi.base == name || m == name || strings.HasSuffix(m, "/"+name) || strings.HasSuffix(m, "."+name)
}

func cleanPath(p string) string {
	p = path.Clean(filepath.ToSlash(strings.TrimSpace(p)))
	return strings.TrimPrefix(p, "./")
}

// readSource reads a project file as it is now, if it is still a regular
// file no bigger than the index takes: a file replaced by a symbolic link
// since it was indexed is not read through the link, which may lead out of
// the project.
func (ix *Index) readSource(rel string) ([]byte, error) {
	name := filepath.Join(ix.root, filepath.FromSlash(rel))
	fi, err := os.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxFileSize {
		return nil, fmt.Errorf("%s: no longer a regular file of at most %d bytes", rel, maxFileSize)
	}
	fh, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	// Replaced between the two looks: not the file that was checked.
	if fi2, err := fh.Stat(); err != nil || !os.SameFile(fi, fi2) {
		return nil, fmt.Errorf("%s: changed while being read", rel)
	}
	// Sized by the stat, one byte more to see a file that grew.
	b := make([]byte, fi.Size()+1)
	n, err := io.ReadFull(fh, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	if n > int(fi.Size()) {
		return nil, fmt.Errorf("%s: changed while being read", rel)
	}
	return b[:n], nil
}

// card describes definition id; with text it carries a snippet (the whole
// definition with body).
func (ix *Index) card(d *derived, id int32, text, body bool) Card {
	r := d.syms[id]
	return ix.cardOf(d, r.f, r.sym(), text, body)
}

// cardOf describes definition s of f; d need only know the modules.
func (ix *Index) cardOf(d *derived, f *fileRec, s *pSymbol, text, body bool) Card {
	c := Card{
		Kind: string(s.Kind), Name: s.Name, Parent: s.Parent,
		Module: d.module(f), Path: f.Path, Lang: f.Lang,
		Line: s.Line, EndLine: max(s.EndLine, s.Line),
		Signature: s.Signature, Doc: s.Doc,
	}
	if text {
		c.Stale = ix.isStale(f)
		end := c.EndLine
		if !body {
			end = min(end, c.Line+snippetLines-1)
		}
		c.Snippet = ix.lines(f, c.Line, end)
	}
	return c
}

// lines returns lines from..to (1-based, inclusive) of f as on disk now.
func (ix *Index) lines(f *fileRec, from, to int) string {
	b, err := ix.readSource(f.Path)
	if err != nil || from < 1 {
		return ""
	}
	var out []byte
	for n := 1; len(b) > 0 && n <= to; n++ {
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i+1], b[i+1:]
		} else {
			b = nil
		}
		if n >= from {
			out = append(out, l...)
		}
	}
	return strings.TrimRight(string(out), "\n")
}
