package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/miramem/mira/internal/arena"
)

// Rebuild builds a new generation of the index from every entry file and
// switches to it; the previous one is removed once no process uses it.
// Files are loaded on all cores; Options.Progress sees each step.
func Rebuild(src Source, opt Options) (Stats, error) {
	st, err := rebuild(src, newCall(opt))
	if err != nil {
		return st, fmt.Errorf("rebuild index: %w", err)
	}
	return st, nil
}

func rebuild(src Source, c *call) (st Stats, err error) {
	start := time.Now()
	dir := c.dir(src)
	c.heal(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return st, fmt.Errorf("create index directory: %w", err)
	}
	gen, err := newGeneration(dir)
	if err != nil {
		return st, err
	}
	genDir := filepath.Join(dir, gen)
	defer func() {
		if err != nil {
			os.RemoveAll(genDir)
		}
	}()
	// The new generation is locked while it is built, so that nobody
	// removes it meanwhile (tidy).
	lk, err := createLock(genDir, c.opt.LockTimeout)
	if err != nil {
		return st, fmt.Errorf("create index generation: %w", err)
	}
	defer lk.Close()
	// The head is read before the files: a commit made while they are
	// read shows up as a change at the next refresh instead of being lost.
	head, err := src.Head()
	if err != nil {
		return st, fmt.Errorf("read the store's head: %w", err)
	}
	statAt := time.Now().UnixNano()
	// A source that can is listed, its files stated as they are read.
	// A watcher that has just listed them (as it added its watches, so
	// that whatever changes after is an event) hands its listing over.
	var stats []FileStat
	if sl, ok := src.(statLoader); ok && c.listed != nil {
		// Taken, not shared: once copied into the index's own arena
		// below, the listing is garbage (a million paths, which the
		// collector would otherwise mark at each of its cycles).
		stats, statAt = c.listed.files, c.listed.at
		c.listed.files, c.listed = nil, nil
	} else if ok {
		stats, err = sl.List()
	} else {
		stats, err = src.Stat()
	}
	if err != nil {
		return st, fmt.Errorf("stat pass: %w", err)
	}
	ix := &Index{src: src, c: c, dir: dir, building: true, arena: &arena.Arena{}, termArena: &arena.Arena{}}
	files := make([]obs, 0, len(stats))
	for _, s := range stats {
		if IsEntryPath(s.Path) {
			s.Path = ix.arena.String(s.Path)
			files = append(files, obs{FileStat: s, seen: statAt})
		}
	}
	stats = nil
	// Loading in path order keeps documents of one directory together.
	slices.SortFunc(files, func(a, b obs) int { return strings.Compare(a.Path, b.Path) })
	now := c.opt.Now().UTC()
	m := meta{Version: FormatVersion, BuiltAt: now, VecSeq: 1}
	c.progress(0, len(files))
	man := manifest{}
	st, err = ix.apply(genDir, m, man, changes{head: head, load: files})
	if err != nil {
		return st, err
	}
	c.progress(len(files), len(files))
	// Then the vectors, from all the documents at once: the built-in
	// model is fitted on them. The manifest is written meanwhile (a
	// second at 100k, much of it waiting for the disk).
	wrote := make(chan error, 1)
	go func() { wrote <- writeManifest(genDir, man, nil) }()
	vm, err := c.buildVectors(dir, genDir, ix.added)
	if werr := <-wrote; err == nil {
		err = werr
	}
	if err != nil {
		return st, err
	}
	ix.added = nil
	m = ix.meta
	m.Embedder, m.Dim, m.DefaultEmbedder, m.FitDocs = vm.embedder, vm.dim, vm.defaultEmbedder, vm.fitDocs
	m.Vectors, m.Pending = vm.vectors, vm.pending
	if err := writeMeta(genDir, m); err != nil {
		return st, err
	}
	st.Vectors, st.Pending = vm.vectors, vm.pending
	st.Embedded, st.Cached = c.embedded, c.cached
	st.Rebuilt = true
	st.Took = time.Since(start)
	if err = writeFileAtomic(filepath.Join(dir, currentName), []byte(gen+"\n")); err != nil {
		return st, fmt.Errorf("switch to the new index: %w", err)
	}
	ix.tidy(gen)
	return st, nil
}

