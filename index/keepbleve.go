package index

import (
	"time"

	"github.com/blevesearch/bleve/v2"
)

// keptBleve is a generation's bleve index held open read-only between
// Opens of a Keep: opening one costs about half a millisecond at 10k
// entries (its mapping, analysers and segments), as much as the BM25
// search itself.
//
// An open bleve index holds bolt's shared lock on the generation, and a
// writer needs it exclusively, so the handle is let go of as soon as a
// writer could be kept waiting: a writer in this process drops it before
// it opens the generation (dropBleve), and an idle handle is closed after
// keepIdle, so that a writer elsewhere waits that long at most. While the
// shared lock is held nobody writes the generation, so the handle cannot
// go out of date.
type keptBleve struct {
	genDir string
	bi     bleve.Index
	users  int // Indexes searching it now
	idle   *time.Timer
}

// keepIdle is how long an unused kept handle stays open.
const keepIdle = 500 * time.Millisecond

// bleveFor returns the generation's index opened read-only: the kept
// handle when k has one for genDir, else a new one that k keeps. A
// non-nil kb is to be given back with releaseBleve rather than closed.
func (k *Keep) bleveFor(genDir string, open func() (bleve.Index, error)) (bi bleve.Index, kb *keptBleve, err error) {
	if k == nil {
		bi, err = open()
		return bi, nil, err
	}
	keepMu.Lock()
	if b := k.bl; b != nil && b.genDir == genDir {
		b.users++
		b.idle.Stop()
		keepMu.Unlock()
		return b.bi, b, nil
	}
	// Another generation's handle (the index was rebuilt) goes now, or
	// when its last search ends.
	old := k.detachLocked()
	keepMu.Unlock()
	closeBleve(old)
	if bi, err = open(); err != nil {
		return nil, nil, err
	}
	keepMu.Lock()
	defer keepMu.Unlock()
	if k.bl != nil {
		return bi, nil, nil // a concurrent Open kept its own meanwhile
	}
	b := &keptBleve{genDir: genDir, bi: bi, users: 1}
	b.idle = time.AfterFunc(time.Hour, func() { k.closeIdle(b) })
	b.idle.Stop()
	k.bl = b
	return bi, b, nil
}

// releaseBleve gives back a handle that bleveFor returned.
func (k *Keep) releaseBleve(b *keptBleve) {
	keepMu.Lock()
	b.users--
	switch {
	case b.users > 0:
		keepMu.Unlock()
	case k.bl != b:
		// Detached while searched: its last search closes it.
		keepMu.Unlock()
		closeBleve(b.bi)
	default:
		b.idle.Reset(keepIdle)
		keepMu.Unlock()
	}
}

// dropBleve lets go of the handle of genDir before this process opens
// it for writing: at once when nobody searches it, else when the last
// search ends (the writer waits for the lock meanwhile).
func (k *Keep) dropBleve(genDir string) {
	if k == nil {
		return
	}
	keepMu.Lock()
	if k.bl == nil || k.bl.genDir != genDir {
		keepMu.Unlock()
		return
	}
	old := k.detachLocked()
	keepMu.Unlock()
	closeBleve(old)
}

// detachLocked takes the kept handle out of k and returns it when it is
// to be closed now; one still searched is closed by its last search
// (releaseBleve). keepMu is held.
func (k *Keep) detachLocked() bleve.Index {
	b := k.bl
	if b == nil {
		return nil
	}
	b.idle.Stop()
	k.bl = nil
	if b.users > 0 {
		return nil
	}
	return b.bi
}

// closeIdle closes b if it is still kept and unused.
func (k *Keep) closeIdle(b *keptBleve) {
	keepMu.Lock()
	if k.bl != b || b.users > 0 {
		keepMu.Unlock()
		return
	}
	k.bl = nil
	keepMu.Unlock()
	closeBleve(b.bi)
}

func closeBleve(bi bleve.Index) {
	if bi != nil {
		bi.Close() // read-only: nothing to lose
	}
}
