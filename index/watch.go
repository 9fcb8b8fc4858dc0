package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/internal/proc"
	"github.com/miramem/mira/internal/rawfile"
	"github.com/miramem/mira/mem"
)

// ErrWatching is returned by Watch when another watcher already keeps the
// index fresh.
var ErrWatching = errors.New("another watcher is running")

const (
	debounce  = 100 * time.Millisecond // quiet time that ends a burst of events
	maxDelay  = time.Second            // longest a busy stream delays a batch
	heartbeat = 2 * time.Second        // lease refresh and head poll
	leaseTTL  = 5 * heartbeat          // a lease older than this is not trusted
	// cookieWait bounds Sync's wait for its cookie's event (it comes in
	// well under a millisecond).
	cookieWait = 100 * time.Millisecond
)

// Event reports one batch applied by Watch.
type Event struct {
	Time  time.Time
	Stats Stats // what the batch did
	Full  bool  // the batch ran a full stat pass (at start, after an overflow)
	Err   error // the batch failed; its changes are retried with the next one
}

// lease is the watcher's .index/watch file. Readers that find it fresh
// skip their stat pass.
type lease struct {
	PID       int       `json:"pid"`
	Host      string    `json:"host"`
	Started   time.Time `json:"started"`
	Heartbeat time.Time `json:"heartbeat"`
}

var hostname = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return h
})

// readLease returns the lease and whether it is fresh: recent, and held by
// a live process (when that can be checked: same host).
func readLease(dir string) (lease, bool) {
	var l lease
	b, err := rawfile.Read(filepath.Join(dir, leaseName))
	if err != nil || json.Unmarshal(b, &l) != nil {
		return l, false
	}
	if time.Since(l.Heartbeat) > leaseTTL || l.Heartbeat.After(time.Now().Add(leaseTTL)) {
		return l, false
	}
	if l.Host == hostname() && !proc.Alive(l.PID) {
		return l, false
	}
	return l, true
}

// watcherActive reports whether a watcher holds a fresh lease on the index.
func watcherActive(dir string) bool {
	_, ok := readLease(dir)
	return ok
}

func writeLease(dir string, l lease) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	// A heartbeat need not survive a crash (a lost one only makes readers
	// run their own stat pass), so it is not synced to disk.
	return atomicfile.Write(filepath.Join(dir, leaseName), append(b, '\n'), 0o600, false)
}

// Syncer lets a process that runs Watch search the index as fresh as the
// watcher can make it: Sync has the watcher apply, at once, the events it
// has received and any commit since its last batch, instead of after its
// debounce or its next head poll.
type Syncer struct{ c chan chan error }

// NewSyncer returns a Syncer to pass to Watch.
func NewSyncer() *Syncer { return &Syncer{c: make(chan chan error)} }

