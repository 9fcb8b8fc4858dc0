package mem

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/miramem/mira/internal/gitrepo"
	"github.com/miramem/mira/internal/paths"
	"github.com/miramem/mira/internal/rawfile"
	"github.com/oklog/ulid/v2"
)

// gitignore is written into a new store: everything derived or transient
// stays out of history.
const gitignore = paths.StoreIgnoreHead + `.index/
.lock
.lock.*
*.tmp
.sync-*
plans/
`

// Store is a memory directory: entry files in a git repository.
type Store struct {
	// Root is the store directory ($MIRA_HOME).
	Root string
	// Now is the clock; tests replace it.
	Now func() time.Time
	// Command names the running command in lock files and commit trailers.
	Command string
	// Author signs commits.
	Author, Email string

	repo *gitrepo.Repo

	idMu  sync.Mutex
	idEnt *ulid.MonotonicEntropy
}

// Marker is the file that says a directory is a Mira store. Mira writes
// it, committed, when it creates a store, and never takes over a
// directory that holds anything else.
const Marker = paths.StoreMarker

const markerText = "This directory is a Mira memory store: Markdown files in entries/, versioned with git.\n"

// ErrNoStore says there is no store at a directory (OpenExisting).
var ErrNoStore = errors.New("no Mira store")

// NotStoreError is a directory that holds files but is not a Mira store:
// Mira leaves it alone rather than commit into someone's repository.
type NotStoreError struct{ Root string }

func (e *NotStoreError) Error() string {
	return fmt.Sprintf("%s is not a Mira store: it is not empty and has no %s", e.Root, Marker)
}

// IsStore reports whether root is a Mira store: a git repository with the
// marker, or one made before the marker existed, recognised by the
// .gitignore Mira writes into every store.
func IsStore(root string) bool { return paths.IsStore(root) }

// claimable reports whether Mira may make root a store: it does not exist,
// or holds nothing but a lock file of Mira's, and, with emptyRepo, a git
// repository without history (what a creating command killed midway
// leaves).
func claimable(root string, emptyRepo bool) (bool, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	for _, e := range ents {
		switch n := e.Name(); {
		case n == lockFile, strings.HasPrefix(n, lockFile+"."):
		case n == ".git" && emptyRepo:
			r, err := gitrepo.Open(root)
			if err != nil {
				return false, nil
			}
			if head, err := r.Head(); err != nil || head != "" {
				return false, nil // a repository with history
			}
		default:
			return false, nil
		}
	}
	return true, nil
}

// Open opens the store at root, creating it (directory, git repository,
// .gitignore, marker and a first commit) when root does not exist or is
// empty. A directory that holds anything else and is not a Mira store is
// refused with a *NotStoreError. Creation takes the store lock so two
// first commands cannot both initialise it.
//
// The store's commits, the first one included, are signed "mira
// <mira@localhost>"; OpenAs signs them as its caller says.
func Open(ctx context.Context, root, command string, lockTimeout time.Duration) (*Store, error) {
	return OpenAs(ctx, root, command, lockTimeout, Signature{})
}

// Signature is who a store's commits are signed by; an empty field is
// Mira's own ("mira", "mira@localhost").
type Signature struct {
	Name, Email string
}

// OpenAs is Open with the commits, the first one included, signed by sig:
// a program passes its user's (GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL), and
// a server its client's, not its own process's.
func OpenAs(ctx context.Context, root, command string, lockTimeout time.Duration, sig Signature) (*Store, error) {
	s, err := newStore(root, command)
	if err != nil {
		return nil, err
	}
	s.Sign(sig)
	if !IsStore(s.Root) {
		if err := s.create(ctx, lockTimeout); err != nil {
			var ns *NotStoreError
			if errors.As(err, &ns) {
				return nil, err
			}
			return nil, fmt.Errorf("create store %s: %w", s.Root, err)
		}
	}
	return s, s.openRepo()
}

