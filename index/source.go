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

// statLoader is a Source that lists its entry files without their stat
// data (as ListFiles does: Size -1) and loads a file with it, stated once
// open (Size -1 when it could not be). A rebuild then looks each path up
// once instead of twice, a stat pass and then the open: 4.5 s of system
// time at a million entries.
type statLoader interface {
	List() ([]FileStat, error)
	LoadStat(path string) (Doc, FileStat, error)
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

// statWorkers is how many workers StatFiles runs: listing directories
// and stating their files. The work is system calls, so a few more than
// the cores keeps them busy while one waits on the disk.
const statWorkers = 4

// StatFiles is a fast stat pass over root/entries: it returns every file
// for which IsEntryPath holds, with its size and modification time, in no
// particular order. Directories are listed in parallel, and their files
// stated in batches of readDirBatch as they are listed, so that a store
// of a few large directories keeps every core busy; hidden directories
// and deleted/ trees are not entered. A missing entries/ directory gives
// an empty list. A store may implement Source.Stat with it.
func StatFiles(root string) ([]FileStat, error) { return walkFiles(root, true, nil) }

// ListFiles is StatFiles without the stat data: every file's Size is -1
// and its ModTime 0.
func ListFiles(root string) ([]FileStat, error) { return walkFiles(root, false, nil) }

// walkFiles is StatFiles (stat set) or ListFiles. With enter set, it is
// called with each directory's slash path, from the worker about to
// read it, before any of its entries is read (a watcher adds its watch
// there); an error from it ends the walk with that error.
func walkFiles(root string, stat bool, enter func(rel string) error) ([]FileStat, error) {
	if _, err := os.Lstat(filepath.Join(root, mem.EntriesDir)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	q := &statQueue{tasks: []statTask{{dir: mem.EntriesDir}}}
	q.cond = sync.NewCond(&q.mu)
	var (
		mu    sync.Mutex
		parts [][]FileStat
		total int
		first error
		wg    sync.WaitGroup
	)
	add := func(_ string, files []FileStat) {
		mu.Lock()
		parts = append(parts, files)
		total += len(files)
		mu.Unlock()
	}
	found := add // a batch listed: stated by the next free worker
	if stat {
		found = func(dir string, files []FileStat) { q.push(statTask{dir: dir, files: files}) }
	}
	for range statWorkers {
		wg.Go(func() {
			for {
				t, ok := q.pop()
				if !ok {
					return
				}
				var (
					dirs  []statTask
					files []FileStat
					err   error
				)
				if t.files == nil {
					if enter != nil {
						err = enter(t.dir)
					}
					if err == nil {
						dirs, err = listDir(root, t.dir, found)
					}
				} else {
					files, err = statBatch(root, t.dir, t.files)
				}
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

// statTask is a directory to list, or a batch of its files to stat.
type statTask struct {
	dir   string     // slash path relative to the root
	files []FileStat // the batch, their paths set; nil: list dir
}

// statQueue hands the stat pass's tasks to its workers. A worker that
// finds subdirectories or files queues them instead of doing them itself;
// the pass is over when the queue is empty and no worker is busy.
type statQueue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	tasks []statTask
	busy  int
}

func (q *statQueue) pop() (statTask, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.tasks) == 0 {
		if q.busy == 0 {
			return statTask{}, false
		}
		q.cond.Wait()
	}
	t := q.tasks[len(q.tasks)-1]
	q.tasks = q.tasks[:len(q.tasks)-1]
	q.busy++
	return t, true
}

// push queues tasks while the worker goes on with its own.
func (q *statQueue) push(t statTask) {
	q.mu.Lock()
	q.tasks = append(q.tasks, t)
	q.mu.Unlock()
	q.cond.Signal()
}

// finish ends a worker's task, queueing what it found.
func (q *statQueue) finish(sub []statTask) {
	q.mu.Lock()
	q.tasks = append(q.tasks, sub...)
	q.busy--
	q.mu.Unlock()
	q.cond.Broadcast()
}

// readDirBatch is how many entries of a directory listDir reads at once,
// and how many files a task of the stat pass states.
const readDirBatch = 4096

// listDir lists one directory of the stat pass: it hands each batch of
// the entry files in it to found, their Size -1 (their paths sharing one
// buffer: one allocation where there was one a file), and returns the
// subdirectories to visit next.
func listDir(root, rel string, found func(dir string, files []FileStat)) (dirs []statTask, err error) {
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil // removed while we walked
		}
		return nil, fmt.Errorf("stat pass: %w", err)
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(readDirBatch)
		if err == io.EOF || err == nil && len(ents) == 0 {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("stat pass: %w", err)
		}
		files, sub := sortEntries(rel, ents, true)
		for _, d := range sub {
			dirs = append(dirs, statTask{dir: d})
		}
		if len(files) > 0 {
			found(rel, files)
		}
	}
	return dirs, nil
}

// sortEntries sorts a batch of directory rel's entries into the live
// entry files among them (regular files whose path IsEntryPath; only when
// files is set) and the live directories to descend into. Their paths
// share one buffer.
func sortEntries(rel string, ents []fs.DirEntry, files bool) (entries []FileStat, dirs []string) {
	size := 0
	for _, e := range ents {
		if files || e.IsDir() {
			size += len(rel) + 1 + len(e.Name())
		}
	}
	arena := make([]byte, 0, size)
	for _, e := range ents {
		name := e.Name()
		if name == "" || name[0] == '.' || !files && !e.IsDir() {
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
		if entries == nil {
			entries = make([]FileStat, 0, len(ents))
		}
		entries = append(entries, FileStat{Path: p, Size: -1})
	}
	return entries, dirs
}

// statBatch states files, a batch of directory rel's entry files, in
// place: those removed since they were listed are left out.
func statBatch(root, rel string, files []FileStat) ([]FileStat, error) {
	d, err := os.Open(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil // removed since
		}
		return nil, fmt.Errorf("stat pass: %w", err)
	}
	defer d.Close()
	out := files[:0]
	for _, f := range files {
		st, err := fstatat(d, f.Path[len(rel)+1:])
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("stat pass: %s: %w", f.Path, err)
		}
		st.Path = f.Path
		out = append(out, st)
	}
	return out, nil
}

// nativePath turns a store-relative slash path into a file system path.
func nativePath(root, p string) string {
	return filepath.Join(root, filepath.FromSlash(path.Clean(p)))
}