// Sync waits until the watcher has applied what it knows of, and returns
// the error of that batch, if it ran and failed. It waits for a watcher
// that is still catching up; ctx bounds the wait.
func (s *Syncer) Sync(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case s.c <- reply:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Watch keeps the index fresh until ctx ends: it watches every directory
// under entries/ (fsnotify watches are not recursive on Linux), gathers
// bursts of events for ~100 ms, and applies each burst in one batch,
// opening the index only for that batch. A new directory is watched first
// and then read, so a file created right after it is not missed. The head
// of the store is polled every two seconds, when the lease is renewed:
// commits are applied too. Each batch is reported to events (nil: not
// reported) and is one call for Options.Warn: a file that breaks is
// reported by the batch that loads it. Requests made through sync (nil:
// none) are answered once the lease is taken. Watch returns nil when ctx
// ends, and removes its lease.
func Watch(ctx context.Context, src Source, opt Options, events func(Event), sync *Syncer) error {
	root := src.Root()
	dir := newCall(opt).dir(src)
	if l, ok := readLease(dir); ok && !(l.PID == os.Getpid() && l.Host == hostname()) {
		return fmt.Errorf("watch: %w (pid %d on %s)", ErrWatching, l.PID, l.Host)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer fw.Close()
	w := &watcher{src: src, opt: opt, fw: fw, root: root, dir: dir, watched: map[string]bool{}}
	if events != nil {
		w.events = events
	} else {
		w.events = func(Event) {}
	}
	if err := fw.Add(root); err != nil {
		return fmt.Errorf("watch %s: %w", root, err)
	}
	// Without an index, catching up is a rebuild, which lists every
	// entry file: they are listed here as the watches are added, each
	// directory read once where it had been read twice (two seconds of
	// a first recall at a million entries).
	var list *listing
	if _, err := readCurrent(dir); err != nil {
		list = &listing{at: time.Now().UnixNano()}
		files, err := w.listTree()
		if err != nil {
			return err
		}
		list.files = files
	} else if _, err := w.addTree(mem.EntriesDir, false); err != nil {
		return err
	}
	// Catch up with everything before trusting the events; the lease is
	// taken once the index is fresh, before the first event is reported.
	var first Event
	for {
		ev, ok := w.batchWith(&pending{full: true}, list)
		list = nil // a retry lists again
		if ok {
			first = ev
			break
		}
		w.events(ev)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(heartbeat):
		}
	}
	l := lease{PID: os.Getpid(), Host: hostname(), Started: time.Now().UTC()}
	l.Heartbeat = l.Started
	if err := writeLease(dir, l); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer func() {
		if cur, _ := readLease(dir); cur.PID == l.PID && cur.Host == l.Host {
			os.Remove(filepath.Join(dir, leaseName))
		}
	}()
	w.events(first)
	var syncC chan chan error
	if sync != nil {
		syncC = sync.c
	}
	return w.loop(ctx, l, syncC)
}

// watcher is the state of one Watch call.
type watcher struct {
	src     Source
	opt     Options
	fw      *fsnotify.Watcher
	root    string
	dir     string
	watched map[string]bool // watched directories, relative slash paths
	events  func(Event)
	head    string // the head as of the last good batch
	cookies int    // cookie files made by Sync
}

// pending gathers the events of a burst.
type pending struct {
	full  bool
	paths map[string]bool
	dirs  map[string]bool
}

func (p *pending) empty() bool { return !p.full && len(p.paths) == 0 && len(p.dirs) == 0 }

func (p *pending) addPath(rel string) {
	if p.paths == nil {
		p.paths = map[string]bool{}
	}
	p.paths[rel] = true
}

func (p *pending) addDir(rel string) {
	if p.dirs == nil {
		p.dirs = map[string]bool{}
	}
	p.dirs[rel] = true
}

func (w *watcher) loop(ctx context.Context, l lease, syncC chan chan error) error {
	var (
		p     pending
		first time.Time // first event of the burst
		timer = time.NewTimer(time.Hour)
		tick  = time.NewTicker(heartbeat)
	)
	timer.Stop()
	defer tick.Stop()
	arm := func() {
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		timer.Reset(max(min(debounce, maxDelay-now.Sub(first)), 0))
	}
	flush := func() error {
		ev, ok := w.batch(&p)
		if ok {
			p = pending{}
		}
		first = time.Time{}
		w.events(ev)
		return ev.Err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.fw.Events:
			if !ok {
				return errors.New("watch: event stream closed")
			}
			w.handle(ev, &p)
			if !p.empty() {
				arm()
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return errors.New("watch: event stream closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				p.full = true
				arm()
				continue
			}
			w.events(Event{Time: time.Now(), Err: fmt.Errorf("watch: %w", err)})
		case <-timer.C:
			if !p.empty() {
				flush()
			}
		case reply := <-syncC:
			w.takeIn(&p)
			var err error
			head, herr := w.src.Head()
			if !p.empty() || (herr == nil && head != w.head) {
				timer.Stop()
				err = flush()
			}
			reply <- err
		case <-tick.C:
			l.Heartbeat = time.Now().UTC()
			if err := writeLease(w.dir, l); err != nil {
				w.events(Event{Time: time.Now(), Err: fmt.Errorf("watch: renew lease: %w", err)})
			}
			head, err := w.src.Head()
			if !p.empty() || (err == nil && head != w.head) {
				flush()
			}
		}
	}
}

// takeIn adds to the burst every event of a change made before it was
// called. Events reach the channel some time after the change, so it
// makes one of its own, a cookie file in the root, and reads events until
// the cookie's: the kernel queues events in order, so everything before
// the cookie has arrived by then.
func (w *watcher) takeIn(p *pending) {
	w.cookies++
	cookie := filepath.Join(w.root, fmt.Sprintf(".sync-%d-%d", os.Getpid(), w.cookies))
	if err := os.WriteFile(cookie, nil, 0o600); err != nil {
		return // the root is read-only: nothing of ours changes there either
	}
	defer os.Remove(cookie)
	deadline := time.NewTimer(cookieWait)
	defer deadline.Stop()
	for {
		select {
		case ev, ok := <-w.fw.Events:
			if !ok || ev.Name == cookie {
				return
			}
			w.handle(ev, p)
		case <-deadline.C:
			return
		}
	}
}

// handle adds one file system event to the burst.
func (w *watcher) handle(ev fsnotify.Event, p *pending) {
	rel, err := filepath.Rel(w.root, ev.Name)
	if err != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	if rel != mem.EntriesDir && !mem.IsLiveDir(path.Dir(rel)) {
		return // the root is watched only for entries/ to appear
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		if w.watched[rel] {
			// A directory went away with its files: look again at every
			// indexed file under it.
			for d := range w.watched {
				if d == rel || strings.HasPrefix(d, rel+"/") {
					delete(w.watched, d)
				}
			}
			p.addDir(rel)
			return
		}
		p.addPath(rel)
		return
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			files, err := w.addTree(rel, true)
			if err != nil {
				w.events(Event{Time: time.Now(), Err: err})
				p.full = true // something may have been missed
			}
			for _, f := range files {
				p.addPath(f.Path)
			}
			return
		}
	}
	p.addPath(rel)
}

