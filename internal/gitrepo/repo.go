package gitrepo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/internal/rawfile"
)

var (
	// ErrRefMoved is returned by Commit when the branch no longer points to
	// the commit it started from: another process committed in between.
	// Nothing was changed except for unreferenced objects; the caller may
	// retry.
	ErrRefMoved = errors.New("branch moved by another process")

	// ErrNothingToCommit is returned by Commit when it is given no changes
	// or when the changes leave the tree exactly as it was.
	ErrNothingToCommit = errors.New("nothing to commit")

	// ErrLocked is returned when a git lock file (.git/index.lock or a ref's
	// .lock) exists: a git command is working on the repository. The
	// caller may retry.
	ErrLocked = errors.New("repository locked by another git process")

	// ErrUnmerged is returned by Commit when the index holds unresolved
	// merge conflicts; like git, Commit refuses to record anything until
	// they are resolved.
	ErrUnmerged = errors.New("index has unresolved merge conflicts")

	// ErrIndexStale is wrapped in the error Commit returns when the commit
	// was recorded and the branch moved, but .git/index could not be
	// updated. The returned hash is valid and the work tree must not be
	// rolled back; `git status` shows the committed paths as changed until
	// the index is refreshed (for example by `git reset -q`).
	ErrIndexStale = errors.New("commit recorded but index not updated")

	// ErrNotRepository is returned by Open for a directory without a git
	// repository.
	ErrNotRepository = errors.New("not a git repository")
)

// DefaultBranch is the branch Init points HEAD at.
const DefaultBranch = "refs/heads/main"

// Repo is a git repository with a work tree. Its methods may be called from
// several goroutines; they take turns. Other processes are kept out by the
// caller (the store holds its own lock for writers) and by git's lock files.
type Repo struct {
	workDir string // absolute path of the work tree
	gitDir  string // absolute path of the git directory
	objects string // gitDir/objects

	mu      sync.Mutex // guards storage, whose caches are not goroutine-safe
	storage *filesystem.Storage
}

