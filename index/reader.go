package index

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ReaderOptions say how a Reader shares the index between the reads of a
// process.
type ReaderOptions struct {
	// Warm keeps the index open between reads and runs a file watcher that
	// keeps it fresh (as Watch does), for a long-running process. Without
	// it, each read opens the index and checks the store for changes
	// itself. When another process already watches the store, its watcher
	// is trusted and this one does not start.
	Warm bool
	// Lag, with Warm, lets reads search the index as the watcher last
	// left it instead of waiting for it to take in the latest commits of
	// turns: a server that stores every turn would otherwise make nearly
	// every read wait for indexing. A stored turn shows up in searches a
	// moment later; what the process's other writes changed (those it
	// reports through Wrote) is still waited for, so the next read sees
	// it: by Wrote itself, else by the next read. Reads that lag share one
	// open index; while the next one opens (which waits while the watcher
	// applies a batch), they search the one before it.
	Lag bool
	// Keep, when set, is the index state shared with other users of the
	// same process (a server that also runs index batches). Warm makes one
	// of its own when it is nil.
	Keep *Keep
	// Fresh, when set, is called before a read opens the index: a server
	// that watches the store makes it take in what changed so far.
	Fresh func() error
	// Open opens the index for a read; nil means Open. A program may
	// stand in for it to watch or hold the opens.
	Open func(Source, Options) (*Index, error)
}

// Reader shares one store's index between the reads of a process: it
// opens the index fresh for each read, or, kept warm (ReaderOptions.Warm),
// keeps its state open between reads, runs the watcher that keeps it
// fresh and lets reads search it as the watcher left it (ReaderOptions.Lag).
// Its methods are safe for concurrent use. The writers of the store tell
// it of their commits (Locked, Unlocked, Wrote), so that a read after a
// write sees it.
type Reader struct {
	src  func() Source
	head Source // for Head alone
	base Options
	ro   ReaderOptions
	keep *Keep

	// mu guards the opens of the index that share keep. A read that may
	// bring the index up to date (and so write it) holds it alone: the
	// kept state is one generation's, and two writers of the index would
	// wait out each other's lock. Reads that search the index as the
	// watcher left it (ReaderOptions.Lag) only read, and share it.
	mu sync.RWMutex

	// lagMu guards lag, the index open now for the reads that search it
	// as the watcher left it (openLagging), and lagOld, the one before it
	// while lag is being opened.
	lagMu  sync.Mutex
	lag    *lagIndex
	lagOld *lagIndex
	// lagDone is closed when the Reader closes (then lagClosed is set),
	// which waits for lagHolds, the goroutines holding an idle lagging
	// index (see releaseLagging).
	lagDone   chan struct{}
	lagClosed bool
	lagHolds  sync.WaitGroup

	stopWatch context.CancelFunc
	watchDone chan struct{}
	syncer    atomic.Pointer[Syncer] // nil when not watching
	// writes counts the writes reported by Wrote; indexed is the count
	// the index was last brought up to (ReaderOptions.Lag).
	writes, indexed atomic.Uint64
	// knownHead is the store's HEAD as the Reader last knew it: after the
	// process's own commits (Unlocked, under the store's lock, so exactly
	// its own) and its fresh reads. A lagging read whose HEAD differs,
	// because another process committed, is made fresh: what was written
	// elsewhere is seen by the next read.
	knownHead atomic.Pointer[string]
	holding   atomic.Bool   // the process holds the store's lock (Locked)
	watching  chan struct{} // closed once the watcher's first batch is done

	closeOnce sync.Once
}

// NewReader returns a Reader of the index of the store that src makes a
// Source of (a new one for each open), opened with opt (its Keep and
// Context are the Reader's, and SkipStat is set when ro.Fresh is).
// A warm Reader starts its watcher; Close it when done.
func NewReader(src func() Source, opt Options, ro ReaderOptions) *Reader {
	r := &Reader{src: src, head: src(), base: opt, ro: ro, keep: ro.Keep, lagDone: make(chan struct{})}
	if r.ro.Open == nil {
		r.ro.Open = Open
	}
	// The server's watcher takes in every change before the open
	// (ReaderOptions.Fresh), and when it cannot, the read is not answered
	// from here: its lease need not be read back.
	r.base.SkipStat = r.base.SkipStat || ro.Fresh != nil
	if ro.Warm {
		if r.keep == nil {
			r.keep = new(Keep)
		}
		r.startWatch()
	}
	return r
}

// Keep is the index state the Reader keeps between reads, nil when it
// keeps none.
func (r *Reader) Keep() *Keep { return r.keep }

