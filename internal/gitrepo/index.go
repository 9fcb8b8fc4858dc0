package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// indexState is .git/index as Commit found it.
type indexState struct {
	decoded *index.Index // nil when the file is missing or go-git cannot read it
	mtime   time.Time    // modification time of the file read, for racy entries
}

// readIndex reads .git/index. A missing file, or one in a format go-git
// cannot decode (split index, sparse index, an unknown mandatory extension,
// a newer version), is not an error: the caller then rebuilds the index from
// the new commit's tree.
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
	if _, err := f.ReadAt(data, 0); err != nil {
		return indexState{}, fmt.Errorf("read index: %w", err)
	}
	return indexState{decoded: decodeIndex(data), mtime: fi.ModTime()}, nil
}

// decodeIndex decodes an index, or returns nil if go-git cannot. A damaged
// index (a power failure can leave one) must lead to a rebuild, so even a
// panic of the decoder on bytes it does not expect is caught.
func decodeIndex(data []byte) (idx *index.Index) {
	defer func() {
		if recover() != nil {
			idx = nil
		}
	}()
	idx = &index.Index{}
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(idx); err != nil {
		return nil
	}
	return idx
}

// encodeIndex returns the bytes of the index for the new commit: rebuilt
// if it is not nil, else the old index with the changed paths updated. The
// caller writes them to a temporary file and renames that over .git/index
// while holding .git/index.lock, rather than writing into the lock file as
// git does, so that the lock keeps its marker until it is removed (see
// createLock).
func encodeIndex(st indexState, rebuilt *index.Index, chs []*change) ([]byte, error) {
	idx := rebuilt
	if idx == nil {
		idx = st.decoded
		updateEntries(idx, chs, st.mtime)
	}
	// Extensions are not written by go-git's encoder; dropping the cache
	// tree is what keeps it from going stale.
	idx.Cache, idx.ResolveUndo, idx.EndOfIndexEntry = nil, nil, nil
	if idx.Version < 2 || idx.Version > 4 {
		idx.Version = 2
	}
	if idx.Version == 2 {
		for _, e := range idx.Entries {
			if e.IntentToAdd || e.SkipWorktree {
				idx.Version = 3 // extended flags need version 3
				break
			}
		}
	}
	var buf bytes.Buffer
	buf.Grow(len(idx.Entries) * 100)
	if err := index.NewEncoder(&buf).Encode(idx); err != nil {
		return nil, fmt.Errorf("encode index: %w", err)
	}
	return buf.Bytes(), nil
}

// updateEntries replaces the entries of the changed paths in idx, which is
// sorted by name as git writes it. Besides the path itself it drops the
// entries a change makes impossible: everything below a path that is now a
// file or gone, and a file standing where a path now needs a directory.
// Kept entries that were racily clean in the old index (modified in the
// same second the index was written, so their stat data cannot prove them
// clean) are smudged by zeroing their size, which makes git compare their
// content; git does the same when it rewrites an index.
func updateEntries(idx *index.Index, chs []*change, oldMtime time.Time) {
	es := idx.Entries
	if !sort.SliceIsSorted(es, func(i, j int) bool { return es[i].Name < es[j].Name }) {
		sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	}
	find := func(name string) int {
		return sort.Search(len(es), func(i int) bool { return es[i].Name >= name })
	}
	drop := make(map[int]bool)
	for _, c := range chs {
		if i := find(c.path); i < len(es) && es[i].Name == c.path {
			drop[i] = true
		}
		dir := c.path + "/"
		for i := find(dir); i < len(es) && strings.HasPrefix(es[i].Name, dir); i++ {
			drop[i] = true
		}
		if c.delete {
			continue
		}
		for p := path.Dir(c.path); p != "."; p = path.Dir(p) {
			if i := find(p); i < len(es) && es[i].Name == p {
				drop[i] = true
			}
		}
	}
	kept := make([]*index.Entry, 0, len(es)+len(chs))
	for i, e := range es {
		if drop[i] {
			continue
		}
		if e.Size != 0 && !e.ModifiedAt.IsZero() && e.ModifiedAt.Unix() >= oldMtime.Unix() {
			e.Size = 0
		}
		kept = append(kept, e)
	}
	for _, c := range chs {
		if !c.delete {
			kept = append(kept, c.entry)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	idx.Entries = kept
}

// indexFromTree builds a whole index from the tree root. Entries other than
// the changed paths carry no stat data, so git compares their content the
// next time it looks instead of trusting them blindly.
func (r *Repo) indexFromTree(root plumbing.Hash, chs []*change) (*index.Index, error) {
	fresh := make(map[string]*index.Entry, len(chs))
	for _, c := range chs {
		if !c.delete {
			fresh[c.path] = c.entry
		}
	}
	idx := &index.Index{Version: 2}
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
				idx.Entries = append(idx.Entries, fe)
				continue
			}
			idx.Entries = append(idx.Entries, &index.Entry{Name: name, Hash: e.Hash, Mode: e.Mode})
		}
		return nil
	}
	if err := walk(root, ""); err != nil {
		return nil, fmt.Errorf("rebuild index: %w", err)
	}
	sort.Slice(idx.Entries, func(i, j int) bool { return idx.Entries[i].Name < idx.Entries[j].Name })
	return idx, nil
}