// Init creates a git repository in dir if none exists, with HEAD on the
// branch main, and reports whether it created one. It is a no-op on a
// directory that already has a .git entry. The repository is assembled in a
// temporary directory and renamed to .git, so a killed Init leaves either no
// repository or a complete one.
func Init(dir string) (created bool, err error) {
	dotgit := filepath.Join(dir, ".git")
	if _, err := os.Lstat(dotgit); err == nil {
		return false, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("init %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("init %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(dir, ".git-init-*.tmp")
	if err != nil {
		return false, fmt.Errorf("init %s: %w", dir, err)
	}
	defer func() {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}()
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", "info"} {
		if err := os.MkdirAll(filepath.Join(tmp, filepath.FromSlash(d)), 0o700); err != nil {
			return false, fmt.Errorf("init %s: %w", dir, err)
		}
	}
	files := []struct{ name, content string }{
		{"HEAD", "ref: " + DefaultBranch + "\n"},
		{"config", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n\tsharedRepository = 0600\n"},
	}
	for _, f := range files {
		if err := writeSynced(filepath.Join(tmp, f.name), []byte(f.content), 0o600); err != nil {
			return false, fmt.Errorf("init %s: %w", dir, err)
		}
	}
	if err := atomicfile.SyncDir(tmp); err != nil {
		return false, fmt.Errorf("init %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dotgit); err != nil {
		if _, serr := os.Lstat(dotgit); serr == nil {
			return false, nil // another process created it first
		}
		return false, fmt.Errorf("init %s: %w", dir, err)
	}
	tmp = ""
	if err := atomicfile.SyncDir(dir); err != nil {
		return true, fmt.Errorf("init %s: %w", dir, err)
	}
	return true, nil
}

// Open opens the repository whose work tree is dir.
func Open(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	gitDir, err := findGitDir(abs)
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	if err := checkFormat(gitDir); err != nil {
		return nil, fmt.Errorf("open repository %s: %w", dir, err)
	}
	st := filesystem.NewStorage(idxFS{osfs.New(gitDir)}, cache.NewObjectLRUDefault())
	return &Repo{workDir: abs, gitDir: gitDir, objects: filepath.Join(gitDir, "objects"), storage: st}, nil
}

// findGitDir returns the git directory of the work tree abs: .git itself, or
// the directory a "gitdir:" file points to.
func findGitDir(abs string) (string, error) {
	dotgit := filepath.Join(abs, ".git")
	fi, err := os.Stat(dotgit)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNotRepository
	} else if err != nil {
		return "", err
	}
	gitDir := dotgit
	if !fi.IsDir() {
		b, err := rawfile.Read(dotgit)
		if err != nil {
			return "", err
		}
		line := strings.TrimSpace(string(b))
		target, ok := strings.CutPrefix(line, "gitdir:")
		if !ok {
			return "", fmt.Errorf("%s: %w", dotgit, ErrNotRepository)
		}
		gitDir = strings.TrimSpace(target)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(abs, gitDir)
		}
	}
	if _, err := os.Stat(filepath.Join(gitDir, "commondir")); err == nil {
		// A linked worktree keeps objects and refs elsewhere; the store
		// never is one, and handling it would double the ref logic.
		return "", fmt.Errorf("%s is a linked worktree, which is not supported", gitDir)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err != nil {
		return "", fmt.Errorf("%s: %w", gitDir, ErrNotRepository)
	}
	return gitDir, nil
}

// checkFormat refuses repository formats whose objects or refs this package
// would misread: SHA-256 object names and the reftable ref backend.
func checkFormat(gitDir string) error {
	b, err := rawfile.Read(filepath.Join(gitDir, "config"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		if section != "extensions" {
			continue
		}
		key, val, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.ToLower(strings.TrimSpace(val))
		switch {
		case key == "objectformat" && val != "sha1":
			return fmt.Errorf("object format %s is not supported", val)
		case key == "refstorage" && val != "files":
			return fmt.Errorf("ref storage %s is not supported", val)
		}
	}
	return sc.Err()
}

// Dir returns the absolute path of the work tree.
func (r *Repo) Dir() string { return r.workDir }

// Head returns the hash of the commit the current branch (refs/heads/main in
// a store made by Init) points to, or "" while the branch is unborn.
func (r *Repo) Head() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, err := r.headRef()
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	h, err := r.readRef(ref)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", ref, err)
	}
	if h.IsZero() {
		return "", nil
	}
	return h.String(), nil
}

// tree reads a tree object. go-git loads the list of pack indexes once per
// storage and never again, so an object that another process (a Repack, or
// `git gc`) moved from a loose file into a new pack, or out of a deleted
// pack, is not found; like git, the pack list is then read again and the
// lookup retried once.
func (r *Repo) tree(h plumbing.Hash) (*object.Tree, error) {
	b, ok := cachedTree(h)
	if !ok {
		b, ok = r.readLoose(h, plumbing.TreeObject)
	}
	if ok {
		obj := &plumbing.MemoryObject{}
		obj.SetType(plumbing.TreeObject)
		obj.Write(b)
		// With the storage, as GetTree decodes it: FindEntry reads
		// subtrees through it.
		if t, err := object.DecodeTree(r.storage, obj); err == nil {
			return t, nil
		}
	}
	t, err := object.GetTree(r.storage, h)
	if err != nil {
		r.storage.Reindex()
		t, err = object.GetTree(r.storage, h)
	}
	return t, err
}

// commit reads a commit object, retrying like tree.
func (r *Repo) commit(h plumbing.Hash) (*object.Commit, error) {
	c, err := object.GetCommit(r.storage, h)
	if err != nil {
		r.storage.Reindex()
		c, err = object.GetCommit(r.storage, h)
	}
	return c, err
}

// headRef returns the name of the ref a commit moves: the branch HEAD points
// to, or HEAD itself when it is detached (as git does).
func (r *Repo) headRef() (string, error) {
	b, err := rawfile.Read(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(string(b))
	if target, ok := strings.CutPrefix(line, "ref:"); ok {
		target = strings.TrimSpace(target)
		if !strings.HasPrefix(target, "refs/") || !validRefName(target) {
			return "", fmt.Errorf("HEAD points to invalid ref %q", target)
		}
		return target, nil
	}
	if _, ok := parseHash(line); !ok {
		return "", fmt.Errorf("HEAD holds neither a ref nor a hash: %q", line)
	}
	return "HEAD", nil
}

// readRef returns the value of a ref from its loose file or, failing that,
// from packed-refs. The zero hash means the ref does not exist.
func (r *Repo) readRef(name string) (plumbing.Hash, error) {
	b, err := rawfile.Read(filepath.Join(r.gitDir, filepath.FromSlash(name)))
	if err == nil {
		line := strings.TrimSpace(string(b))
		if h, ok := parseHash(line); ok {
			return h, nil
		}
		if strings.HasPrefix(line, "ref:") {
			return plumbing.ZeroHash, fmt.Errorf("symbolic ref %s is not supported", name)
		}
		return plumbing.ZeroHash, fmt.Errorf("ref %s holds %q", name, line)
	}
	if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
		return plumbing.ZeroHash, err
	}
	return r.packedRef(name)
}

// packedRef looks name up in .git/packed-refs.
func (r *Repo) packedRef(name string) (plumbing.Hash, error) {
	b, err := rawfile.Read(filepath.Join(r.gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return plumbing.ZeroHash, nil
	} else if err != nil {
		return plumbing.ZeroHash, err
	}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" || line[0] == '#' || line[0] == '^' {
			continue
		}
		hash, ref, ok := strings.Cut(line, " ")
		if !ok || ref != name {
			continue
		}
		h, ok := parseHash(hash)
		if !ok {
			return plumbing.ZeroHash, fmt.Errorf("packed-refs: bad line %q", line)
		}
		return h, nil
	}
	return plumbing.ZeroHash, nil
}

