// Package treewatch tells a long-running process what changed under a
// directory tree since it last looked, so that it can skip the pass over
// every file's size and time that would otherwise tell it.
//
// It answers two questions, cheaply. Has the generation moved? A process
// that keeps an index of the tree answers from what it holds when it has
// not. Which files changed? Take returns the paths of the files created,
// written, removed or renamed since the last Take, so that the index looks
// at those alone; when that list is not to be trusted or would be long
// (a directory appeared, moved or went away, the event queue overflowed,
// a repository's HEAD or refs moved, more than MaxPaths files changed,
// the watcher failed), Take says to look at every file instead.
//
// fsnotify watches are not recursive on Linux: every directory is watched,
// and a new one is watched first and then counted as a change, so a file
// created in it before its watch is not missed. Sync lets a reader see a
// change made just before it asked, as mira-index watch does for the
// store (index.Syncer): it writes a cookie file in a directory of its own,
// watched by the same watcher, and waits for that file's event; events
// are queued in order, so every change made before has been counted.
package treewatch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// cookieWait bounds Sync's wait for its cookie's event (it comes well
// under a millisecond where events are delivered at all).
const cookieWait = 100 * time.Millisecond

// DefaultMaxPaths is Options.MaxPaths when unset.
const DefaultMaxPaths = 1000

// Options says which tree to watch.
type Options struct {
	// Root is the tree's top directory.
	Root string
	// Skip reports directories not to watch (slash paths relative to
	// Root; never "."). Changes under them are not seen.
	Skip func(rel string) bool
	// Git lists files outside the tree's watched directories whose
	// changes count too, such as a repository's HEAD and refs: each is
	// watched through its directory, and only events for the file itself,
	// or anything under it when it is a directory, count.
	Git []string
	// CookieDir is a directory of the caller's, outside anything that
	// counts, where Sync writes its cookie files. "" makes Sync a no-op.
	CookieDir string
	// MaxPaths bounds the changed paths kept between two Takes; past it,
	// Take says to look at every file. 0 means DefaultMaxPaths.
	MaxPaths int
}

// Changes are what changed under the tree since the last Take.
type Changes struct {
	// Paths are the absolute paths of the files created, written,
	// removed or renamed (a rename gives both names), sorted.
	Paths []string
	// All says Paths are not to be trusted: look at every file.
	All bool
	// Ignore says a .gitignore file changed: what Options.Skip answers
	// may have changed too (see Rescan).
	Ignore bool
}

// Watcher counts the changes under a tree. Its methods are safe for
// concurrent use.
type Watcher struct {
	opt     Options
	fw      *fsnotify.Watcher
	gen     atomic.Uint64
	cookies atomic.Uint64
	done    chan struct{}

	mu      sync.Mutex
	err     error                    // the watcher stopped working
	waiters map[string]chan struct{} // cookie path -> its Sync
	gitDirs map[string][]string      // a watched directory -> git paths under it
	watched map[string]bool          // directories watched, absolute
	pending map[string]bool          // files changed since the last Take
	all     bool                     // look at every file at the next Take
	ignore  bool                     // a .gitignore changed since the last Take
}

// Start watches the tree and returns at once; the first generation is 1,
// and the first Take says to look at every file (what changed before the
// start is not known). It fails when the tree's top cannot be watched; a directory below that
// cannot is left out, and the caller hears of it through Err.
func Start(opt Options) (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &Watcher{opt: opt, fw: fw, done: make(chan struct{}), waiters: map[string]chan struct{}{},
		gitDirs: map[string][]string{}, watched: map[string]bool{}, pending: map[string]bool{}, all: true}
	if w.opt.MaxPaths <= 0 {
		w.opt.MaxPaths = DefaultMaxPaths
	}
	w.gen.Store(1)
	if err := w.addTree(opt.Root); err != nil {
		fw.Close()
		return nil, err
	}
	for _, g := range opt.Git {
		g = filepath.Clean(g)
		dir := filepath.Dir(g)
		if fi, err := os.Stat(g); err == nil && fi.IsDir() {
			// A directory of refs: everything below counts.
			w.addDirs(g, func(string) bool { return false })
			w.gitDirs[g] = append(w.gitDirs[g], g)
		}
		if err := fw.Add(dir); err == nil {
			w.gitDirs[dir] = append(w.gitDirs[dir], g)
		}
	}
	if opt.CookieDir != "" {
		if err := fw.Add(opt.CookieDir); err != nil {
			w.opt.CookieDir = "" // Sync then only waits for nothing
		}
	}
	go w.loop()
	return w, nil
}

// Gen returns the current generation: it moves whenever something under
// the tree may have changed.
func (w *Watcher) Gen() uint64 { return w.gen.Load() }

// Err returns why the watcher stopped seeing changes, if it did: the
// caller should then look at the files itself.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Take returns what changed since the last Take and forgets it. A caller
// that fails to take the changes in should look at every file next time.
func (w *Watcher) Take() Changes {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := Changes{All: w.all || w.err != nil, Ignore: w.ignore}
	if !c.All {
		c.Paths = make([]string, 0, len(w.pending))
		for p := range w.pending {
			c.Paths = append(c.Paths, p)
		}
		slices.Sort(c.Paths)
	}
	clear(w.pending)
	w.all, w.ignore = false, false
	return c
}