// addTree watches a directory and the directories below it, then lists
// the entry files in them: a file created between the directory's creation
// and its watch is found by the listing, one created after by an event.
// With list false it only watches: at start with an index, the stat pass
// that follows reads every directory anyway (without one, listTree
// watches and lists for the rebuild). The files listed are those a stat
// pass finds (sortEntries).
//
// Each directory is read in batches, in the system's order: a store of a
// million entries has a few directories of 200,000 files each, and
// reading them sorted, a path made for every file, took two seconds of a
// server's start where the reading alone takes half a second.
func (w *watcher) addTree(rel string, list bool) ([]FileStat, error) {
	var files []FileStat
	var walk func(rel string) error
	walk = func(rel string) error {
		if !mem.IsLiveDir(rel) {
			return nil
		}
		if err := w.watch(rel); err != nil {
			return err
		}
		f, err := os.Open(nativePath(w.root, rel))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		defer f.Close()
		for {
			ents, err := f.ReadDir(readDirBatch)
			found, dirs := sortEntries(rel, ents, list)
			files = append(files, found...)
			for _, d := range dirs {
				if err := walk(d); err != nil {
					return err
				}
			}
			if err == io.EOF || err == nil && len(ents) == 0 {
				return nil
			}
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
		}
	}
	if err := walk(rel); err != nil {
		return files, fmt.Errorf("watch: %w", err)
	}
	return files, nil
}

// listTree watches entries/ and the directories below it, and lists the
// entry files in them as addTree does, with the directories read in
// parallel, as a rebuild's own listing reads them, each watched before it
// is read. Read one after another, they took 0.9 s more than that listing
// of a million entries, which the first recall paid.
func (w *watcher) listTree() ([]FileStat, error) {
	var mu sync.Mutex
	files, err := walkFiles(w.root, false, func(rel string) error {
		mu.Lock()
		defer mu.Unlock()
		return w.watch(rel)
	})
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	return files, nil
}

// watch adds a watch on the directory rel unless it has one. A directory
// that does not exist (any more) is no error: its creation is an event of
// the directory above.
func (w *watcher) watch(rel string) error {
	if w.watched[rel] {
		return nil
	}
	if err := w.fw.Add(nativePath(w.root, rel)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("watch %s: %w", rel, err)
	}
	w.watched[rel] = true
	return nil
}

// batch applies a burst: the paths and directories it names, or a full
// stat pass. It reports false when the burst is to be retried (the index
// was busy, or the update failed).
func (w *watcher) batch(p *pending) (Event, bool) { return w.batchWith(p, nil) }

// batchWith is batch handing a rebuild the files listed (nil: none).
func (w *watcher) batchWith(p *pending, listed *listing) (Event, bool) {
	start := time.Now()
	c := newCall(w.opt)
	c.listed = listed
	want := probe{full: true}
	if !p.full {
		// Broken files were reported when they broke; a batch reports
		// only what it loads.
		want = probe{quiet: true}
		for f := range p.paths {
			want.paths = append(want.paths, f)
		}
		for d := range p.dirs {
			want.dirs = append(want.dirs, d)
		}
	}
	ix, err := open(w.src, c, want)
	ev := Event{Time: start, Full: p.full}
	if err == nil {
		ev.Stats = ix.last
		if ix.stale > 0 {
			err = fmt.Errorf("%w: %d changes wait for the next batch", ErrBusy, ix.stale)
		}
		if cerr := ix.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	ev.Stats.Took = time.Since(start)
	if err != nil {
		ev.Err = fmt.Errorf("watch: %w", err)
		return ev, false
	}
	w.head = ev.Stats.Commit
	return ev, true
}