// OpenExisting opens the store at root and never creates anything: a
// missing or empty directory is an error matching ErrNoStore (and
// fs.ErrNotExist), any other directory that is not a store a
// *NotStoreError. Reading commands open stores this way.
func OpenExisting(root, command string) (*Store, error) {
	s, err := newStore(root, command)
	if err != nil {
		return nil, err
	}
	if !IsStore(s.Root) {
		if ok, err := claimable(s.Root, false); err != nil {
			return nil, err
		} else if ok {
			return nil, &noStoreError{s.Root}
		}
		return nil, &NotStoreError{Root: s.Root}
	}
	return s, s.openRepo()
}

// Absent returns the store that root would be, which is not there: it
// reads as empty, without history, and may only be read or written by a
// dry run (Begin(true)), which shows what a first command would do.
func Absent(root, command string) *Store {
	s, err := newStore(root, command)
	if err != nil {
		s = &Store{Root: root, Now: time.Now, Command: command}
		s.Sign(Signature{})
	}
	return s
}

// noStoreError is a missing or empty store directory; it matches both
// ErrNoStore and fs.ErrNotExist.
type noStoreError struct{ root string }

func (e *noStoreError) Error() string { return "no Mira store at " + e.root }

func (e *noStoreError) Is(target error) bool { return target == ErrNoStore || target == fs.ErrNotExist }

func newStore(root, command string) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	s := &Store{Root: abs, Now: time.Now, Command: command}
	s.Sign(Signature{})
	return s, nil
}

// Sign makes sig the signature of the store's next commits.
func (s *Store) Sign(sig Signature) {
	s.Author = cmp.Or(sig.Name, "mira")
	s.Email = cmp.Or(sig.Email, "mira@localhost")
}

func (s *Store) openRepo() error {
	r, err := gitrepo.Open(s.Root)
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.Root, err)
	}
	s.repo = r
	return nil
}

func (s *Store) create(ctx context.Context, lockTimeout time.Duration) error {
	ok, err := claimable(s.Root, false)
	if err != nil {
		return err
	}
	_, lerr := os.Stat(filepath.Join(s.Root, lockFile))
	creating := lerr == nil // another command is making the store, or was
	if !ok && !creating {
		return &NotStoreError{Root: s.Root}
	}
	if err := os.MkdirAll(s.Root, DirMode); err != nil {
		return err
	}
	if fi, err := os.Stat(s.Root); err == nil && fi.Mode().Perm()&0o077 != 0 && unixModes {
		// An empty directory the user made: the store is private.
		if err := os.Chmod(s.Root, fi.Mode().Perm()&^0o077); err != nil {
			return err
		}
	}
	l, err := acquire(ctx, filepath.Join(s.Root, lockFile), s.Command, lockTimeout)
	if err != nil {
		return err
	}
	defer l.Unlock()
	if IsStore(s.Root) {
		return nil // another command created it meanwhile
	}
	if ok, err := claimable(s.Root, creating); err != nil || !ok {
		if err == nil {
			err = &NotStoreError{Root: s.Root}
		}
		return err
	}
	if _, err := gitrepo.Init(s.Root); err != nil {
		return err
	}
	r, err := gitrepo.Open(s.Root)
	if err != nil {
		return err
	}
	if head, err := r.Head(); err != nil || head != "" {
		if err == nil {
			err = &NotStoreError{Root: s.Root}
		}
		return err
	}
	if err := os.MkdirAll(filepath.Join(s.Root, "entries"), DirMode); err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(s.Root, ".gitignore"), []byte(gitignore), FileMode); err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(s.Root, Marker), []byte(markerText), FileMode); err != nil {
		return err
	}
	_, err = r.Commit([]gitrepo.Change{{Path: ".gitignore"}, {Path: Marker}}, "init: new memory store\n\nMira-Command: "+s.Command+"\n", s.sig())
	return err
}

func (s *Store) sig() gitrepo.Signature {
	return gitrepo.Signature{Name: s.Author, Email: s.Email, When: s.Now()}
}