// updateRef moves ref from old to new under git's lock for it,
// "<ref>.lock", and checks the current value while holding it. A zero old
// hash means the ref must not exist yet.
//
// git writes the new value into the lock file and renames that over the ref.
// Here the new value goes to a temporary file in the git directory that is
// renamed over the ref instead, and the lock is removed afterwards: the lock
// keeps its marker the whole time, so a process killed at any point leaves a
// lock the next commit recognises and breaks (see createLock). Readers see
// the old or the new value either way.
func (r *Repo) updateRef(ref string, old, new plumbing.Hash) error {
	path := filepath.Join(r.gitDir, filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if _, err := createLock(path+".lock", r.gitDir, r.workDir); err != nil {
		return err
	}
	defer os.Remove(path + ".lock")
	cur, err := r.readRef(ref)
	if err != nil {
		return err
	}
	if cur != old {
		return fmt.Errorf("%w: %s is %s, expected %s", ErrRefMoved, ref, hashOrUnborn(cur), hashOrUnborn(old))
	}
	return r.replaceFile(path, "mira-ref-*.tmp", func(w io.Writer) error {
		_, err := io.WriteString(w, new.String()+"\n")
		return err
	})
}

// replaceFile atomically replaces the file at path with what write
// produces, by way of writeTemp and install.
func (r *Repo) replaceFile(path, pattern string, write func(io.Writer) error) error {
	tmp, err := r.writeTemp(pattern, write)
	if err != nil {
		return err
	}
	if err := install(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeTemp writes a synced temporary file in the git directory, named
// after pattern so that leftovers are recognised, and returns its path.
func (r *Repo) writeTemp(pattern string, write func(io.Writer) error) (name string, err error) {
	f, err := os.CreateTemp(r.gitDir, pattern)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return "", err
	}
	if err := f.Chmod(0o600); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}

// install renames a file written by writeTemp over path and syncs the
// directory of path.
func install(tmp, path string) error {
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(path))
}

// removeLeftovers deletes temporary files that killed processes left in the
// git directory. It runs while holding the index lock: the new values of
// refs and index are only written under it, so their temporary files are
// not in use; a lock's temporary file is written before its lock is taken,
// so it is only removed once it is old.
func (r *Repo) removeLeftovers() { r.removeTemps(false) }

// RemoveLeftovers deletes every temporary file a killed writer left in the
// git directory, however young. Call it only while no other process can
// write the repository: the store's writers hold the store lock for every
// commit, so a writer that holds it knows each such file is a dead one's.
func (r *Repo) RemoveLeftovers() { r.removeTemps(true) }

func (r *Repo) removeTemps(all bool) {
	for _, pattern := range []string{"mira-ref-*.tmp", "mira-index-*.tmp", "mira-lock-*.tmp"} {
		names, _ := filepath.Glob(filepath.Join(r.gitDir, pattern))
		for _, n := range names {
			if !all && strings.HasPrefix(filepath.Base(n), "mira-lock-") {
				if fi, err := os.Stat(n); err != nil || time.Since(fi.ModTime()) < time.Minute {
					continue
				}
			}
			os.Remove(n)
		}
	}
	if all {
		// A commit's pack being streamed by a writer killed meanwhile.
		for _, prefix := range []string{packTempPrefix, idxTempPrefix} {
			names, _ := filepath.Glob(filepath.Join(r.objects, "pack", prefix+"*"))
			for _, n := range names {
				os.Remove(n)
			}
		}
	}
}

func hashOrUnborn(h plumbing.Hash) string {
	if h.IsZero() {
		return "unborn"
	}
	return h.String()
}

// validRefName is a conservative check that a ref name cannot escape the
// git directory or name a lock file.
func validRefName(name string) bool {
	if name == "" || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".lock") {
		return false
	}
	for part := range strings.SplitSeq(name, "/") {
		if part == "" || part == "." || part == ".." || strings.HasPrefix(part, ".") {
			return false
		}
	}
	return !strings.ContainsAny(name, "\\\x00 ~^:?*[")
}

// parseHash parses a full hexadecimal object name.
func parseHash(s string) (plumbing.Hash, bool) {
	if len(s) != 40 {
		return plumbing.ZeroHash, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return plumbing.ZeroHash, false
		}
	}
	return plumbing.NewHash(s), true
}

// writeSynced creates name with data and syncs it.
func writeSynced(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// isNotDir reports ENOTDIR: a ref path whose parent is a file.
func isNotDir(err error) bool {
	return errors.Is(err, syscall.ENOTDIR)
}
