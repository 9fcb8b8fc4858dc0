package gitrepo

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
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

func (d *differ) entries(h plumbing.Hash) ([]object.TreeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	t, err := d.r.tree(h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	return t.Entries, nil
}

// trees compares the trees a and b (zero for empty) found at base. Both
// entry lists are in git's tree order, where a directory sorts as its name
// followed by "/", so one merge pass pairs them up; a file and a directory
// of the same name never pair, which reports a type change as a deletion
// and an addition.
func (d *differ) trees(a, b plumbing.Hash, base string) error {
	if a == b {
		return nil
	}
	ea, err := d.entries(a)
	if err != nil {
		return err
	}
	eb, err := d.entries(b)
	if err != nil {
		return err
	}
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		switch {
		case j == len(eb) || i < len(ea) && sortName(ea[i]) < sortName(eb[j]):
			if err := d.whole(ea[i], base); err != nil {
				return err
			}
			i++
		case i == len(ea) || sortName(eb[j]) < sortName(ea[i]):
			if err := d.whole(eb[j], base); err != nil {
				return err
			}
			j++
		default:
			x, y := ea[i], eb[j]
			i, j = i+1, j+1
			if x.Hash == y.Hash && x.Mode == y.Mode {
				continue
			}
			name := base + x.Name
			if x.Mode == filemode.Dir {
				if d.reaches(name + "/") {
					if err := d.trees(x.Hash, y.Hash, name+"/"); err != nil {
						return err
					}
				}
				continue
			}
			if d.wants(name) {
				d.paths = append(d.paths, name)
			}
		}
	}
	return nil
}

// whole reports an entry present on one side only: a file, or every file
// below a directory.
func (d *differ) whole(e object.TreeEntry, base string) error {
	name := base + e.Name
	if e.Mode != filemode.Dir {
		if d.wants(name) {
			d.paths = append(d.paths, name)
		}
		return nil
	}
	if !d.reaches(name + "/") {
		return nil
	}
	es, err := d.entries(e.Hash)
	if err != nil {
		return err
	}
	for _, c := range es {
		if err := d.whole(c, name+"/"); err != nil {
			return err
		}
	}
	return nil
}

func sortName(e object.TreeEntry) string {
	if e.Mode == filemode.Dir {
		return e.Name + "/"
	}
	return e.Name
}