// Close stops the watcher and lets go of the kept index. It does not wait
// for reads in progress; make none after it.
func (r *Reader) Close() error {
	r.closeOnce.Do(func() {
		if r.stopWatch != nil {
			r.stopWatch()
			<-r.watchDone
		}
		r.lagMu.Lock()
		r.lagClosed = true
		r.lagMu.Unlock()
		close(r.lagDone)
		r.lagHolds.Wait() // an idle lagging index is closed
		if r.ro.Warm && r.ro.Keep == nil && r.keep != nil {
			r.mu.Lock()
			r.keep.Release()
			r.mu.Unlock()
		}
	})
	return nil
}

func (r *Reader) warn(path string, err error) {
	if r.base.Warn != nil {
		r.base.Warn(path, err)
	}
}

// options are the options of every open, bounded by ctx.
func (r *Reader) options(ctx context.Context) Options {
	o := r.base
	o.Keep, o.Context = r.keep, ctx
	return o
}

// startWatch runs the watcher of a warm Reader. Another process's watcher
// (mira-index watch, a second server) is trusted instead.
func (r *Reader) startWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	r.stopWatch, r.watchDone = cancel, make(chan struct{})
	syncer := NewSyncer()
	r.syncer.Store(syncer)
	r.watching = make(chan struct{})
	var once sync.Once
	go func() {
		defer close(r.watchDone)
		defer once.Do(func() { close(r.watching) })
		err := Watch(ctx, r.src(), r.options(ctx), func(ev Event) {
			if ev.Err != nil {
				r.warn("", fmt.Errorf("index watcher: %w (retried with the next change)", ev.Err))
				return
			}
			once.Do(func() { close(r.watching) })
		}, syncer)
		if err != nil && !errors.Is(err, ErrWatching) && ctx.Err() == nil {
			r.warn("", fmt.Errorf("index watcher stopped: %w", err))
		}
		r.syncer.Store(nil)
	}()
}

// Watch keeps the index fresh until ctx ends, as Watch does, with the
// Reader's options.
func (r *Reader) Watch(ctx context.Context, events func(Event), sync *Syncer) error {
	return Watch(ctx, r.src(), r.options(ctx), events, sync)
}

// fresh brings the index up to what changed so far, through this
// process's watcher when it runs.
func (r *Reader) fresh(ctx context.Context) error {
	if r.ro.Fresh != nil {
		return r.ro.Fresh()
	}
	if r.watching == nil {
		return nil
	}
	select {
	case <-r.watching:
	case <-ctx.Done():
		return ctx.Err()
	}
	s := r.syncer.Load()
	if s == nil {
		return nil // not watching: each open checks the store itself
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Sync(sctx); err != nil && ctx.Err() == nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil // the watcher is stuck: Open's own checks still run
		}
		r.warn("", fmt.Errorf("index watcher: %w", err))
	}
	return nil
}

// Read runs fn with the index open and fresh (or, when ReaderOptions.Lag
// allows it, as the watcher last left it).
func (r *Reader) Read(ctx context.Context, fn func(*Index) error) error {
	if r.keep != nil {
		for {
			r.mu.RLock()
			if ix, done := r.openLagging(ctx); ix != nil {
				defer r.mu.RUnlock()
				defer done()
				return fn(ix)
			}
			r.mu.RUnlock()
			r.mu.Lock()
			if !r.Lagging() {
				defer r.mu.Unlock()
				break
			}
			// A read before this one brought the index up to date
			// while this one waited: lag behind it with the others.
			r.mu.Unlock()
		}
	}
	ix, err := r.openFresh(ctx)
	if err != nil {
		return err
	}
	defer ix.Close()
	return fn(ix)
}