// Lock takes the store's writer lock, waiting up to timeout. Every command
// that changes the store holds it from its first read of what it will change
// to its commit.
// Taking it also finishes a change that a killed writer left half done
// (see Recover).
func (s *Store) Lock(ctx context.Context, timeout time.Duration) (*Lock, error) {
	l, err := acquire(ctx, filepath.Join(s.Root, lockFile), s.Command, timeout)
	if err != nil {
		return nil, err
	}
	if _, err := s.Recover(); err != nil {
		l.Unlock()
		return nil, err
	}
	return l, nil
}

// Head returns the current commit, "" before the first.
func (s *Store) Head() (string, error) {
	if s.repo == nil {
		return "", nil // an Absent store
	}
	return s.repo.Head()
}

// Diff returns entry paths changed between two commits.
func (s *Store) Diff(from, to string) ([]string, error) {
	if s.repo == nil {
		return nil, nil // an Absent store
	}
	return s.repo.Diff(from, to, "entries/")
}

// NewID returns a new time-sortable id (a ULID) for time t. Ids made in one
// process for the same millisecond still sort in creation order.
func (s *Store) NewID(t time.Time) string {
	s.idMu.Lock()
	defer s.idMu.Unlock()
	if s.idEnt == nil {
		s.idEnt = ulid.Monotonic(rand.Reader, 0)
	}
	id, err := ulid.New(ulid.Timestamp(t), s.idEnt)
	if err != nil { // entropy exhausted within one millisecond: start afresh
		s.idEnt = ulid.Monotonic(rand.Reader, 0)
		id = ulid.MustNew(ulid.Timestamp(t), s.idEnt)
	}
	return id.String()
}

// Read parses the entry file at rel (slash path relative to the root).
func (s *Store) Read(rel string) (*Entry, error) {
	return s.ReadSized(rel, -1)
}

// ReadSized is Read of a file a stat pass found to hold size bytes, which
// saves a system call when it still does.
//
// A file larger than MaxFileBytes is not read: the error is a *ParseError
// naming it, as Parse would give.
func (s *Store) ReadSized(rel string, size int64) (*Entry, error) {
	if size > MaxFileBytes {
		return nil, &ParseError{rel, tooLarge(size)}
	}
	var e *Entry
	// Parse keeps copies of what it reads, never the bytes themselves.
	err := rawfile.ReadWith(filepath.Join(s.Root, filepath.FromSlash(rel)), size, MaxFileBytes, func(data []byte) error {
		var err error
		e, err = Parse(rel, data)
		return err
	})
	var big *rawfile.TooLargeError
	if errors.As(err, &big) {
		return nil, &ParseError{rel, tooLarge(big.Size)}
	}
	return e, err
}

// ReadStat is Read of a file whose size is not known, that also returns
// its size and time, stated once it is open (Size -1 when it could not
// be stated): they are those of what was read, given even when the file
// is broken.
func (s *Store) ReadStat(rel string) (*Entry, FileInfo, error) {
	return s.readStat(rel, nil)
}

// readStat is ReadStat making the front matter's nodes in room, when not
// nil.
func (s *Store) readStat(rel string, room *metaRoom) (*Entry, FileInfo, error) {
	var e *Entry
	st, err := rawfile.ReadStatWith(filepath.Join(s.Root, filepath.FromSlash(rel)), MaxFileBytes, func(data []byte) error {
		var err error
		e, err = parse(rel, data, room)
		return err
	})
	fi := FileInfo{Path: rel, Size: st.Size, ModTime: st.ModTime}
	var big *rawfile.TooLargeError
	if errors.As(err, &big) {
		return nil, fi, &ParseError{rel, tooLarge(big.Size)}
	}
	return e, fi, err
}

// ReadStatUse is ReadStat handing the entry to use rather than returning
// it, for bulk readers: the entry's front matter is read into room that
// the next file reuses, so use must not keep e (what it copies out of e,
// strings included, it may keep). Use runs only for an entry read without
// error; its error is returned.
func (s *Store) ReadStatUse(rel string, use func(e *Entry) error) (FileInfo, error) {
	room := metaRooms.Get().(*metaRoom)
	defer metaRooms.Put(room)
	e, fi, err := s.readStat(rel, room)
	if err != nil {
		return fi, err
	}
	err = use(e)
	e.meta = nil // its nodes are the next file's
	return fi, err
}

