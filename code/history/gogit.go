package history

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/miramem/mira/internal/gittree"
)

// readGoGit is Read done with go-git alone: a walk of the commits by
// commit date (as git log walks them) and a diff of each commit's tree
// against its parent's that reads only the subtrees whose hashes differ.
func readGoGit(ctx context.Context, abs, since string, max int) ([]Commit, string, error) {
	loc, err := findRepo(abs)
	if err != nil {
		return nil, "", err
	}
	var fsys billy.Filesystem = osfs.New(loc.gitDir)
	if loc.commonDir != "" {
		fsys = dotgit.NewRepositoryFilesystem(fsys, osfs.New(loc.commonDir))
	}
	st := filesystem.NewStorageWithOptions(fsys, cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	defer st.Close()
	prefix := ""
	if loc.top != "" {
		rel, err := filepath.Rel(loc.top, abs)
		if err != nil {
			return nil, "", err
		}
		if rel != "." {
			prefix = filepath.ToSlash(rel) + "/"
		}
	}
	ref, err := storer.ResolveReference(st, plumbing.HEAD)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, "", nil // no commit yet
	}
	if err != nil {
		return nil, "", fmt.Errorf("read HEAD: %w", err)
	}
	head := ref.Hash()
	shallowList, err := st.Shallow()
	if err != nil {
		return nil, "", fmt.Errorf("read shallow list: %w", err)
	}
	shallow := make(map[plumbing.Hash]bool, len(shallowList))
	for _, h := range shallowList {
		shallow[h] = true
	}
	w := walker{st: st, shallow: shallow, trees: map[plumbing.Hash][]byte{}}
	if since != "" {
		h, ok := parseHash(since)
		if !ok {
			return nil, "", fmt.Errorf("%q is not a commit hash", since)
		}
		if h == head {
			return nil, head.String(), nil
		}
		// Everything reachable from since is left out. Listing it costs
		// a walk of the commit objects (no trees), far less than the
		// diffs.
		w.seen = map[plumbing.Hash]bool{}
		if _, err := object.GetCommit(st, h); err != nil {
			return nil, "", ErrRewritten
		}
		if err := w.mark(ctx, h); err != nil {
			return nil, "", err
		}
		if w.seen[head] {
			return nil, "", ErrRewritten // HEAD went back
		}
		if ok, err := w.isAncestor(ctx, h, head); err != nil {
			return nil, "", err
		} else if !ok {
			return nil, "", ErrRewritten
		}
	} else {
		w.seen = map[plumbing.Hash]bool{}
	}
	var out []Commit
	err = w.walk(ctx, head, func(c *object.Commit) (bool, error) {
		if len(c.ParentHashes) > 1 || shallow[c.Hash] {
			return true, nil
		}
		var parentTree plumbing.Hash
		if len(c.ParentHashes) == 1 {
			p, err := w.commit(c.ParentHashes[0])
			if err != nil {
				return false, err
			}
			parentTree = p.TreeHash
		}
		a, err := w.subtree(parentTree, prefix)
		if err != nil {
			return false, err
		}
		b, err := w.subtree(c.TreeHash, prefix)
		if err != nil {
			return false, err
		}
		var d changes
		if err := w.diff(&d, a, b); err != nil {
			return false, fmt.Errorf("diff commit %s: %w", c.Hash, err)
		}
		if len(d.added)+len(d.removed)+len(d.changed) == 0 && prefix != "" {
			return true, nil
		}
		files, renames, removed := d.result()
		out = append(out, Commit{
			Hash:    c.Hash.String(),
			Author:  c.Author.Name,
			Email:   c.Author.Email,
			When:    unixTime(c.Author.When.Unix()),
			Subject: subject(c.Message),
			Files:   files,
			Renames: renames,
			Removed: removed,
		})
		return max <= 0 || len(out) < max, nil
	})
	if err != nil {
		return nil, "", err
	}
	return out, head.String(), nil
}

// repoAt is where a repository lives.
type repoAt struct {
	gitDir    string // the git directory (a linked worktree's own)
	commonDir string // a linked worktree's shared git directory, or ""
	top       string // the work tree's root, "" for a bare repository
}

