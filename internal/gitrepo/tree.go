package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// This file is the plumbing a merge done outside git needs: reading trees
// and blobs of any commit, writing blobs, trees and commits without
// touching the work tree or any ref, and finding merge bases.

// Refresh makes objects and packs that another process (git fetch) wrote
// visible to the repository's readers.
func (r *Repo) Refresh() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.storage.Reindex()
}

// Ref returns the commit a ref such as refs/remotes/origin/main points to,
// or "" when it does not exist.
func (r *Repo) Ref(name string) (string, error) {
	if !validRefName(name) {
		return "", fmt.Errorf("invalid ref name %q", name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.readRef(name)
	if err != nil || h.IsZero() {
		return "", err
	}
	return h.String(), nil
}

// TreeOf returns the tree hash of a commit; "" stands for no commit and
// gives "" (the empty tree).
func (r *Repo) TreeOf(commit string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.commitTree(commit)
	if err != nil || h.IsZero() {
		return "", err
	}
	return h.String(), nil
}

// Parents returns the parents of a commit.
func (r *Repo) Parents(commit string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := parseHash(strings.ToLower(commit))
	if !ok {
		return nil, fmt.Errorf("%q is not a full commit hash", commit)
	}
	c, err := r.commit(h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", commit, err)
	}
	out := make([]string, len(c.ParentHashes))
	for i, p := range c.ParentHashes {
		out[i] = p.String()
	}
	return out, nil
}

// DiffTrees is Diff between two trees (hashes as TreeOf returns them, ""
// for the empty tree) rather than commits.
func (r *Repo) DiffTrees(a, b string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ha, hb := plumbing.ZeroHash, plumbing.ZeroHash
	for _, x := range []struct {
		s string
		h *plumbing.Hash
	}{{a, &ha}, {b, &hb}} {
		if x.s == "" {
			continue
		}
		h, ok := parseHash(x.s)
		if !ok {
			return nil, fmt.Errorf("%q is not a full tree hash", x.s)
		}
		*x.h = h
	}
	paths, err := r.changedPaths(ha, hb, "")
	if err != nil {
		return nil, fmt.Errorf("diff trees %s..%s: %w", short(a), short(b), err)
	}
	return paths, nil
}

// File is a file recorded in a tree: its blob and mode.
type File struct {
	Hash string
	Mode filemode.FileMode
}

// FileAt returns the file at a slash path of a tree, and false when the
// tree has no file there ("" is the empty tree). A symbolic link is a file
// (its blob holds the target); a path that goes through one, or through
// any other entry that is not a directory, has no file, as in git.
func (r *Repo) FileAt(tree, p string) (File, bool, error) {
	mode, h, ok, err := r.EntryAt(tree, p)
	if err != nil || !ok || mode == filemode.Dir || mode == filemode.Submodule {
		return File{}, false, err
	}
	return File{Hash: h, Mode: mode}, true, nil
}

// EntryAt returns the mode and hash of the entry at a slash path of a
// tree, whatever it is (file, symbolic link, directory or submodule), and
// false when there is none. Only directories are descended into: a path
// below a symbolic link is not in the tree.
func (r *Repo) EntryAt(tree, p string) (filemode.FileMode, string, bool, error) {
	if tree == "" {
		return 0, "", false, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := parseHash(tree)
	if !ok {
		return 0, "", false, fmt.Errorf("%q is not a full tree hash", tree)
	}
	for {
		t, err := r.tree(h)
		if err != nil {
			return 0, "", false, fmt.Errorf("read tree %s: %w", h, err)
		}
		name, rest, deeper := strings.Cut(p, "/")
		e, err := t.FindEntry(name)
		if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
			return 0, "", false, nil
		}
		if err != nil {
			return 0, "", false, fmt.Errorf("%s in tree %s: %w", p, short(tree), err)
		}
		if !deeper {
			return e.Mode, e.Hash.String(), true, nil
		}
		if e.Mode != filemode.Dir {
			return 0, "", false, nil
		}
		h, p = e.Hash, rest
	}
}

// Blob returns the content of a blob.
func (r *Repo) Blob(hash string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := parseHash(hash)
	if !ok {
		return nil, fmt.Errorf("%q is not a full blob hash", hash)
	}
	b, err := object.GetBlob(r.storage, h)
	if err != nil {
		r.storage.Reindex()
		if b, err = object.GetBlob(r.storage, h); err != nil {
			return nil, fmt.Errorf("read blob %s: %w", hash, err)
		}
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", hash, err)
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// WriteBlob stores data as a blob, durably, and returns its hash.
func (r *Repo) WriteBlob(data []byte) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ow := &objectWriter{dir: r.objects}
	defer ow.abort()
	h, err := ow.write(plumbing.BlobObject, data)
	if err != nil {
		return "", err
	}
	if err := ow.flush(); err != nil {
		return "", err
	}
	return h.String(), nil
}

// TreeEdit sets the file at Path to File, or removes it when File.Hash is
// "". The blob must exist.
type TreeEdit struct {
	Path string
	File File
}

// EditTree applies edits to a tree ("" for the empty tree) and returns the
// new tree's hash ("" when it is empty). Only the subtrees on the edited
// paths are rewritten; the new trees are written durably.
func (r *Repo) EditTree(tree string, edits []TreeEdit) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	base := plumbing.ZeroHash
	if tree != "" {
		h, ok := parseHash(tree)
		if !ok {
			return "", fmt.Errorf("%q is not a full tree hash", tree)
		}
		base = h
	}
	chs := make([]*change, 0, len(edits))
	seen := make(map[string]bool, len(edits))
	for _, e := range edits {
		if err := validPath(e.Path); err != nil {
			return "", err
		}
		if seen[e.Path] {
			return "", fmt.Errorf("%s is edited twice", e.Path)
		}
		seen[e.Path] = true
		c := &change{path: e.Path, sub: e.Path, delete: e.File.Hash == ""}
		if !c.delete {
			h, ok := parseHash(e.File.Hash)
			if !ok {
				return "", fmt.Errorf("%s: %q is not a full blob hash", e.Path, e.File.Hash)
			}
			c.hash, c.mode = h, e.File.Mode
			if c.mode == 0 {
				c.mode = filemode.Regular
			}
		}
		chs = append(chs, c)
	}
	sort.Slice(chs, func(i, j int) bool { return chs[i].path < chs[j].path })
	ow := &objectWriter{dir: r.objects}
	defer ow.abort()
	root, err := r.buildTree(ow, base, chs)
	if err != nil {
		return "", err
	}
	if err := ow.flush(); err != nil {
		return "", err
	}
	if root.IsZero() {
		return "", nil
	}
	return root.String(), nil
}

// CommitTree writes a commit object for tree ("" for the empty tree) with
// the given parents and message, and returns its hash. No ref moves.
func (r *Repo) CommitTree(tree string, parents []string, message string, author Signature) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ow := &objectWriter{dir: r.objects}
	defer ow.abort()
	th := plumbing.ZeroHash
	if tree != "" {
		h, ok := parseHash(tree)
		if !ok {
			return "", fmt.Errorf("%q is not a full tree hash", tree)
		}
		th = h
	} else {
		h, err := ow.writeTree(&object.Tree{})
		if err != nil {
			return "", err
		}
		th = h
	}
	var ps []plumbing.Hash
	for _, p := range parents {
		h, ok := parseHash(strings.ToLower(p))
		if !ok {
			return "", fmt.Errorf("parent %q is not a full commit hash", p)
		}
		ps = append(ps, h)
	}
	h, err := ow.writeCommit(th, ps, message, author)
	if err != nil {
		return "", err
	}
	if err := ow.flush(); err != nil {
		return "", err
	}
	return h.String(), nil
}

// MergeBase returns a best common ancestor of commits a and b, as `git
// merge-base` does, or "" when they share no history.
func (r *Repo) MergeBase(a, b string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var cs [2]*object.Commit
	for i, s := range []string{a, b} {
		h, ok := parseHash(strings.ToLower(s))
		if !ok {
			return "", fmt.Errorf("%q is not a full commit hash", s)
		}
		c, err := r.commit(h)
		if err != nil {
			return "", fmt.Errorf("read commit %s: %w", s, err)
		}
		cs[i] = c
	}
	bases, err := cs[0].MergeBase(cs[1])
	if err != nil {
		return "", fmt.Errorf("merge base of %s and %s: %w", short(a), short(b), err)
	}
	if len(bases) == 0 {
		return "", nil
	}
	// Several bases are equally good (criss-cross merges); the newest
	// one holds the most of both sides, and the merge above the base
	// decides per entry, not per line, so any of them gives a correct
	// result.
	best := bases[0]
	for _, c := range bases[1:] {
		if c.Committer.When.After(best.Committer.When) {
			best = c
		}
	}
	return best.Hash.String(), nil
}

// CommitTime returns when a commit was made (its committer time).
func (r *Repo) CommitTime(commit string) (time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := parseHash(strings.ToLower(commit))
	if !ok {
		return time.Time{}, fmt.Errorf("%q is not a full commit hash", commit)
	}
	c, err := r.commit(h)
	if err != nil {
		return time.Time{}, fmt.Errorf("read commit %s: %w", commit, err)
	}
	return c.Committer.When, nil
}
