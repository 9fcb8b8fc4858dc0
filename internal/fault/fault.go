// Package fault names the steps of a store write at which a crash leaves
// the most delicate state, so that tests can stop a process exactly there
// instead of killing it at a random moment and hoping to hit them. Nothing
// happens unless a test binary installs a hook with Set; the commands never
// do.
package fault

import "sync/atomic"

// Steps a hook sees, in the order a commit reaches them.
const (
	// TxFilesWritten: a change's journal and its files are written, the
	// commit not begun.
	TxFilesWritten = "tx-files-written"
	// BeforeRef: the commit's objects are written, the branch not moved.
	BeforeRef = "commit-before-ref"
	// RefMoved: the branch points to the new commit; .git/index still
	// describes the previous one.
	RefMoved = "commit-ref-moved"
	// IndexWritten: the new .git/index is in place, its lock not removed.
	IndexWritten = "commit-index-written"
	// CodeJournalWritten: the code index's journal is in place, not yet
	// looked at again (another process may replace the base meanwhile).
	CodeJournalWritten = "code-journal-written"
)

var hook atomic.Pointer[func(step string)]

// Set installs f, which At calls with each step reached; nil removes it.
func Set(f func(step string)) {
	if f == nil {
		hook.Store(nil)
		return
	}
	hook.Store(&f)
}

// At reports that step is reached.
func At(step string) {
	if f := hook.Load(); f != nil {
		(*f)(step)
	}
}