// Rescan watches the directories of the tree not watched yet that
// Options.Skip no longer leaves out (after a .gitignore changed, say).
func (w *Watcher) Rescan() error {
	return w.addTree(w.opt.Root)
}

// touched records a changed file, or that every file must be looked at.
func (w *Watcher) touched(name string, all bool) {
	w.mu.Lock()
	switch {
	case all || w.all:
		w.all = true
		clear(w.pending)
	case len(w.pending) >= w.opt.MaxPaths && !w.pending[name]:
		w.all = true
		clear(w.pending)
	default:
		w.pending[name] = true
	}
	if filepath.Base(name) == ".gitignore" {
		w.ignore = true
	}
	w.mu.Unlock()
	w.gen.Add(1)
}

// Close stops the watcher.
func (w *Watcher) Close() error {
	err := w.fw.Close()
	<-w.done
	return err
}

// Sync returns once every change made before it was called has moved the
// generation (or after a short wait where events are late or missing).
func (w *Watcher) Sync(ctx context.Context) error {
	if w.opt.CookieDir == "" {
		return nil
	}
	name := filepath.Join(w.opt.CookieDir, fmt.Sprintf(".sync-%d-%d", os.Getpid(), w.cookies.Add(1)))
	ch := make(chan struct{})
	w.mu.Lock()
	w.waiters[name] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.waiters, name)
		w.mu.Unlock()
	}()
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		return nil // a read-only cache: nothing to wait for but the events already in
	}
	defer os.Remove(name)
	t := time.NewTimer(cookieWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-w.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (w *Watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok {
				w.fail(errors.New("watch: event stream closed"))
				return
			}
			w.handle(ev)
		case err, ok := <-w.fw.Errors:
			if !ok {
				w.fail(errors.New("watch: event stream closed"))
				return
			}
			// An overflow loses events, not the watches: the next update
			// looks at every file.
			w.touched("", true)
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				w.fail(fmt.Errorf("watch: %w", err))
			}
		}
	}
}

func (w *Watcher) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	w.touched("", true)
}

// handle counts one event, or answers a Sync.
func (w *Watcher) handle(ev fsnotify.Event) {
	dir := filepath.Dir(ev.Name)
	w.mu.Lock()
	if ch, ok := w.waiters[ev.Name]; ok {
		delete(w.waiters, ev.Name)
		close(ch)
		w.mu.Unlock()
		return
	}
	gits, isGit := w.gitDirs[dir]
	inTree := w.watched[dir]
	w.mu.Unlock()
	if w.opt.CookieDir != "" && dir == filepath.Clean(w.opt.CookieDir) {
		return // the caller's own files, and other processes' cookies
	}
	if isGit {
		for _, g := range gits {
			if ev.Name == g || strings.HasPrefix(ev.Name, g+string(filepath.Separator)) || dir == g {
				// HEAD or a ref moved: a checkout or a commit, whose
				// history and files are for a full look.
				if ev.Has(fsnotify.Create) {
					w.addDirs(ev.Name, func(string) bool { return false })
				}
				w.touched("", true)
				return
			}
		}
		if !inTree {
			return
		}
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if w.unwatch(ev.Name) {
			w.touched("", true) // a directory went away, or moved
			return
		}
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			if err := w.addTree(ev.Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				w.fail(err) // a directory gone already needs no watch
			}
			// Its files may have been made before its watch.
			w.touched("", true)
			return
		}
	}
	w.touched(ev.Name, false)
}

// unwatch forgets the watched directory name and those below it, if it
// was one: a directory that went away, or moved (its watches would
// report the old names). It reports whether name was watched.
func (w *Watcher) unwatch(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.watched[name] {
		return false
	}
	prefix := name + string(filepath.Separator)
	for d := range w.watched {
		if d == name || strings.HasPrefix(d, prefix) {
			delete(w.watched, d)
			w.fw.Remove(d) // already gone with the directory, most likely
		}
	}
	return true
}

// addTree watches dir and the directories below it that are not skipped.
func (w *Watcher) addTree(dir string) error {
	return w.addDirs(dir, func(abs string) bool {
		rel, err := filepath.Rel(w.opt.Root, abs)
		if err != nil || rel == "." {
			return false
		}
		return w.opt.Skip != nil && w.opt.Skip(filepath.ToSlash(rel))
	})
}

func (w *Watcher) addDirs(top string, skip func(string) bool) error {
	return filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == top {
				return fmt.Errorf("watch %s: %w", p, err)
			}
			return nil // gone, or unreadable: the index reports what it cannot read
		}
		if !d.IsDir() {
			return nil
		}
		if skip(p) {
			return filepath.SkipDir
		}
		w.mu.Lock()
		seen := w.watched[p]
		w.mu.Unlock()
		if seen {
			return nil
		}
		if err := w.fw.Add(p); err != nil {
			if p == top {
				return fmt.Errorf("watch %s: %w", p, err)
			}
			// Out of watches (fs.inotify.max_user_watches), most likely:
			// changes there would go unseen, so say so.
			w.fail(fmt.Errorf("watch %s: %w", p, err))
			return filepath.SkipDir
		}
		w.mu.Lock()
		w.watched[p] = true
		w.mu.Unlock()
		return nil
	})
}