// openFresh opens the index brought up to date with the store. The
// caller holds mu when the Reader keeps the index, and closes it.
func (r *Reader) openFresh(ctx context.Context) (*Index, error) {
	w := r.writes.Load()
	// What the fresh open below takes in; stored unless a commit of ours
	// made something newer known meanwhile.
	known := r.knownHead.Load()
	head, headErr := r.head.Head()
	if r.Lagging() {
		// Another writer may have brought the index along meanwhile.
		opt := r.options(ctx)
		opt.NoRefresh = true
		if ix, err := r.ro.Open(r.src(), opt); err == nil {
			return ix, nil
		}
	}
	if err := r.fresh(ctx); err != nil {
		return nil, err
	}
	ix, err := r.ro.Open(r.src(), r.options(ctx))
	if err != nil && diskFull(err) {
		// Reads go on when the disk is full: the index as it was last
		// brought up to date is searched, with one warning.
		opt := r.options(ctx)
		opt.NoRefresh = true
		if ix, oerr := r.ro.Open(r.src(), opt); oerr == nil {
			r.warn("", errors.New("the disk is full: searching the index as it was last brought up to date, without the changes since (free some space)"))
			return ix, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open index: %w", err)
	}
	if r.indexed.Load() < w {
		r.indexed.Store(w) // a racing reader storing less costs only a wait
	}
	if headErr == nil {
		r.knownHead.CompareAndSwap(known, &head)
	}
	return ix, nil
}

// diskFull reports whether err is a write refused for want of space: the
// disk, or the user's quota, is full.
func diskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Status describes the index as it is, building it first when there is
// none yet.
func (r *Reader) Status(ctx context.Context) (Status, error) {
	if r.keep != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
	}
	opt := r.options(ctx)
	opt.NoRefresh = true
	ix, err := Open(r.src(), opt)
	if errors.Is(err, ErrNoIndex) || IsDamaged(err) {
		// Nothing to look at yet, or nothing to trust: build it, as any
		// reader would.
		opt.NoRefresh = false
		ix, err = Open(r.src(), opt)
	}
	if err != nil {
		return Status{}, fmt.Errorf("cannot open index: %w", err)
	}
	defer ix.Close()
	return ix.Status()
}

// Rebuild builds the index anew from the files.
func (r *Reader) Rebuild(ctx context.Context) (Stats, error) {
	if r.keep != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
	}
	return Rebuild(r.src(), r.options(ctx))
}

// Lagging reports whether a read may search the index as the watcher
// last left it (ReaderOptions.Lag): the watcher is up and brings the index
// along by itself, and nothing but turns was written since the index was
// last fresh.
func (r *Reader) Lagging() bool {
	return r.ro.Lag && r.writes.Load() == r.indexed.Load() && r.watching != nil && isDone(r.watching) && r.syncer.Load() != nil &&
		r.headKnown()
}

// headKnown reports whether the store's HEAD is the one the Reader last
// knew (see knownHead).
func (r *Reader) headKnown() bool {
	if r.holding.Load() {
		// This process holds the store's lock: no other can commit, and
		// a commit of ours moves HEAD before its Unlocked records it.
		return true
	}
	h, err := r.head.Head()
	known := r.knownHead.Load()
	return err == nil && known != nil && h == *known
}

// Locked tells the Reader that this process took the store's lock: until
// Unlocked, HEAD moves only by the process's own commits.
func (r *Reader) Locked() { r.holding.Store(true) }

// Unlocked tells the Reader, before this process lets go of the store's
// lock, that it is about to: the HEAD it leaves is its own commit's.
func (r *Reader) Unlocked() {
	if h, err := r.head.Head(); err == nil {
		r.knownHead.Store(&h)
	}
	r.holding.Store(false)
}

// Wrote records a write of this process other than turns: the reads that
// start after it must see it (ReaderOptions.Lag). A lagging Reader brings
// the index up to it here, in the writer, so that reads go on searching
// the index as the watcher leaves it instead of each waiting for the
// watcher; when that cannot be done, the write is counted and the next
// read brings the index up to date itself.
func (r *Reader) Wrote() {
	if !r.caughtUp() {
		r.writes.Add(1)
	}
}

// caughtUp asks the watcher to take in what was committed so far and
// reports whether the index now holds the store's head of before the
// request. Lagging indexes opened before then take no new readers.
func (r *Reader) caughtUp() bool {
	if !r.ro.Lag || r.watching == nil || !isDone(r.watching) || r.ro.Fresh != nil {
		return false
	}
	s := r.syncer.Load()
	if s == nil {
		return false
	}
	head, err := r.head.Head()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.Sync(ctx) != nil {
		return false
	}
	// The index opened to check is the one the reads after the write
	// search (it is searched past the 5 s of the check).
	opt := r.options(context.Background())
	opt.NoRefresh = true
	ix, err := r.ro.Open(r.src(), opt)
	if err != nil {
		return false
	}
	if ix.Commit() != head {
		ix.Close()
		return false // busy, or newer commits came meanwhile: the reader sees to it
	}
	// Nothing opened before now may take new readers, not even while
	// its successor opens; this one takes them, and is held open a
	// moment for them (see releaseLagging).
	ready := make(chan struct{})
	close(ready)
	l := &lagIndex{ready: ready, ix: ix, opened: time.Now(), users: 1}
	r.lagMu.Lock()
	r.lag, r.lagOld = l, nil
	r.lagMu.Unlock()
	r.releaseLagging(l)
	return true
}