// findRepo finds the repository of the directory abs, as git does: abs
// or its nearest parent holding .git (a directory, or a file naming one),
// or abs itself when it is a bare repository.
func findRepo(abs string) (repoAt, error) {
	if dir, err := filepath.EvalSymlinks(abs); err == nil {
		abs = dir
	}
	if isGitDir(abs) {
		return repoAt{gitDir: abs, commonDir: commonDir(abs)}, nil
	}
	for d := abs; ; {
		dot := filepath.Join(d, ".git")
		if fi, err := os.Stat(dot); err == nil {
			gitDir := dot
			if !fi.IsDir() {
				b, err := os.ReadFile(dot)
				if err != nil {
					return repoAt{}, err
				}
				target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
				if !ok {
					return repoAt{}, fmt.Errorf("%s: %w", dot, ErrNoRepo)
				}
				gitDir = strings.TrimSpace(target)
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(d, gitDir)
				}
			}
			if !isGitDir(gitDir) {
				return repoAt{}, fmt.Errorf("%s: %w", gitDir, ErrNoRepo)
			}
			return repoAt{gitDir: gitDir, commonDir: commonDir(gitDir), top: d}, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return repoAt{}, ErrNoRepo
		}
		d = up
	}
}

// isGitDir reports whether dir looks like a git directory.
func isGitDir(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil || fi.IsDir() {
		return false
	}
	common := dir
	if c := commonDir(dir); c != "" {
		common = c
	}
	for _, sub := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(common, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// commonDir returns the shared git directory of a linked worktree's git
// directory, or "".
func commonDir(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(b))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c)
}

func parseHash(s string) (plumbing.Hash, bool) {
	s = strings.ToLower(s)
	if len(s) != 40 {
		return plumbing.ZeroHash, false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return plumbing.ZeroHash, false
		}
	}
	return plumbing.NewHash(s), true
}

