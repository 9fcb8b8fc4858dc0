package mem

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/miramem/mira/internal/fault"
	"github.com/miramem/mira/internal/gitrepo"
)

// Bulk is a change that adds many new entries a part at a time (a bulk
// load): each part's files are made as it comes, so that a load of a
// million entries holds what its commit needs of each file (its path,
// blob and stat data, some 200 bytes) rather than every entry until the
// end (1.4 KB each). Like a Tx it is all or nothing: each part's paths
// are journaled, and synced, before its files are made; Commit makes one
// commit of them all; Rollback, and Store.Recover after a kill, remove
// every file made.
//
// The journal of a Bulk names a list beside it (bulkListName) that grows a
// line per path, written before the file: the journal itself is written
// once, whole, as a Tx's is.
type Bulk struct {
	s       *Store
	list    *os.File // the list of the paths added, open for appending
	listBuf []byte
	blobs   *gitrepo.Blobs
	changes []gitrepo.Change // one for each file made, in order
	made    map[string]bool  // directories there already or made
	ended   bool
	// What Subject says of the change: entries added by kind, the kinds
	// in the order first added, the first entry.
	counts map[string]int
	kinds  []string
	first  Op
	added  int
}

// bulkListName is the file in .git that lists, a line each, the paths a
// Bulk has added (or is about to add).
const bulkListName = "mira-journal-added"

// ErrNoBulk is BeginBulk's error where every file of a change is synced
// as it is written (Windows): there a Tx does the same work.
var ErrNoBulk = errors.New("a change in parts is not available on this system")

func (s *Store) bulkListPath() string { return filepath.Join(s.Root, ".git", bulkListName) }

// BeginBulk starts a change in parts. The caller holds the store lock.
func (s *Store) BeginBulk() (*Bulk, error) {
	if batchSync == math.MaxInt {
		return nil, ErrNoBulk
	}
	head, err := s.repo.Head()
	if err != nil {
		return nil, err
	}
	// The list, empty, before the journal that names it: a journal is
	// never without its list.
	list, err := os.OpenFile(s.bulkListPath(), os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, FileMode)
	if err != nil {
		return nil, fmt.Errorf("write journal: %w", err)
	}
	if err := list.Sync(); err != nil {
		list.Close()
		os.Remove(s.bulkListPath())
		return nil, fmt.Errorf("write journal: %w", err)
	}
	j := journal{Head: head, Added: bulkListName}
	jdata, err := j.marshal()
	if err == nil {
		err = WriteFileAtomic(s.journalPath(), jdata, FileMode)
	}
	if err != nil {
		list.Close()
		os.Remove(s.bulkListPath())
		return nil, fmt.Errorf("write journal: %w", err)
	}
	return &Bulk{s: s, list: list, made: map[string]bool{}, counts: map[string]int{}}, nil
}

// Add plans the entries of one part as Tx.AddOwned does (missing id,
// creation time and scope filled in, the path chosen from the layout, the
// entry validated), journals their paths and makes their files. The
// entries are not kept: the caller may drop or reuse them once Add
// returns. On error the whole change is rolled back, and b is done.
func (b *Bulk) Add(entries []*Entry) error {
	if b.ended {
		return errors.New("the change has ended")
	}
	if len(entries) == 0 {
		return nil
	}
	b.Expect(len(entries))
	tx := b.s.Begin(false)
	tx.Grow(len(entries))
	for _, e := range entries {
		if err := tx.add(e, true); err != nil {
			return b.fail(err, nil)
		}
		if b.added == 0 {
			b.first = tx.Ops[len(tx.Ops)-1]
		}
		if b.counts[e.Kind] == 0 {
			b.kinds = append(b.kinds, e.Kind)
		}
		b.counts[e.Kind]++
		b.added++
	}
	tx.Ops, tx.paths = nil, nil
	// The paths, synced, before their files.
	b.listBuf = b.listBuf[:0]
	for _, f := range tx.files {
		b.listBuf = append(append(b.listBuf, f.Path...), '\n')
	}
	if _, err := b.list.Write(b.listBuf); err != nil {
		return b.fail(fmt.Errorf("write journal: %w", err), nil)
	}
	if err := b.list.Sync(); err != nil {
		return b.fail(fmt.Errorf("write journal: %w", err), nil)
	}
	fresh := make([]int, len(tx.files))
	for i, f := range tx.files {
		fresh[i] = i
		if d := filepath.Dir(tx.abs(f.Path)); !b.made[d] {
			if err := os.MkdirAll(d, DirMode); err != nil {
				return b.fail(fmt.Errorf("write %s: %w", f.Path, err), nil)
			}
			b.made[d] = true
		}
	}
	changes := make([]gitrepo.Change, len(tx.files))
	reached := make([]bool, len(tx.files))
	if err := tx.createFresh(fresh, b.blobs, changes, reached); err != nil {
		var part []string
		for i, f := range tx.files {
			if reached[i] {
				part = append(part, f.Path)
			}
		}
		return b.fail(err, part)
	}
	b.changes = append(b.changes, changes...)
	return nil
}

