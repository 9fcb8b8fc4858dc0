package index

import (
	"sync"
	"time"
)

// keptLock is a generation's lock held between Opens of a Keep: shared
// when it only reads, exclusive when it writes. In one process the readers
// and the writer share one: a writer in this process takes it exclusively
// (writerFor) and leaves it kept, and the searches that come while it
// writes search the vector store they loaded before, which the writer
// never changes in place; they never wait for the lock. A writer that
// finds a shared lock lets it go first. The consistency checks of an Open
// (the files against the meta) and a writer's update are kept apart by
// the handle's own lock (gate).
//
// Another process needs the lock too, so the handle is let go of when it
// could be kept waiting: an idle handle is closed after keepIdle (a
// writable one after keepIdleWritable: its exclusive lock stops even the
// duplicate lookup of a mira-remember elsewhere), and a writable one, once
// older than keepWritable, when its last user is done, so that a reader
// elsewhere waits that long at most even under a steady stream of
// searches.
type keptLock struct {
	genDir   string
	lk       *genLock
	users    int // Indexes using it now
	idle     *time.Timer
	writable bool
	opened   time.Time
	gate     sync.RWMutex  // a writer's update (held) against an Open's checks (shared)
	closed   chan struct{} // closed once lk is
	// known is the meta last found to match the index under the gate:
	// what a search that attaches while a writer of this process holds
	// the gate goes by (see attachMeta). Guarded by knownMu.
	knownMu sync.Mutex
	known   *meta
	// reader, for a writable handle, takes the generation's lock shared.
	reader func() (*genLock, error)
}

// shut lets go of the lock; nobody uses it.
func (b *keptLock) shut() {
	b.lk.Close()
	close(b.closed)
}

// keepIdle is how long an unused kept handle stays open, keepIdleWritable
// an unused writable one, short because a writer in another process waits
// for it (a loop of mira-remember beside a serving watcher: the slowest
// waited about three times as long at 500 ms; docs/performance.md);
// keepWritable how long a writable one is kept before it is let go of at
// its next release.
const (
	keepIdle         = 500 * time.Millisecond
	keepIdleWritable = 50 * time.Millisecond
	keepWritable     = time.Second
	// keepWait bounds how long a writer waits for the searches of a
	// read-only handle to end before it tries the lock anyway.
	keepWait = 2 * time.Second
)

// lockFor returns the generation's index for reading: the kept handle
// when k has one for genDir (for reading or writing), else a new one
// opened read-only that k keeps. A non-nil kb is to be given back with
// releaseLock rather than closed.
func (k *Keep) lockFor(genDir string, open func() (*genLock, error)) (bi *genLock, kb *keptLock, err error) {
	if k == nil {
		bi, err = open()
		return bi, nil, err
	}
	keepMu.Lock()
	// A writer of this process opening the generation: its handle will
	// do, and a read-only one would only stop it.
	k.waitOpening()
	if b := k.held; b != nil && b.genDir == genDir {
		b.use()
		keepMu.Unlock()
		return b.lk, b, nil
	}
	// Another generation's handle (the index was rebuilt) goes now, or
	// when its last search ends.
	old, _ := k.detachLocked()
	keepMu.Unlock()
	old.shutNow()
	if bi, err = open(); err != nil {
		return nil, nil, err
	}
	keepMu.Lock()
	defer keepMu.Unlock()
	if k.held != nil {
		return bi, nil, nil // a concurrent Open kept its own meanwhile
	}
	k.held = k.newKept(genDir, bi, false)
	return bi, k.held, nil
}

// writerFor returns the generation's index opened for writing: the kept
// handle when it is a writable one of genDir, else a new one that k keeps
// for the searches of this process. The caller holds kb's gate while it
// writes.
//
// reader opens the generation read-only: once the writable handle goes
// (see downgrade), the searches of this process get one opened that way
// in the background rather than open it in their own time.
func (k *Keep) writerFor(genDir string, open, reader func() (*genLock, error)) (bi *genLock, kb *keptLock, err error) {
	if k == nil {
		bi, err = open()
		return bi, nil, err
	}
	keepMu.Lock()
	k.waitOpening()
	if b := k.held; b != nil && b.genDir == genDir && b.writable {
		b.use()
		keepMu.Unlock()
		return b.lk, b, nil
	}
	// A read-only handle's shared lock would stop us: it goes now, or
	// when its last search ends, which we wait for (searches take
	// milliseconds; a blind retry of the lock would sleep 50 ms and
	// more). No new handle is opened meanwhile.
	old, gone := k.detachLocked()
	ch := make(chan struct{})
	k.opening = ch
	if k.writerComes != nil {
		close(k.writerComes)
		k.writerComes = nil
	}
	keepMu.Unlock()
	old.shutNow()
	if gone != nil {
		select {
		case <-gone:
		case <-time.After(keepWait):
		}
	}
	bi, err = open()
	keepMu.Lock()
	defer keepMu.Unlock()
	k.opening = nil
	close(ch)
	if err != nil {
		return nil, nil, err
	}
	k.held = k.newKept(genDir, bi, true)
	k.held.reader = reader
	return bi, k.held, nil
}

// WriterOpening reports whether a writer of this process is opening the
// index for writing, waiting for the searches of a read-only handle to
// end: a search that could wait should not start on that handle now.
func (k *Keep) WriterOpening() bool {
	if k == nil {
		return false
	}
	keepMu.Lock()
	defer keepMu.Unlock()
	return k.opening != nil
}

