package code

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// maxFileSize is the largest file indexed: bigger ones are data or
// generated code, and would cost more than they help.
const maxFileSize = 1 << 20

// sniffSize is how much of a file is searched for a NUL byte to tell
// binary files from text.
const sniffSize = 8 << 10

// Reasons a file is left out of the index, as Status counts them.
const (
	skipBinary     = "binary"
	skipLarge      = "too large"
	skipUnreadable = "unreadable"
	skipSymlink    = "symbolic link"
)

// entry is a file found by the walk, with what lstat said of it.
type entry struct {
	path  string // slash path relative to the root
	size  int64
	mtime int64 // UnixNano
	link  bool  // a symbolic link: listed to be counted, never followed
}

// walker lists a project's files, honouring its .gitignore files.
type walker struct {
	root string
	skip string // an absolute directory not to enter (the index's, when inside root)
	warn func(string, error)
	out  []entry
}

// walk lists the files under root that the index should consider, in
// byte order of their paths.
func walk(ctx context.Context, root, skip string, warn func(string, error)) ([]entry, error) {
	w := &walker{root: root, skip: skip, warn: warn}
	ps := baseIgnores(root)
	if err := w.dir(ctx, "", ps); err != nil {
		return nil, err
	}
	// Directory order puts "a/b" before "a.go": sort by bytes.
	sort.Slice(w.out, func(i, j int) bool { return w.out[i].path < w.out[j].path })
	return w.out, nil
}

func (w *walker) dir(ctx context.Context, rel string, ps []gitignore.Pattern) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	if w.skip != "" && abs == w.skip {
		return nil
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		if rel == "" {
			return err
		}
		if w.warn != nil {
			w.warn(rel, err)
		}
		return nil
	}
	var domain []string
	if rel != "" {
		domain = strings.Split(rel, "/")
	}
	if more := readIgnore(filepath.Join(abs, ".gitignore"), domain); len(more) > 0 {
		ps = append(ps[:len(ps):len(ps)], more...)
	}
	m := gitignore.NewMatcher(ps)
	for _, e := range ents {
		name := e.Name()
		p := path.Join(rel, name)
		parts := append(domain[:len(domain):len(domain)], name)
		switch {
		case e.IsDir():
			if SkipDir(name) || m.Match(parts, true) {
				continue
			}
			if err := w.dir(ctx, p, ps); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if name == ".git" || m.Match(parts, false) { // .git: a linked work tree's pointer
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue // removed since the directory was read
			}
			w.out = append(w.out, entry{path: p, size: fi.Size(), mtime: fi.ModTime().UnixNano()})
		case e.Type()&fs.ModeSymlink != 0:
			// Not followed: a link may lead out of the project, or in a
			// loop. Listed, unless ignored, to be counted as skipped.
			if m.Match(parts, false) {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			w.out = append(w.out, entry{path: p, size: fi.Size(), mtime: fi.ModTime().UnixNano(), link: true})
		}
		// Special files (sockets, devices, pipes) are left out.
	}
	return nil
}

// maxIgnoreSize bounds the bytes read of one ignore file.
const maxIgnoreSize = 64 << 20

// readIgnore reads the patterns of a .gitignore in the tree; a missing or
// unreadable file has none, and so, as for git, has one that is a
// symbolic link (it may lead out of the project, to a device or a pipe).
func readIgnore(name string, domain []string) []gitignore.Pattern {
	return readPatterns(name, domain, false)
}

// readPatterns reads the patterns of an ignore file, following a
// symbolic link to it when follow is set; only a regular file is read.
func readPatterns(name string, domain []string, follow bool) []gitignore.Pattern {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	if fi, err := stat(name); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxIgnoreSize))
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		s := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(s, "#") || strings.TrimSpace(s) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(s, domain))
	}
	return ps
}

// isBinary reports whether b, a file's first bytes, hold a NUL.
func isBinary(b []byte) bool {
	if len(b) > sniffSize {
		b = b[:sniffSize]
	}
	return bytes.IndexByte(b, 0) >= 0
}