// Expect says that a part of about n entries comes next, duplicates the
// caller drops included: the first part says whether the blobs go to a
// pack (as a Tx's size does; a part smaller than the largest is the last).
func (b *Bulk) Expect(n int) {
	if b.blobs == nil && !b.ended {
		b.blobs = b.s.repo.Blobs(n)
	}
}

// Added is the number of entries added so far.
func (b *Bulk) Added() int { return b.added }

// Subject is Subject(verb, ops) for the entries added: what a commit
// message's first line says of them.
func (b *Bulk) Subject(verb string) string {
	if b.added == 1 {
		return Subject(verb, []Op{b.first})
	}
	return countSubject(verb, b.added, b.kinds, b.counts)
}

// Commit makes the commit of every file added, with a message as
// Tx.Commit's. With nothing added it commits nothing and returns "".
// On failure the files are removed again.
func (b *Bulk) Commit(subject string, trailers ...Trailer) (string, error) {
	if b.ended {
		return "", errors.New("the change has ended")
	}
	if len(b.changes) == 0 {
		return "", b.Rollback()
	}
	if err := syncFS(b.s.Root); err != nil {
		return "", b.fail(err, nil)
	}
	fault.At(fault.TxFilesWritten)
	hash, err := b.blobs.Commit(b.changes, commitMessage(subject, "", b.s.Command, trailers), b.s.sig())
	if err != nil && !errors.Is(err, gitrepo.ErrIndexStale) {
		return "", b.fail(fmt.Errorf("commit: %w", err), nil)
	}
	// With ErrIndexStale the commit stands; only .git/index lags.
	b.end()
	return hash, nil
}

// Rollback removes every file added and ends the change.
func (b *Bulk) Rollback() error {
	if b.ended {
		return nil
	}
	return b.undo(nil)
}

// fail rolls the change back (the files of earlier parts and part, those
// of the failed part that were made) and returns err with what the roll
// back could not do.
func (b *Bulk) fail(err error, part []string) error {
	if b.ended {
		return err
	}
	if rerr := b.undo(part); rerr != nil {
		return errors.Join(err, fmt.Errorf("roll back: %w", rerr))
	}
	return err
}

func (b *Bulk) undo(part []string) error {
	j := journal{Files: make([]journalEntry, 0, len(b.changes)+len(part))}
	for _, c := range b.changes {
		j.Files = append(j.Files, journalEntry{Path: c.Path, Absent: true})
	}
	for _, p := range part {
		j.Files = append(j.Files, journalEntry{Path: p, Absent: true})
	}
	if err := b.s.undo(j); err != nil {
		// The journal stays: the next writer's Recover tries again.
		b.ended = true
		b.list.Close()
		if b.blobs != nil {
			b.blobs.Close()
		}
		return err
	}
	b.end()
	return nil
}

// end lets go of the change's files and journal.
func (b *Bulk) end() {
	b.ended = true
	b.list.Close()
	if b.blobs != nil {
		b.blobs.Close()
	}
	os.Remove(b.s.journalPath())
	os.Remove(b.s.bulkListPath())
	b.changes = nil
}

// readBulkList returns the paths of a Bulk's list: each whole line that
// is a path a change may write (a line cut short by a kill was never made).
func readBulkList(name string) ([]journalEntry, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []journalEntry
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			break // the end, or a line cut short
		}
		p := strings.TrimSuffix(line, "\n")
		if !changeablePath(p) {
			continue
		}
		out = append(out, journalEntry{Path: p, Absent: true})
	}
	return out, nil
}

// changeablePath reports whether rel is a path a change may write or
// remove: a clean path inside the store's entries or artifacts, never .git,
// never outside the store.
func changeablePath(rel string) bool {
	return rel == path.Clean(rel) && !strings.HasPrefix(rel, "/") && !strings.HasPrefix(rel, "../") &&
		(strings.HasPrefix(rel, EntriesDir+"/") || strings.HasPrefix(rel, "artifacts/"))
}

// BulkAvailable reports whether BeginBulk can start a change here.
func BulkAvailable() bool { return batchSync != math.MaxInt }
