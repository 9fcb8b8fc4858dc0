package index

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"
	"unsafe"

	"github.com/miramem/mira/mem"
)

// Doc is what the index knows of one entry file. Source and Pin are not
// indexed yet.
type Doc struct {
	ID string
	// Path is slash-separated and relative to the store root, e.g.
	// "entries/global/decisions/20261121T100000Z__01J9ABC.md".
	Path                                    string
	Kind, Scope, Project, Role, Source, Pin string
	Tags                                    []string
	Text                                    string // the body
	CreatedAt                               time.Time
	// Context is the text of the turn before a conversation turn (see
	// TurnOrder): it is indexed with the turn's text, so that the turn is
	// found by the words of what it answers. Not embedded, not stored.
	Context string
	// From are the ids of the entries this one was taken from (a fact's
	// extracted_from): each of them is found by this entry's words and
	// vector as well as by its own (see facts.go). Most entries have none.
	From []string
	// Hash identifies the text for duplicate detection (the store decides
	// how); it is kept in the document's vector row, for Finder.ByHash.
	Hash string
}

// FileStat is one entry file seen by a stat pass.
type FileStat struct {
	Path    string // slash-separated, relative to the store root
	Size    int64
	ModTime int64 // unix nanoseconds
}

// Source is the store as the index needs it. The store implements it; the
// index never parses entry files itself.
type Source interface {
	// Root is the store directory ($MIRA_HOME).
	Root() string
	// Head is the current commit hash, "" if there is none.
	Head() (string, error)
	// Diff lists the entry paths changed between two commits; from == ""
	// means every entry path in to.
	Diff(from, to string) ([]string, error)
	// Stat lists every live entry file under entries/ (never deleted/).
	Stat() ([]FileStat, error)
	// Load reads and parses one file. An error means the file is broken
	// (it is skipped and reported through Options.Warn), except one
	// matching fs.ErrNotExist, which means the file is gone.
	Load(path string) (Doc, error)
}

// sizedLoader is a Source that reads a file in fewer system calls when
// told the size the stat pass found it to have (Load otherwise).
type sizedLoader interface {
	LoadSized(path string, size int64) (Doc, error)
}

// IsEntryPath reports whether a slash-separated path relative to the store
// root names a live entry file as the index sees it: a "*.md" file under a
// scope's directory in entries/, not hidden (editor lock and swap files
// start with a dot), and not in a scope's deleted/ tree (see
// mem.ParsePath). Stat, Diff and watcher events are all filtered through
// it.
func IsEntryPath(p string) bool {
	ep, err := mem.ParsePath(p)
	return err == nil && !ep.Deleted
}

// statWorkers is how many directories are read at once by StatFiles. The
// work is system calls, so a few more than the cores keeps them busy while
// one waits on the disk.
const statWorkers = 4

// StatFiles is a fast stat pass over root/entries: it returns every file
// for which IsEntryPath holds, with its size and modification time, in no
// particular order. Directories are read in parallel and hidden directories
// and deleted/ trees are not entered. A missing entries/ directory gives an
// empty list. A store may implement Source.Stat with it.
func StatFiles(root string) ([]FileStat, error) {
	if _, err := os.Lstat(filepath.Join(root, mem.EntriesDir)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	q := &dirQueue{dirs: []string{mem.EntriesDir}}
	q.cond = sync.NewCond(&q.mu)
	var (
		mu    sync.Mutex
		parts [][]FileStat
		total int
		first error
		wg    sync.WaitGroup
	)
	for range statWorkers {
		wg.Go(func() {
			for {
				rel, ok := q.pop()
				if !ok {
					return
				}
				files, dirs, err := readDir(root, rel)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if len(files) > 0 {
					parts = append(parts, files)
					total += len(files)
				}
				mu.Unlock()
				q.finish(dirs)
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	// One copy into a slice of the right size: appended to as they came,
	// a million files were copied over and over.
	if len(parts) == 1 {
		return parts[0], nil
	}
	out := make([]FileStat, 0, total)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// dirQueue hands directories to the stat workers. A worker that finds
// subdirectories queues them instead of recursing; the walk is over when
// the queue is empty and no worker is busy.
type dirQueue struct {
	mu   sync.Mutex
	cond *sync.Cond
	dirs []string
	busy int
}

func (q *dirQueue) pop() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.dirs) == 0 {
		if q.busy == 0 {
			return "", false
		}
		q.cond.Wait()
	}
	d := q.dirs[len(q.dirs)-1]
	q.dirs = q.dirs[:len(q.dirs)-1]
	q.busy++
	return d, true
}

func (q *dirQueue) finish(sub []string) {
	q.mu.Lock()
	q.dirs = append(q.dirs, sub...)
	q.busy--
	q.mu.Unlock()
	q.cond.Broadcast()
}

// readDirBatch is how many entries of a directory readDir reads at once.
const readDirBatch = 4096

// readDir lists one directory of the stat pass: the entry files in it with
// their stat data, and the subdirectories to visit next.
func readDir(root, rel string) (files []FileStat, dirs []string, err error) {
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil // removed while we walked
		}
		return nil, nil, fmt.Errorf("stat pass: %w", err)
	}
	defer f.Close()
	// The directory is read a batch at a time (a directory of 200,000
	// files read whole grew a slice of that many entries), and the paths
	// of a batch share one buffer: one allocation where there was one a
	// file.
	for {
		ents, err := f.ReadDir(readDirBatch)
		if err == io.EOF || err == nil && len(ents) == 0 {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("stat pass: %w", err)
		}
		size := 0
		for _, e := range ents {
			size += len(rel) + 1 + len(e.Name())
		}
		arena := make([]byte, 0, size)
		for _, e := range ents {
			name := e.Name()
			if name == "" || name[0] == '.' {
				continue
			}
			at := len(arena)
			arena = append(append(append(arena, rel...), '/'), name...)
			p := unsafe.String(&arena[at], len(arena)-at)
			if e.IsDir() {
				if mem.IsLiveDir(p) {
					dirs = append(dirs, p)
				}
				continue
			}
			if !e.Type().IsRegular() || !IsEntryPath(p) {
				continue
			}
			fi, err := fstatat(f, name)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return nil, nil, fmt.Errorf("stat pass: %s: %w", p, err)
			}
			files = append(files, fi)
			files[len(files)-1].Path = p
		}
	}
	return files, dirs, nil
}

// nativePath turns a store-relative slash path into a file system path.
func nativePath(root, p string) string {
	return filepath.Join(root, filepath.FromSlash(path.Clean(p)))
}
