package gitrepo

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/miramem/mira/internal/gittree"
)

// Diff returns, sorted, the slash-separated paths of the files added,
// modified (content or mode) or deleted between the commits from and to,
// limited to paths starting with prefix ("" for all, "entries/" for a
// directory). An empty from stands for the empty tree, so Diff("", to, p)
// lists every file of to under p; an empty to likewise.
//
// Only subtrees whose hashes differ are read, so the cost follows the number
// of changed paths, not the size of the store. A path that changed from a
// file to a directory is reported as the file plus every file below the
// directory.
func (r *Repo) Diff(from, to, prefix string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, err := r.commitTree(from)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	b, err := r.commitTree(to)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	d := differ{r: r, prefix: prefix}
	if err := d.trees(a, b, ""); err != nil {
		return nil, fmt.Errorf("diff %s..%s: %w", short(from), short(to), err)
	}
	sort.Strings(d.paths)
	return d.paths, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "(empty)"
	}
	return h
}

// commitTree returns the tree of the commit named by a full hash, or zero
// for "".
func (r *Repo) commitTree(s string) (plumbing.Hash, error) {
	if s == "" {
		return plumbing.ZeroHash, nil
	}
	h, ok := parseHash(strings.ToLower(s))
	if !ok {
		return plumbing.ZeroHash, fmt.Errorf("%q is not a full commit hash", s)
	}
	c, err := r.commit(h)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read commit %s: %w", s, err)
	}
	return c.TreeHash, nil
}

type differ struct {
	r      *Repo
	prefix string
	paths  []string
}

// wants reports whether a file path is under the prefix.
func (d *differ) wants(p string) bool { return strings.HasPrefix(p, d.prefix) }

// reaches reports whether the directory dir (ending in "/") may hold paths
// under the prefix.
func (d *differ) reaches(dir string) bool {
	return strings.HasPrefix(dir, d.prefix) || strings.HasPrefix(d.prefix, dir)
}

// trees compares the trees a and b (zero for empty) found at base. Both
// entry lists are in git's tree order, where a directory sorts as its name
// followed by "/", so one merge pass pairs them up; a file and a directory
// of the same name never pair, which reports a type change as a deletion
// and an addition.
//
// The trees are walked in their encoded form: a store's entry directories
// hold thousands of files each, and decoding such a tree into entries took
// most of a diff's time.
func (d *differ) trees(a, b plumbing.Hash, base string) error {
	if a == b {
		return nil
	}
	ra, err := d.r.rawTree(a)
	if err != nil {
		return err
	}
	rb, err := d.r.rawTree(b)
	if err != nil {
		return err
	}
	ta, tb := gittree.NewWalk(ra), gittree.NewWalk(rb)
	x, okA, err := ta.Next()
	if err != nil {
		return fmt.Errorf("read tree %s: %w", a, err)
	}
	y, okB, err := tb.Next()
	if err != nil {
		return fmt.Errorf("read tree %s: %w", b, err)
	}
	for okA || okB {
		c := 0
		switch {
		case !okB:
			c = -1
		case !okA:
			c = 1
		default:
			c = gittree.Compare(x, y)
		}
		switch {
		case c < 0:
			if err := d.whole(x, base); err != nil {
				return err
			}
		case c > 0:
			if err := d.whole(y, base); err != nil {
				return err
			}
		case x.Hash != y.Hash || x.Mode != y.Mode:
			name := base + string(x.Name)
			if x.Dir() {
				if d.reaches(name + "/") {
					if err := d.trees(x.Hash, y.Hash, name+"/"); err != nil {
						return err
					}
				}
			} else if d.wants(name) {
				d.paths = append(d.paths, name)
			}
		}
		if c <= 0 {
			if x, okA, err = ta.Next(); err != nil {
				return fmt.Errorf("read tree %s: %w", a, err)
			}
		}
		if c >= 0 {
			if y, okB, err = tb.Next(); err != nil {
				return fmt.Errorf("read tree %s: %w", b, err)
			}
		}
	}
	return nil
}

// whole reports an entry present on one side only: a file, or every file
// below a directory.
func (d *differ) whole(e gittree.Entry, base string) error {
	name := base + string(e.Name)
	if !e.Dir() {
		if d.wants(name) {
			d.paths = append(d.paths, name)
		}
		return nil
	}
	if !d.reaches(name + "/") {
		return nil
	}
	raw, err := d.r.rawTree(e.Hash)
	if err != nil {
		return err
	}
	w := gittree.NewWalk(raw)
	for {
		c, ok, err := w.Next()
		if err != nil {
			return fmt.Errorf("read tree %s: %w", e.Hash, err)
		}
		if !ok {
			return nil
		}
		if err := d.whole(c, name+"/"); err != nil {
			return err
		}
	}
}

// rawTree returns the encoded entries of a tree object (none for the zero
// hash, the empty tree), retrying once with the pack list read again, as
// tree does.
func (r *Repo) rawTree(h plumbing.Hash) ([]byte, error) {
	if h.IsZero() {
		return nil, nil
	}
	if b, ok := cachedTree(h); ok {
		return b, nil
	}
	read := func() ([]byte, error) {
		o, err := r.storage.EncodedObject(plumbing.TreeObject, h)
		if err != nil {
			return nil, err
		}
		rd, err := o.Reader()
		if err != nil {
			return nil, err
		}
		defer rd.Close()
		buf := make([]byte, o.Size())
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	b, err := read()
	if err != nil {
		r.storage.Reindex()
		b, err = read()
	}
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	cacheTree(h, b)
	return b, nil
}
