package gitrepo

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/miramem/mira/internal/fault"
)

// Signature names the author of a commit; it is also used as the committer.
// A zero When means now.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

// Change is one path to record in the next commit. Path is slash-separated
// and relative to the work tree. If Delete is true the path (a file, or a
// directory with everything under it) is removed from the tree and from
// .git/index; otherwise the file's current content on disk, which the caller
// has already written, is recorded. Regular files are recorded with mode
// 100644, or 100755 when the owner may execute them; symbolic links as links.
type Change struct {
	Path   string
	Delete bool
	// blob is the file's blob and index entry when Blobs.Add recorded
	// it as written: the commit does not read the file.
	blob *indexEntry
}

// change is a normalised Change with the blob it records.
type change struct {
	path   string
	delete bool
	mode   filemode.FileMode
	hash   plumbing.Hash
	entry  *indexEntry // index entry with stat data, nil for deletions
	sub    string      // path relative to the tree being built
	at     int         // its place among the changes given
}

// testHookBeforeRef, when a test sets it, runs after the objects are
// written and before the ref moves: the window in which another process can
// move the ref under a commit.
var testHookBeforeRef func()

// Commit records changes as one commit on the current branch and returns
// the new commit's hash. It writes blobs for the changed files, rewrites
// only the trees on the paths to them (every untouched subtree keeps its
// hash), writes the commit with author and committer set to author and the
// message stored exactly as given, moves the branch from the commit it
// started from with a compare-and-swap, and finally updates .git/index for
// the changed paths only, with stat data from the files on disk, so that
// `git status` is clean afterwards. On an unborn branch it makes the root
// commit.
//
// Errors: ErrNothingToCommit when changes is empty or changes nothing;
// ErrRefMoved when another process moved the branch meanwhile (retryable);
// ErrLocked while a git command holds the index or the ref; ErrUnmerged while
// a merge conflict is unresolved. An error wrapping ErrIndexStale comes with
// a valid hash: the commit is recorded, only the index lags behind.
func (r *Repo) Commit(changes []Change, message string, author Signature) (string, error) {
	if len(changes) == 0 {
		return "", ErrNothingToCommit
	}
	return r.commitWith(nil, changes, message, author, nil)
}

// CommitMerge is Commit for a merge: the new commit has the current
// branch's commit as its first parent and others after it. It records the
// merge even when changes are empty or leave the tree as it was, since the
// parents alone say what was merged. The other parents must exist.
func (r *Repo) CommitMerge(changes []Change, message string, author Signature, others ...string) (string, error) {
	extra, err := mergeParents(others)
	if err != nil {
		return "", err
	}
	if len(extra) == 0 {
		return r.Commit(changes, message, author)
	}
	return r.commitWith(nil, changes, message, author, extra)
}

// mergeParents parses the hashes of a merge's other parents.
func mergeParents(others []string) ([]plumbing.Hash, error) {
	extra := make([]plumbing.Hash, 0, len(others))
	for _, o := range others {
		h, ok := parseHash(strings.ToLower(o))
		if !ok {
			return nil, fmt.Errorf("merge parent %q is not a full commit hash", o)
		}
		extra = append(extra, h)
	}
	return extra, nil
}