// buildPoll is how often a process waiting for another's rebuild looks
// whether it is done.
const buildPoll = 50 * time.Millisecond

// waitForBuild waits while another process builds a generation newer than
// the current one (or the first), and reports whether it waited: the
// caller then looks at the index again instead of building one of its
// own. Two builds at once took twice the time and twice the memory: a
// first recall after a large import, tired of waiting for the server it
// started, built the index beside it. A build that has run for staleAge
// is not waited for, nor is anything while ctx is done.
func (c *call) waitForBuild(dir string) bool {
	if !buildsSeen {
		return false
	}
	cur := int64(0)
	if gen, err := readCurrent(dir); err == nil {
		cur = genTime(gen)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	waited := false
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || !validGen(name) || genTime(name) <= cur || time.Since(time.Unix(0, genTime(name))) >= staleAge {
			continue
		}
		lock := filepath.Join(dir, name, lockName)
		for {
			unlock, idle := lockIdle(lock)
			if idle {
				unlock()
				break
			}
			if !waited {
				c.warn(dir, errors.New("waiting for another process building the index"))
			}
			waited = true
			select {
			case <-c.ctx().Done():
				return waited
			case <-time.After(buildPoll):
			}
			if time.Since(time.Unix(0, genTime(name))) >= staleAge {
				break
			}
		}
	}
	return waited
}

// newGeneration creates an empty generation directory named after the
// time, so that later generations sort after earlier ones.
func newGeneration(dir string) (string, error) {
	for n := time.Now().UnixNano(); ; n++ {
		name := genPrefix + strconv.FormatInt(n, 10)
		err := os.Mkdir(filepath.Join(dir, name), 0o700)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("create index generation: %w", err)
		}
		return name, nil
	}
}

// staleAge is when leftovers (temporary files, generations newer than the
// current one) are assumed abandoned by a crashed process.
const staleAge = time.Hour

// tidy removes generations other than current that no process has open,
// and abandoned temporary files. A generation newer than the current one
// is being built by someone and is left alone unless it is old.
func (ix *Index) tidy(current string) {
	ents, err := os.ReadDir(ix.dir)
	if err != nil {
		return
	}
	cur := genTime(current)
	for _, e := range ents {
		name := e.Name()
		p := filepath.Join(ix.dir, name)
		switch {
		case name == current:
		case e.IsDir() && validGen(name):
			if genTime(name) > cur && time.Since(time.Unix(0, genTime(name))) < staleAge {
				continue
			}
			unlock, ok := lockIdle(filepath.Join(p, lockName))
			if !ok {
				continue
			}
			os.RemoveAll(p)
			unlock()
		case strings.HasSuffix(name, ".tmp"):
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleAge {
				os.Remove(p)
			}
		}
	}
}

// heal removes what stands at the index directory's place and is not a
// directory (a file, a link to nothing), with one warning: the index is
// disposable, and nothing could be indexed until it is gone. A link to a
// directory (an index kept on another disk) is left alone.
func (c *call) heal(dir string) {
	fi, err := os.Stat(dir)
	if err == nil && fi.IsDir() {
		return
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return
	}
	if _, lerr := os.Lstat(dir); lerr != nil {
		return // nothing there: it is made
	}
	if rerr := os.Remove(dir); rerr != nil {
		c.warn(dir, fmt.Errorf("the index directory is not a directory, and cannot be removed: %w", rerr))
		return
	}
	c.warn(dir, errors.New("the index directory was not a directory: removed it, the index is rebuilt"))
}