// lagIndex is an index opened read-only as the watcher left it, searched
// by every lagging read that comes while it is young: concurrent reads
// share one open (one shared lock, one load of the rows) instead of each
// opening the generation for itself.
type lagIndex struct {
	ready  chan struct{} // closed once ix or err is set
	ix     *Index
	err    error
	opened time.Time
	users  int  // reads searching it now, and a hold; lagMu guards it
	idled  bool // it was held once when idle (see releaseLagging)
}

// lagIdle is how long the last lagging index is held open once nobody
// searches it: the next read may share it (while it is young) or search
// it while its successor opens, instead of waiting for that open.
const lagIdle = 250 * time.Millisecond

// LagShare is how long after it was opened a lagging index takes new
// readers. It is closed when its last reader is done (the newest after
// lagIdle), and let go of at once when a writer of this process must wait
// for its searches, so the watcher is never kept from writing the index.
const LagShare = 50 * time.Millisecond

// openLagging returns the index as the watcher last left it, and the
// function to call when done with it, when ReaderOptions.Lag allows it
// (see Lagging); nil when a fresh open is needed. The caller holds mu's
// read lock until done: a fresh open, which takes mu alone, so finds no
// lagging index searched (one may be held open, and is let go of if the
// fresh open must write the index: see releaseLagging).
func (r *Reader) openLagging(ctx context.Context) (*Index, func()) {
	if !r.Lagging() {
		return nil, nil
	}
	r.lagMu.Lock()
	l := r.lag
	if old := r.lagOld; l != nil && old != nil && !isDone(l.ready) && !r.keep.WriterOpening() {
		// The next index is being opened, which waits while the watcher
		// applies a batch: search the one before it meanwhile, a batch
		// further behind, rather than wait. Not when a writer of this
		// process waits for the searches of that index to end.
		old.users++
		r.lagMu.Unlock()
		return old.ix, func() { r.releaseLagging(old) }
	}
	if l != nil && (!isDone(l.ready) || time.Since(l.opened) < LagShare) {
		l.users++
		r.lagMu.Unlock()
		select {
		case <-l.ready:
		case <-ctx.Done():
			r.releaseLagging(l)
			return nil, nil
		}
	} else {
		release := func() {}
		if old := l; old != nil && old.err == nil {
			// Still searched (lag holds only indexes in use), so still
			// open: it is held open while its successor opens, for the
			// reads that come meanwhile, unless a writer of this process
			// comes to wait for its searches to end.
			r.lagOld = old
			old.users++
			var once sync.Once
			release = func() {
				once.Do(func() {
					r.lagMu.Lock()
					if r.lagOld == old {
						r.lagOld = nil
					}
					r.lagMu.Unlock()
					r.releaseLagging(old)
				})
			}
			opened, coming := make(chan struct{}), r.keep.WriterComing()
			defer close(opened)
			go func() {
				select {
				case <-coming:
					release()
				case <-opened:
				}
			}()
		}
		l = &lagIndex{ready: make(chan struct{}), users: 1}
		r.lag = l
		r.lagMu.Unlock()
		// Shared with other reads: the first one's cancellation must
		// not end theirs.
		opt := r.options(context.WithoutCancel(ctx))
		opt.NoRefresh = true
		l.ix, l.err = r.ro.Open(r.src(), opt)
		l.opened = time.Now()
		release()
		close(l.ready)
	}
	if l.err != nil {
		r.releaseLagging(l)
		return nil, nil
	}
	return l.ix, func() { r.releaseLagging(l) }
}

// releaseLagging gives back a lagging index; the last reader closes it.
// The newest one, left by its last reader, is held open for lagIdle first,
// unless a writer of this process comes to wait for its searches to end or
// the Reader closes.
func (r *Reader) releaseLagging(l *lagIndex) {
	r.lagMu.Lock()
	l.users--
	if l.users == 0 && r.lag == l && l.err == nil && !l.idled && !r.lagClosed {
		l.users, l.idled = 1, true
		coming := r.keep.WriterComing()
		r.lagHolds.Add(1)
		r.lagMu.Unlock()
		go func() {
			defer r.lagHolds.Done()
			t := time.NewTimer(lagIdle)
			defer t.Stop()
			select {
			case <-t.C:
			case <-coming:
			case <-r.lagDone:
			}
			r.releaseLagging(l)
		}()
		return
	}
	last := l.users == 0
	if last && r.lag == l {
		r.lag = nil
	}
	if last && r.lagOld == l {
		r.lagOld = nil
	}
	r.lagMu.Unlock()
	if last && l.ix != nil {
		l.ix.Close()
	}
}

// isDone reports whether ch is closed.
func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