// FileInfo is one live entry file found by Scan.
type FileInfo struct {
	Path    string // slash path relative to the root
	Size    int64
	ModTime int64 // unix nanoseconds
}

// Scan lists every live entry file (everything under entries/ ending in .md,
// except under a scope's deleted/ directory) with its size and modification
// time. Directories are read in parallel: this runs before every search to
// find hand edits, so it must cost little more than the stat calls.
func (s *Store) Scan() ([]FileInfo, error) {
	root := filepath.Join(s.Root, "entries")
	type job struct{ rel string }
	var (
		mu    sync.Mutex
		out   []FileInfo
		first error
		wg    sync.WaitGroup
	)
	sem := make(chan struct{}, 8)
	var visit func(rel string, depth int)
	visit = func(rel string, depth int) {
		defer wg.Done()
		sem <- struct{}{}
		ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
		<-sem
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
			return
		}
		var local []FileInfo
		for _, de := range ents {
			name := de.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			child := name
			if rel != "" {
				child = rel + "/" + name
			}
			if de.IsDir() {
				if depth == 1 && name == "deleted" {
					continue
				}
				wg.Add(1)
				go visit(child, depth+1)
				continue
			}
			if !strings.HasSuffix(name, ".md") || !de.Type().IsRegular() {
				continue
			}
			info, err := de.Info()
			if err != nil {
				continue // removed between readdir and stat
			}
			local = append(local, FileInfo{Path: "entries/" + child, Size: info.Size(), ModTime: info.ModTime().UnixNano()})
		}
		mu.Lock()
		out = append(out, local...)
		mu.Unlock()
	}
	wg.Add(1)
	go visit("", 0)
	wg.Wait()
	slices.SortFunc(out, func(a, b FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return out, first
}

// Walk calls fn for every live entry, in path order. Files that do not parse
// are passed to bad (with a *ParseError) and skipped.
func (s *Store) Walk(fn func(*Entry) error, bad func(error)) error {
	files, err := s.Scan()
	if err != nil {
		return err
	}
	for _, f := range files {
		e, err := s.Read(f.Path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if bad != nil {
				bad(err)
			}
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// ValidID reports whether id has the form of a memory id: 1 to 64 letters,
// digits, '_' and '-'. (A regular expression with {1,64} compiled into 64
// copies of its class at every process start: 3 ms for it and scope's.)
func ValidID(id string) bool {
	return len(id) >= 1 && len(id) <= 64 && allOf(id, "_-")
}

// allOf reports whether every byte of s is an ASCII letter, a digit or
// one of extra.
func allOf(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// FindID locates the live entry with the given id. hint, when not empty, is
// a path to try first (from the index); otherwise the entries directory is
// searched by file name.
func (s *Store) FindID(id, hint string) (*Entry, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%q is not a memory id", id)
	}
	if hint != "" {
		if e, err := s.Read(hint); err == nil && e.ID == id {
			return e, nil
		}
	}
	suffix := "__" + id + ".md"
	files, err := s.Scan()
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if strings.HasSuffix(f.Path, suffix) {
			return s.Read(f.Path)
		}
	}
	// A hand-made file may carry the id only in its front matter.
	var found *Entry
	errFound := errors.New("found")
	err = s.Walk(func(e *Entry) error {
		if e.ID == id {
			found = e
			return errFound
		}
		return nil
	}, nil)
	if found != nil {
		return found, nil
	}
	if err != nil && err != errFound {
		return nil, err
	}
	return nil, fmt.Errorf("no memory with id %s: %w", id, fs.ErrNotExist)
}

// ContentHash identifies a memory's text for duplicate detection: the body
// with surrounding white space trimmed and line endings normalised.
func ContentHash(body string) string {
	body = strings.TrimSpace(strings.ReplaceAll(body, "\r\n", "\n"))
	// The body's bytes, not a copy of them: the hash only reads them.
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(body), len(body)))
	return hex.EncodeToString(sum[:16])
}

// ValidScope reports why a scope name cannot be a directory name, or nil.
func ValidScope(scope string) error {
	ok := len(scope) >= 1 && len(scope) <= MaxScopeBytes && allOf(scope[:1], "") && allOf(scope, "._-")
	if !ok || scope == "deleted" || strings.Contains(scope, "..") {
		return fmt.Errorf("invalid scope %q: use letters, digits, '.', '_' and '-' (at most %d, not starting with a symbol)", scope, MaxScopeBytes)
	}
	return nil
}

// ScopeName turns a name (a project's, a user's e-mail address) into the
// scope its memories are kept in, or "" when nothing of it can be one:
// each character other than a letter, a digit, '.', '_' or '-' becomes
// '-', ".." becomes ".", symbols at either end go, and the rest is cut to
// MaxScopeBytes.
func ScopeName(name string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := b.String()
	for strings.Contains(s, "..") {
		s = strings.ReplaceAll(s, "..", ".")
	}
	s = strings.Trim(s, ".-_")
	if len(s) > MaxScopeBytes {
		s = strings.TrimRight(s[:MaxScopeBytes], ".-_")
	}
	if ValidScope(s) != nil {
		return ""
	}
	return s
}

// Validate checks an entry before it is written, its fields' limits
// (CheckLimits) included.
func Validate(e *Entry) error {
	if e.ID != "" && !ValidID(e.ID) {
		return fmt.Errorf("field \"id\": %s is not a memory id (1 to 64 letters, digits, '_' and '-')", quote(e.ID, 64))
	}
	if err := ValidScope(e.Scope); err != nil {
		return err
	}
	if !slices.Contains(Kinds, e.Kind) {
		return fmt.Errorf("unknown kind %q (want one of %s)", e.Kind, strings.Join(Kinds, ", "))
	}
	if e.Kind == KindTurn && e.Role != "" && !slices.Contains(Roles, e.Role) {
		return fmt.Errorf("unknown role %q (want user, assistant or tool)", e.Role)
	}
	if e.Kind == KindSummary && e.Level != "" && !slices.Contains(Levels, e.Level) {
		return fmt.Errorf("unknown summary level %q (want L1, L2 or L3)", e.Level)
	}
	if e.Pin != "" && e.Pin != PinSticky && e.Pin != PinLeased {
		return fmt.Errorf("unknown pin %q (want sticky or leased)", e.Pin)
	}
	if e.Pin == PinLeased && e.PinUntil.IsZero() && e.PinTask == "" {
		return errors.New("a leased pin needs an end: a time (pin_until) or a task (pin_task)")
	}
	if e.PinTask != "" {
		if e.Pin != PinLeased {
			return errors.New("pin_task applies only to a leased pin")
		}
		if !ValidID(e.PinTask) {
			return fmt.Errorf("pin_task: %q is not a memory id", e.PinTask)
		}
	}
	if strings.TrimSpace(e.Body) == "" {
		return errors.New("empty memory: nothing to remember")
	}
	if err := CheckLimits(e); err != nil {
		return err
	}
	for _, t := range e.Tags {
		if strings.TrimSpace(t) == "" || strings.ContainsAny(t, "\n\r") {
			return fmt.Errorf("invalid tag %q", t)
		}
	}
	return nil
}

// RepackThreshold is the number of loose git objects at which MaybeRepack
// packs them: each command writes a handful of loose objects, and a
// directory of thousands of small files slows git and wastes space.
const RepackThreshold = 1000

// MaybeRepack packs the store's loose git objects when there are at least
// RepackThreshold of them, or merges its packs when large commits (which
// write a pack each, see gitrepo.PackMin) have made gitrepo.MaxPacks of
// them, and reports whether it did. The caller holds the store lock, since
// a repack must not run at the same time as a commit.
func (s *Store) MaybeRepack() (bool, error) {
	n, err := s.repo.LooseObjectCount()
	if err != nil {
		return false, err
	}
	if n < RepackThreshold {
		packs, err := s.repo.PackCount()
		if err != nil {
			return false, err
		}
		if packs < gitrepo.MaxPacks {
			return false, nil
		}
	}
	if err := s.repo.Repack(); err != nil {
		return false, fmt.Errorf("repack: %w", err)
	}
	return true, nil
}
