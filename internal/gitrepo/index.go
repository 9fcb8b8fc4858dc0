package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// indexState is .git/index as Commit found it: raw when it can be
// rewritten as bytes (see rawIndex), else decoded.
type indexState struct {
	raw     *rawIndex
	decoded *indexFile // nil when raw, or when the file is missing or cannot be rewritten
	err     error      // why an existing file cannot be rewritten
	mtime   time.Time  // modification time of the file read, for racy entries
}

// usable reports whether the index read can be rewritten with the changes;
// if not, the index is rebuilt from the new commit's tree.
func (st *indexState) usable() bool { return st.raw != nil || st.decoded != nil }

// unmerged returns the path of an entry at a conflict stage, if any.
func (st *indexState) unmerged() string {
	if st.raw != nil {
		return st.raw.unmerged
	}
	if st.decoded != nil {
		for i := range st.decoded.entries {
			if e := &st.decoded.entries[i]; e.stage() != 0 {
				return e.name
			}
		}
	}
	return ""
}

// readIndex reads .git/index. A missing file, or one that cannot be
// rewritten faithfully (split index, sparse index, an unknown mandatory
// extension, another version, a damaged file), is not an error: the caller
// then rebuilds the index from the new commit's tree.
func readIndex(name string) (indexState, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return indexState{}, nil
	} else if err != nil {
		return indexState{}, fmt.Errorf("read index: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return indexState{}, fmt.Errorf("read index: %w", err)
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return indexState{}, fmt.Errorf("read index: %w", err)
	}
	if raw, ok := parseRawIndex(data); ok {
		return indexState{raw: raw, mtime: fi.ModTime()}, nil
	}
	idx, err := decodeIndex(data)
	return indexState{decoded: idx, err: err, mtime: fi.ModTime()}, nil
}

// encodeIndex returns the bytes of the index for the new commit: rebuilt
// if it is not nil, else the old index with the changed paths updated. The
// caller writes them to a temporary file and renames that over .git/index
// while holding .git/index.lock, rather than writing into the lock file as
// git does, so that the lock keeps its marker until it is removed (see
// createLock).
func encodeIndex(st indexState, rebuilt *indexFile, chs []*change) ([]byte, error) {
	idx := rebuilt
	if idx == nil && st.raw != nil {
		return st.raw.update(chs, st.mtime)
	}
	if idx == nil {
		idx = st.decoded
		updateEntries(idx, chs, st.mtime)
	}
	return idx.encode()
}

// updateEntries replaces the entries of the changed paths in idx, which is
// sorted by name as git writes it. Besides the path itself it drops the
// entries a change makes impossible: everything below a path that is now a
// file or gone, and a file standing where a path now needs a directory.
// Kept entries that were racily clean in the old index (modified in the
// same second the index was written, so their stat data cannot prove them
// clean) are smudged by zeroing their size, which makes git compare their
// content; git does the same when it rewrites an index.
func updateEntries(idx *indexFile, chs []*change, oldMtime time.Time) {
	es := idx.entries
	drop, added := changedEntries(len(es), func(i int) string { return es[i].name }, chs)

	// Both lists are sorted and share no name, so merging them keeps the
	// order without sorting the whole index again.
	kept := make([]indexEntry, 0, len(es)+len(added))
	for i := range es {
		if drop[i] {
			continue
		}
		e := &es[i]
		for len(added) > 0 && added[0].name < e.name {
			kept = append(kept, *added[0])
			added = added[1:]
		}
		if e.size != 0 && int64(e.mtimeSec) >= oldMtime.Unix() {
			e.size = 0
		}
		kept = append(kept, *e)
	}
	for _, a := range added {
		kept = append(kept, *a)
	}
	idx.entries = kept
}

// changedEntries returns which of an index's n entries (sorted by name,
// entry i named name(i)) the changes replace or make impossible, and the
// entries the changes add, sorted by name (see updateEntries).
func changedEntries(n int, name func(int) string, chs []*change) (drop []bool, added []*indexEntry) {
	find := func(s string) int {
		return sort.Search(n, func(i int) bool { return name(i) >= s })
	}
	// dropAt drops the entries named s, all stages of it.
	drop = make([]bool, n)
	dropAt := func(s string) {
		for i := find(s); i < n && name(i) == s; i++ {
			drop[i] = true
		}
	}
	for _, c := range chs {
		dropAt(c.path)
		dir := c.path + "/"
		for i := find(dir); i < n && strings.HasPrefix(name(i), dir); i++ {
			drop[i] = true
		}
		if c.delete {
			continue
		}
		added = append(added, c.entry)
		for p := path.Dir(c.path); p != "."; p = path.Dir(p) {
			dropAt(p)
		}
	}
	slices.SortFunc(added, func(a, b *indexEntry) int { return strings.Compare(a.name, b.name) })
	return drop, added
}

// indexFromTree builds a whole index from the tree root. Entries other than
// the changed paths carry no stat data, so git compares their content the
// next time it looks instead of trusting them blindly.
func (r *Repo) indexFromTree(root plumbing.Hash, chs []*change) (*indexFile, error) {
	fresh := make(map[string]*indexEntry, len(chs))
	for _, c := range chs {
		if !c.delete {
			fresh[c.path] = c.entry
		}
	}
	idx := &indexFile{}
	var walk func(h plumbing.Hash, base string) error
	walk = func(h plumbing.Hash, base string) error {
		t, err := r.tree(h)
		if err != nil {
			return fmt.Errorf("read tree %s: %w", h, err)
		}
		for _, e := range t.Entries {
			name := base + e.Name
			if e.Mode == filemode.Dir {
				if err := walk(e.Hash, name+"/"); err != nil {
					return err
				}
				continue
			}
			if fe, ok := fresh[name]; ok {
				idx.entries = append(idx.entries, *fe)
				continue
			}
			idx.entries = append(idx.entries, indexEntry{name: name, hash: e.Hash, mode: e.Mode})
		}
		return nil
	}
	if err := walk(root, ""); err != nil {
		return nil, fmt.Errorf("rebuild index: %w", err)
	}
	// Trees order a directory as if its name ended in a slash; the index
	// orders plain paths.
	slices.SortFunc(idx.entries, func(a, b indexEntry) int { return strings.Compare(a.name, b.name) })
	return idx, nil
}