// commitWith makes the commit; ow, when not nil, holds the blobs a Blobs
// wrote and takes the commit's other objects too.
func (r *Repo) commitWith(ow *objectWriter, changes []Change, message string, author Signature, extra []plumbing.Hash) (string, error) {
	if ow != nil {
		defer ow.abort() // whatever happens before the objects are flushed
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	chs, err := normalize(changes)
	if err != nil {
		return "", err
	}

	// The index lock is taken first, as git does, so a running git command
	// makes the commit fail before anything is written.
	indexPath := filepath.Join(r.gitDir, "index")
	orphan, err := createLock(indexPath+".lock", r.gitDir, r.workDir)
	if err != nil {
		return "", err
	}
	defer os.Remove(indexPath + ".lock")
	r.removeLeftovers()
	if orphan {
		// A commit of ours died holding the index lock, possibly after
		// moving the branch and before writing the index, which then
		// still describes the previous commit for its paths. This is
		// settled first, so that it is settled even when this commit
		// turns out to have nothing to record.
		if err := r.repairIndex(indexPath); err != nil {
			return "", err
		}
	}

	ref, err := r.headRef()
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	parent, err := r.readRef(ref)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", ref, err)
	}
	// Reading .git/index (about 2 ms at ten thousand files, most of it
	// verifying the checksum) needs nothing from the steps before the ref
	// moves, so it runs alongside them.
	reading := start(func() (indexState, error) { return readIndex(indexPath) })
	defer reading.wait()

	var parentTree plumbing.Hash
	if !parent.IsZero() {
		c, err := r.commit(parent)
		if err != nil {
			return "", fmt.Errorf("read parent %s: %w", parent, err)
		}
		parentTree = c.TreeHash
	}

	if ow == nil {
		ow = &objectWriter{dir: r.objects}
		if writes(chs) >= PackMin {
			ow.pack = &packBuilder{dir: filepath.Join(r.objects, "pack")}
		}
		defer ow.abort()
	}
	plain := map[string]bool{} // directories looked at: not symbolic links
	for _, c := range chs {
		if c.delete {
			continue
		}
		if err := r.plainDirs(c.path, plain); err != nil {
			return "", err
		}
		if c.entry != nil {
			continue // Blobs.Add wrote its blob
		}
		if err := r.hashFile(ow, c); err != nil {
			return "", err
		}
	}
	root, err := r.buildTree(ow, parentTree, chs)
	if err != nil {
		return "", err
	}
	if root.IsZero() {
		if parent.IsZero() {
			return "", ErrNothingToCommit
		}
		// Deleting the last file leaves the empty tree, which git
		// stores as an object like any other.
		if root, err = ow.writeTree(&object.Tree{}); err != nil {
			return "", err
		}
	}
	if root == parentTree && len(extra) == 0 {
		return "", ErrNothingToCommit
	}

	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = []plumbing.Hash{parent}
	}
	for _, h := range extra {
		if _, err := r.commit(h); err != nil {
			return "", fmt.Errorf("read merge parent %s: %w", h, err)
		}
		parents = append(parents, h)
	}
	commit, err := ow.writeCommit(root, parents, message, author)
	if err != nil {
		return "", err
	}

	idx, err := reading.wait()
	if err != nil {
		return "", err
	}
	if name := idx.unmerged(); name != "" {
		return "", fmt.Errorf("%w (%s)", ErrUnmerged, name)
	}
	// Writing the new index (encoding it is CPU work, syncing it waits for
	// the disk) overlaps with making the objects and the ref durable; only
	// the rename waits for the ref. An index rebuilt from the new tree can
	// only start once the trees are in place.
	var writing *job[string]
	writeIndex := func(rebuilt *indexFile) {
		writing = start(func() (string, error) {
			data, err := encodeIndex(idx, rebuilt, chs)
			if err != nil {
				return "", err
			}
			return r.writeTemp("mira-index-*.tmp", func(w io.Writer) error {
				_, err := w.Write(data)
				return err
			})
		})
	}
	installed := false
	defer func() {
		if writing != nil {
			if tmp, err := writing.wait(); err == nil && !installed {
				os.Remove(tmp)
			}
		}
	}()
	if idx.usable() {
		writeIndex(nil)
	}
	if err := ow.flush(); err != nil {
		return "", err
	}
	if ow.pack != nil {
		r.storage.Reindex() // the new pack holds the trees read below
	}
	if writing == nil {
		rebuilt, err := r.indexFromTree(root, chs)
		if err != nil {
			return "", err
		}
		writeIndex(rebuilt)
	}
	if testHookBeforeRef != nil {
		testHookBeforeRef()
	}
	fault.At(fault.BeforeRef)
	if err := r.updateRef(ref, parent, commit); err != nil {
		return "", fmt.Errorf("move %s: %w", ref, err)
	}
	fault.At(fault.RefMoved)
	if len(extra) == 0 && !ow.dirChanged {
		r.appendJournal(commit, parent, ow.changed)
	}

	// From here on the commit exists; failing to update the index must not
	// make the caller undo the work tree.
	tmp, err := writing.wait()
	if err == nil {
		err = install(tmp, indexPath)
		installed = err == nil
	}
	if installed {
		fault.At(fault.IndexWritten)
	}
	if err != nil {
		return commit.String(), fmt.Errorf("%w (commit %s): write index: %w", ErrIndexStale, commit, err)
	}
	return commit.String(), nil
}

// job is a function running in its own goroutine.
type job[T any] struct {
	done chan struct{}
	v    T
	err  error
}

func start[T any](fn func() (T, error)) *job[T] {
	j := &job[T]{done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.v, j.err = fn()
	}()
	return j
}

// wait returns the function's results once it has returned; it may be
// called any number of times.
func (j *job[T]) wait() (T, error) {
	<-j.done
	return j.v, j.err
}

// writes counts the changes that write a file.
func writes(chs []*change) int {
	n := 0
	for _, c := range chs {
		if !c.delete {
			n++
		}
	}
	return n
}