// WriterComing returns a channel that is closed once a writer of this
// process starts opening the index for writing (at once when one is): an
// index held open only to be searched meanwhile must then be let go of,
// since the writer may wait for its searches to end.
func (k *Keep) WriterComing() <-chan struct{} {
	if k == nil {
		return nil
	}
	keepMu.Lock()
	defer keepMu.Unlock()
	if k.opening != nil {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	if k.writerComes == nil {
		k.writerComes = make(chan struct{})
	}
	return k.writerComes
}

// waitOpening waits until no writer of this process is opening a
// generation (see writerFor). keepMu is held, and held again on return.
func (k *Keep) waitOpening() {
	for k.opening != nil {
		ch := k.opening
		keepMu.Unlock()
		<-ch
		keepMu.Lock()
	}
}

// newKept makes the kept handle of bi with its first user. keepMu is held.
func (k *Keep) newKept(genDir string, bi *genLock, writable bool) *keptLock {
	b := &keptLock{genDir: genDir, lk: bi, users: 1, writable: writable, opened: time.Now(), closed: make(chan struct{})}
	b.idle = time.AfterFunc(time.Hour, func() { k.closeIdle(b) })
	b.idle.Stop()
	return b
}

// use counts one more user of b. keepMu is held.
func (b *keptLock) use() {
	b.users++
	b.idle.Stop()
}

// gated runs fn holding b's gate: alone when write, else shared with
// other readers. A handle that is not kept (nil) has the generation's
// lock for a gate.
func (b *keptLock) gated(write bool, fn func() error) error {
	switch {
	case b == nil:
	case write:
		b.gate.Lock()
		defer b.gate.Unlock()
	default:
		b.gate.RLock()
		defer b.gate.RUnlock()
	}
	return fn()
}

// setKnown records m as matching the index; the caller holds b's gate,
// alone or shared. A nil b records nothing.
func (b *keptLock) setKnown(m meta) {
	if b == nil {
		return
	}
	b.knownMu.Lock()
	b.known = &m
	b.knownMu.Unlock()
}

// attachMeta reads the meta that a search attaching to the handle b of
// genDir goes by. It reads it under b's gate, shared, unless a writer of
// this process holds the gate to apply a batch: then it takes the meta
// the writer found matching the index before it began, rather than wait
// the batch out (tens of milliseconds, and every search of a busy proxy
// with it). Such a search sees the index as one that attached just
// before the batch does (see keptLock).
func (b *keptLock) attachMeta(genDir string) (meta, error) {
	if b == nil {
		return readMeta(genDir)
	}
	if !b.gate.TryRLock() {
		b.knownMu.Lock()
		known := b.known
		b.knownMu.Unlock()
		if known != nil {
			return *known, nil
		}
		b.gate.RLock()
	}
	defer b.gate.RUnlock()
	m, err := readMeta(genDir)
	if err == nil {
		b.setKnown(m)
	}
	return m, err
}

// releaseLock gives back a handle that lockFor or writerFor returned.
func (k *Keep) releaseLock(b *keptLock) {
	keepMu.Lock()
	b.users--
	switch {
	case b.users > 0:
		keepMu.Unlock()
	case k.held != b:
		// Detached while used: its last user closes it.
		keepMu.Unlock()
		b.shut()
	case b.writable && time.Since(b.opened) > keepWritable:
		// Let another process have the lock now and then.
		k.held = nil
		keepMu.Unlock()
		k.downgrade(b)
	case b.writable:
		b.idle.Reset(keepIdleWritable)
		keepMu.Unlock()
	default:
		b.idle.Reset(keepIdle)
		keepMu.Unlock()
	}
}

// dropLock lets go of the handle of genDir, which an open found it
// could not trust: at once when nobody uses it, else when its last user
// is done.
func (k *Keep) dropLock(genDir string) {
	if k == nil {
		return
	}
	keepMu.Lock()
	if k.held == nil || k.held.genDir != genDir {
		keepMu.Unlock()
		return
	}
	old, _ := k.detachLocked()
	keepMu.Unlock()
	old.shutNow()
}

// detachLocked takes the kept handle out of k. It returns the handle
// when it is to be closed now (by the caller, with shutNow), and a
// channel closed once it is closed, when its last user will close it
// later. keepMu is held.
func (k *Keep) detachLocked() (now *keptLock, gone <-chan struct{}) {
	b := k.held
	if b == nil {
		return nil, nil
	}
	b.idle.Stop()
	k.held = nil
	if b.users > 0 {
		return nil, b.closed
	}
	return b, nil
}

// shutNow closes a handle detachLocked returned for closing; nil is none.
func (b *keptLock) shutNow() {
	if b != nil {
		b.shut()
	}
}

// closeIdle closes b if it is still kept and unused.
func (k *Keep) closeIdle(b *keptLock) {
	keepMu.Lock()
	if k.held != b || b.users > 0 {
		keepMu.Unlock()
		return
	}
	k.held = nil
	keepMu.Unlock()
	k.downgrade(b)
}

// downgrade closes b, taken out of k, and when it was writable keeps a
// read-only handle of its generation in its place, opened in the
// background: a search that came next would otherwise open one in its own
// time (a few milliseconds at 10k entries, after every batch of a busy
// proxy). The read-only handle's shared lock lets other processes read;
// like any kept handle it goes after keepIdle unused, and before this
// process writes.
func (k *Keep) downgrade(b *keptLock) {
	b.shut()
	if !b.writable || b.reader == nil {
		return
	}
	keepMu.Lock()
	releases := k.releases
	keepMu.Unlock()
	go func() {
		bi, err := b.reader()
		if err != nil {
			return // the next search opens it, and reports what is wrong
		}
		keepMu.Lock()
		if k.held != nil || k.opening != nil || k.releases != releases {
			keepMu.Unlock()
			bi.Close()
			return
		}
		nb := k.newKept(b.genDir, bi, false)
		nb.users = 0
		nb.idle.Reset(keepIdle)
		k.held = nb
		keepMu.Unlock()
	}()
}
