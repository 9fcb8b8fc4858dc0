package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// RepairIndex finishes what a commit killed midway left in .git/index, and
// reports whether there was anything to finish. A commit holds the index
// lock from before it writes anything until its new index is in place; a
// lock of this package whose process is gone therefore means that the
// branch may have moved while the index still describes the previous
// commit for the paths that commit changed. Left alone, `git status` would
// list those files as deleted and untracked at once, and nothing would
// ever correct it: later commits only update the entries of their own
// paths. RepairIndex takes the lock over and rewrites the entries of the
// paths the current commit changed (against its first parent) from that
// commit; every other entry, with whatever was staged by hand, stays.
//
// It is cheap when there is nothing to repair (one lstat). A lock that a
// running git command holds is left alone: the next commit meets it.
func (r *Repo) RepairIndex() (bool, error) {
	indexPath := filepath.Join(r.gitDir, "index")
	if _, err := os.Lstat(indexPath + ".lock"); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	orphan, err := createLock(indexPath+".lock", r.gitDir, r.workDir)
	if errors.Is(err, ErrLocked) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer os.Remove(indexPath + ".lock")
	if !orphan {
		return false, nil
	}
	if err := r.repairIndex(indexPath); err != nil {
		return false, err
	}
	return true, nil
}

// repairIndex rewrites the index entries of the paths the current commit
// changed against its first parent (all of them for a root commit) from
// that commit: what a commit killed after moving the branch did not get to
// write. If the killed commit had not moved the branch yet, those entries
// already hold these values. An index that cannot be rewritten is rebuilt
// from the commit's tree. The caller holds r.mu and the index lock.
func (r *Repo) repairIndex(indexPath string) error {
	ref, err := r.headRef()
	if err != nil {
		return fmt.Errorf("repair index: read HEAD: %w", err)
	}
	head, err := r.readRef(ref)
	if err != nil {
		return fmt.Errorf("repair index: read %s: %w", ref, err)
	}
	if head.IsZero() {
		return nil
	}
	c, err := r.commit(head)
	if err != nil {
		return fmt.Errorf("repair index: read commit %s: %w", head, err)
	}
	var parentTree plumbing.Hash
	if len(c.ParentHashes) > 0 {
		p, err := r.commit(c.ParentHashes[0])
		if err != nil {
			return fmt.Errorf("repair index: read commit %s: %w", c.ParentHashes[0], err)
		}
		parentTree = p.TreeHash
	}
	paths, err := r.changedPaths(parentTree, c.TreeHash, "")
	if err != nil {
		return fmt.Errorf("repair index: %w", err)
	}
	root, err := r.tree(c.TreeHash)
	if err != nil {
		return fmt.Errorf("repair index: read tree %s: %w", c.TreeHash, err)
	}
	chs := make([]*change, 0, len(paths))
	for _, p := range paths {
		ch := &change{path: p, sub: p}
		e, err := root.FindEntry(p)
		switch {
		case errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound):
			ch.delete = true
		case err != nil:
			return fmt.Errorf("repair index: %s: %w", p, err)
		default:
			// No stat data: git compares the file's content the next time
			// it looks, rather than trusting it.
			ch.mode, ch.hash = e.Mode, e.Hash
			ch.entry = &indexEntry{name: p, hash: e.Hash, mode: e.Mode}
		}
		chs = append(chs, ch)
	}
	st, err := readIndex(indexPath)
	if err != nil {
		return fmt.Errorf("repair index: %w", err)
	}
	var rebuilt *indexFile
	if !st.usable() {
		if rebuilt, err = r.indexFromTree(c.TreeHash, nil); err != nil {
			return fmt.Errorf("repair index: %w", err)
		}
	}
	data, err := encodeIndex(st, rebuilt, chs)
	if err != nil {
		return fmt.Errorf("repair index: %w", err)
	}
	tmp, err := r.writeTemp("mira-index-*.tmp", func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("repair index: %w", err)
	}
	if err := install(tmp, indexPath); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("repair index: %w", err)
	}
	return nil
}