// normalize validates the paths and keeps the last change of each path, in
// path order.
func normalize(changes []Change) ([]*change, error) {
	all := make([]change, len(changes)) // one allocation, not a million
	out := make([]*change, len(changes))
	for i, c := range changes {
		if err := validPath(c.Path); err != nil {
			return nil, err
		}
		ch := &all[i]
		*ch = change{path: c.Path, delete: c.Delete, sub: c.Path, at: i}
		if e := c.blob; e != nil && !c.Delete {
			if e.mode == 0 {
				return nil, fmt.Errorf("hash %s: written without its stat data", c.Path)
			}
			ch.mode, ch.hash, ch.entry = e.mode, e.hash, e
		}
		out[i] = ch
	}
	// The later of two changes of a path wins: it sorts after.
	slices.SortFunc(out, func(a, b *change) int {
		return cmp.Or(strings.Compare(a.path, b.path), cmp.Compare(a.at, b.at))
	})
	kept := out[:0]
	for i, c := range out {
		if i+1 < len(out) && out[i+1].path == c.path {
			continue
		}
		kept = append(kept, c)
	}
	return kept, nil
}

// validPath accepts a clean, relative, slash-separated path that git can
// store: no empty, "." or ".." components and nothing inside .git.
func validPath(p string) error {
	if p == "" {
		return errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("path %q contains a NUL byte", p)
	}
	for part := range strings.SplitSeq(p, "/") {
		switch {
		case part == "" || part == "." || part == "..":
			return fmt.Errorf("path %q is not clean and relative", p)
		case strings.EqualFold(part, ".git"):
			return fmt.Errorf("path %q is inside .git", p)
		}
	}
	return nil
}

// cleanSignature removes the characters that would make the ident line of
// a commit malformed (git strips them too) and fills in the time.
func cleanSignature(s Signature) object.Signature {
	strip := func(v string) string {
		v = strings.Map(func(r rune) rune {
			switch r {
			case '<', '>', '\n', '\r', 0:
				return -1
			}
			return r
		}, v)
		return strings.TrimSpace(v)
	}
	when := s.When
	if when.IsZero() {
		when = time.Now()
	}
	return object.Signature{Name: strip(s.Name), Email: strip(s.Email), When: when}
}

// plainDirs refuses a path reached through a symbolic link: git does not
// follow one in the middle of a path, so such a file cannot be recorded
// under that path. plain holds the directories of this commit found not to
// be symbolic links, each looked at once (a million files share a handful
// of directories).
func (r *Repo) plainDirs(p string, plain map[string]bool) error {
	for dir := path.Dir(p); dir != "." && !plain[dir]; dir = path.Dir(dir) {
		fi, err := os.Lstat(filepath.Join(r.workDir, filepath.FromSlash(dir)))
		if err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("hash %s: %s is a symbolic link", p, dir)
		}
		if err == nil {
			plain[dir] = true
		}
	}
	return nil
}