// subject is the first line of a commit message.
func subject(msg string) string {
	msg = strings.TrimLeft(msg, "\n")
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

type walker struct {
	st      storer.EncodedObjectStorer
	shallow map[plumbing.Hash]bool
	seen    map[plumbing.Hash]bool   // commits queued or left out
	trees   map[plumbing.Hash][]byte // encoded trees read lately
	old     map[plumbing.Hash][]byte // the generation before
	commits map[plumbing.Hash]*object.Commit
}

func (w *walker) commit(h plumbing.Hash) (*object.Commit, error) {
	if c, ok := w.commits[h]; ok {
		return c, nil
	}
	c, err := object.GetCommit(w.st, h)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	if w.commits == nil || len(w.commits) > 4096 {
		w.commits = map[plumbing.Hash]*object.Commit{}
	}
	w.commits[h] = c
	return c, nil
}

// parents returns the parents of c that the repository has: none at a
// shallow boundary.
func (w *walker) parents(c *object.Commit) []plumbing.Hash {
	if w.shallow[c.Hash] {
		return nil
	}
	return c.ParentHashes
}

// mark adds every commit reachable from h to w.seen.
func (w *walker) mark(ctx context.Context, h plumbing.Hash) error {
	stack := []plumbing.Hash{h}
	w.seen[h] = true
	for n := 0; len(stack) > 0; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		c, err := object.GetCommit(w.st, h)
		if err != nil {
			return fmt.Errorf("read commit %s: %w", h, err)
		}
		for _, p := range w.parents(c) {
			if !w.seen[p] {
				w.seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return nil
}

// isAncestor reports whether a is reachable from b.
func (w *walker) isAncestor(ctx context.Context, a, b plumbing.Hash) (bool, error) {
	seen := map[plumbing.Hash]bool{b: true}
	stack := []plumbing.Hash{b}
	for n := 0; len(stack) > 0; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return false, ctx.Err()
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if h == a {
			return true, nil
		}
		if w.seen[h] {
			continue // reachable from a already
		}
		c, err := object.GetCommit(w.st, h)
		if err != nil {
			return false, fmt.Errorf("read commit %s: %w", h, err)
		}
		for _, p := range w.parents(c) {
			if !seen[p] {
				seen[p] = true
				stack = append(stack, p)
			}
		}
	}
	return false, nil
}

// walk calls fn for the commits reachable from head and not in w.seen,
// newest commit date first, until fn returns false.
func (w *walker) walk(ctx context.Context, head plumbing.Hash, fn func(*object.Commit) (bool, error)) error {
	if w.seen[head] {
		return nil
	}
	var q commitQueue
	c, err := w.commit(head)
	if err != nil {
		return err
	}
	w.seen[head] = true
	heap.Push(&q, queued{c, 0})
	for n := 1; q.Len() > 0; {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c := heap.Pop(&q).(queued).c
		for _, p := range w.parents(c) {
			if w.seen[p] {
				continue
			}
			w.seen[p] = true
			pc, err := w.commit(p)
			if err != nil {
				return err
			}
			heap.Push(&q, queued{pc, n})
			n++
		}
		more, err := fn(c)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

type queued struct {
	c   *object.Commit
	seq int
}

// commitQueue orders commits by commit date, newest first, and those of
// the same date in the order they were found.
type commitQueue []queued

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	if c := q[i].c.Committer.When.Compare(q[j].c.Committer.When); c != 0 {
		return c > 0
	}
	return q[i].seq < q[j].seq
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *commitQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// rawTree returns the encoded entries of a tree (none for the zero hash).
// The trees of the last commits are kept: the next commit of the walk is
// usually the parent, whose tree was just read.
func (w *walker) rawTree(h plumbing.Hash) ([]byte, error) {
	if h.IsZero() {
		return nil, nil
	}
	if b, ok := w.trees[h]; ok {
		return b, nil
	}
	if b, ok := w.old[h]; ok {
		w.trees[h] = b
		return b, nil
	}
	o, err := w.st.EncodedObject(plumbing.TreeObject, h)
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	b := make([]byte, o.Size())
	if _, err := io.ReadFull(rd, b); err != nil {
		return nil, fmt.Errorf("read tree %s: %w", h, err)
	}
	if len(w.trees) >= 8192 {
		w.old, w.trees = w.trees, map[plumbing.Hash][]byte{}
	}
	w.trees[h] = b
	return b, nil
}

// subtree returns the hash of the tree at prefix ("" or "dir/sub/")
// below the tree h, or zero when there is none.
func (w *walker) subtree(h plumbing.Hash, prefix string) (plumbing.Hash, error) {
	for prefix != "" && !h.IsZero() {
		name, rest, _ := strings.Cut(prefix, "/")
		raw, err := w.rawTree(h)
		if err != nil {
			return h, err
		}
		t := gittree.NewWalk(raw)
		next := plumbing.ZeroHash
		for {
			e, ok, err := t.Next()
			if err != nil {
				return h, fmt.Errorf("read tree %s: %w", h, err)
			}
			if !ok {
				break
			}
			if e.Dir() && string(e.Name) == name {
				next = e.Hash
				break
			}
		}
		h, prefix = next, rest
	}
	return h, nil
}

// changes are the files that differ between two trees, with their blob
// hashes (for finding renames).
type changes struct {
	added, removed []fileAt
	changed        []string
}

type fileAt struct {
	path string
	hash plumbing.Hash
	mode uint32
}

// emptyBlob is the hash of the empty file: empty files are alike, moving
// one is no evidence of a rename.
var emptyBlob = plumbing.NewHash("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")

// result returns the changed paths, sorted, a renamed file under its new
// name only, the renames and the files removed.
func (d *changes) result() (files []string, renames []Rename, removed []string) {
	files = d.changed
	renames = exactRenames(d.removed, d.added)
	from := make(map[string]bool, len(renames))
	for _, r := range renames {
		from[r.From] = true
	}
	for _, f := range d.removed {
		if !from[f.path] {
			files = append(files, f.path)
			removed = append(removed, f.path)
		}
	}
	for _, f := range d.added {
		files = append(files, f.path)
	}
	slices.Sort(files)
	slices.Sort(removed)
	return slices.Compact(files), renames, removed
}

// exactRenames pairs removed and added files of the same content and
// mode. Where several files share a content, they pair in path order.
func exactRenames(removed, added []fileAt) []Rename {
	if len(removed) == 0 || len(added) == 0 {
		return nil
	}
	type key struct {
		h    plumbing.Hash
		mode uint32
	}
	gone := map[key][]string{}
	for _, f := range removed {
		if f.hash != emptyBlob {
			k := key{f.hash, f.mode}
			gone[k] = append(gone[k], f.path)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	for _, l := range gone {
		slices.Sort(l)
	}
	sorted := slices.Clone(added)
	slices.SortFunc(sorted, func(a, b fileAt) int { return cmp.Compare(a.path, b.path) })
	var out []Rename
	for _, f := range sorted {
		k := key{f.hash, f.mode}
		if l := gone[k]; len(l) > 0 {
			out = append(out, Rename{From: l[0], To: f.path})
			gone[k] = l[1:]
		}
	}
	slices.SortFunc(out, func(a, b Rename) int { return cmp.Compare(a.To, b.To) })
	return out
}

// diff lists what differs between the trees a and b (zero for empty).
func (w *walker) diff(d *changes, a, b plumbing.Hash) error {
	return gittree.Diff(a, b, w.rawTree, nil, func(p string, old, new gittree.Entry) {
		switch {
		case old.Mode == 0:
			d.added = append(d.added, fileAt{p, new.Hash, new.Mode})
		case new.Mode == 0:
			d.removed = append(d.removed, fileAt{p, old.Hash, old.Mode})
		default:
			d.changed = append(d.changed, p)
		}
	})
}