// hashFile writes the blob of c's file and fills in its mode and index
// entry. The file is stat-ed before it is read, as git does: a write that
// races with the read then changes the stat data or leaves the entry racily
// clean, and git looks at the content either way.
func (r *Repo) hashFile(ow *objectWriter, c *change) error {
	abs := filepath.Join(r.workDir, filepath.FromSlash(c.path))
	lfi, err := os.Lstat(abs)
	if err != nil {
		return fmt.Errorf("hash %s: %w", c.path, err)
	}
	var (
		data []byte
		fi   os.FileInfo
	)
	switch {
	case lfi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(abs)
		if err != nil {
			return fmt.Errorf("hash %s: %w", c.path, err)
		}
		data, fi, c.mode = []byte(filepath.ToSlash(target)), lfi, filemode.Symlink
	case lfi.Mode().IsRegular():
		f, err := os.Open(abs)
		if err != nil {
			return fmt.Errorf("hash %s: %w", c.path, err)
		}
		defer f.Close()
		if fi, err = f.Stat(); err != nil {
			return fmt.Errorf("hash %s: %w", c.path, err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("hash %s: not a regular file", c.path)
		}
		buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
		if _, err := buf.ReadFrom(f); err != nil {
			return fmt.Errorf("hash %s: %w", c.path, err)
		}
		data, c.mode = buf.Bytes(), filemode.Regular
		if fi.Mode()&0o100 != 0 {
			c.mode = filemode.Executable
		}
	default:
		return fmt.Errorf("hash %s: not a regular file (%s)", c.path, lfi.Mode().Type())
	}
	if c.hash, err = ow.write(plumbing.BlobObject, data); err != nil {
		return err
	}
	c.entry = &indexEntry{name: c.path, hash: c.hash, mode: c.mode}
	fillStat(c.entry, fi)
	return nil
}

// newFiles returns the entries of a new directory holding the files chs
// write, or false unless every change writes a file of the directory
// itself. chs are in path order, which for the names of files alone is
// git's order for a tree's entries: a bulk load's directory of hundreds of
// thousands of files is made without a map or a sort.
func newFiles(chs []*change) ([]object.TreeEntry, bool) {
	if len(chs) == 0 {
		return nil, false
	}
	entries := make([]object.TreeEntry, len(chs))
	for i, c := range chs {
		if c.delete || strings.IndexByte(c.sub, '/') >= 0 || i > 0 && c.sub <= chs[i-1].sub {
			return nil, false
		}
		entries[i] = object.TreeEntry{Name: c.sub, Mode: c.mode, Hash: c.hash}
	}
	return entries, true
}

// buildTree applies chs, whose sub paths are relative to the tree old (zero
// for none), and returns the new tree's hash, or zero if it is empty. Only
// subtrees that changes reach are read and rewritten.
func (r *Repo) buildTree(ow *objectWriter, old plumbing.Hash, chs []*change) (plumbing.Hash, error) {
	if old.IsZero() {
		if entries, ok := newFiles(chs); ok {
			for _, c := range chs {
				ow.changed = append(ow.changed, c.path)
			}
			return ow.writeTree(&object.Tree{Entries: entries})
		}
	}
	var entries []object.TreeEntry
	if !old.IsZero() {
		t, err := r.tree(old)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("read tree %s: %w", old, err)
		}
		entries = append(make([]object.TreeEntry, 0, len(t.Entries)+len(chs)), t.Entries...)
	}
	pos := make(map[string]int, len(entries))
	for i, e := range entries {
		pos[e.Name] = i
	}
	removed := make(map[int]bool)
	resort := false
	lookup := func(name string) (int, bool) {
		i, ok := pos[name]
		return i, ok && !removed[i]
	}
	set := func(name string, mode filemode.FileMode, h plumbing.Hash) {
		if i, ok := lookup(name); ok {
			if (entries[i].Mode == filemode.Dir) != (mode == filemode.Dir) {
				resort = true // a file replaced a directory or the reverse
				ow.dirChanged = true
			}
			entries[i].Mode, entries[i].Hash = mode, h
			return
		}
		pos[name] = len(entries)
		entries = append(entries, object.TreeEntry{Name: name, Mode: mode, Hash: h})
		resort = true
	}

	// Split the changes into those naming an entry of this tree and those
	// reaching below it, grouped by the subdirectory they go through.
	direct := make(map[string]*change)
	var order []string
	groups := make(map[string][]*change)
	for _, c := range chs {
		first, rest, deeper := strings.Cut(c.sub, "/")
		if !deeper {
			direct[first] = c
			continue
		}
		if _, ok := groups[first]; !ok {
			order = append(order, first)
		}
		c.sub = rest // this level is done with it
		groups[first] = append(groups[first], c)
	}
	for name, c := range direct {
		if !c.delete {
			for _, g := range groups[name] {
				if !g.delete {
					return plumbing.ZeroHash, fmt.Errorf("conflicting changes: %s is written both as a file and as a directory holding %s", c.path, g.path)
				}
			}
		}
		if c.delete {
			if i, ok := lookup(name); ok {
				removed[i] = true
				if entries[i].Mode == filemode.Dir {
					ow.dirChanged = true
				} else {
					ow.changed = append(ow.changed, c.path)
				}
			}
			continue
		}
		if i, ok := lookup(name); !ok || entries[i].Mode != c.mode || entries[i].Hash != c.hash {
			ow.changed = append(ow.changed, c.path)
		}
		set(name, c.mode, c.hash)
	}
	for _, name := range order {
		var base plumbing.Hash
		i, exists := lookup(name)
		if exists && entries[i].Mode == filemode.Dir {
			base = entries[i].Hash
		}
		h, err := r.buildTree(ow, base, groups[name])
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch {
		case !h.IsZero():
			set(name, filemode.Dir, h)
		case exists && entries[i].Mode == filemode.Dir:
			removed[i] = true // its last file went away
		}
		// An empty result under a path that is a file here means the
		// changes only deleted paths that never existed: keep the file.
	}

	kept := entries[:0]
	for i, e := range entries {
		if !removed[i] {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return plumbing.ZeroHash, nil
	}
	if resort {
		sort.Sort(object.TreeEntrySorter(kept))
	}
	h, err := ow.writeTree(&object.Tree{Entries: kept})
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return h, nil
}
