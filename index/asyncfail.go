package index

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// Scorch writes in goroutines of its own: a batch is handed to its
// introducer and then to its persister, and Batch waits for both. When
// one of them fails (bolt pages with other bytes in them make the
// persister panic; a write error makes it retry forever) it reports to a
// callback, not to the waiting Batch, which then waits forever, and so
// does Close, which needs the lock Batch holds. So every index is opened
// with the callback asyncFailed, every wait on scorch selects on the
// failure of its index too, and a failure is answered as damage: the
// generation is rebuilt.
const asyncCallback = "mira-index"

func init() {
	scorch.RegistryAsyncErrorCallbacks[asyncCallback] = asyncFailed
}

// asyncFail is the failure of the bleve index at one directory, once it
// happens; a process keeps one per bleve directory it opens.
type asyncFail struct {
	once sync.Once
	ch   chan struct{} // closed when err is set
	err  error
}

var asyncFails sync.Map // clean bleve directory → *asyncFail

// failureOf returns the failure record of the bleve index at dir.
func failureOf(dir string) *asyncFail {
	dir = filepath.Clean(dir)
	if v, ok := asyncFails.Load(dir); ok {
		return v.(*asyncFail)
	}
	v, _ := asyncFails.LoadOrStore(dir, &asyncFail{ch: make(chan struct{})})
	return v.(*asyncFail)
}

// asyncFailed is scorch's callback. Its path is the index's store
// directory, inside the bleve directory. Failing to remove old files
// harms nothing and is left to the next cleanup.
func asyncFailed(err error, path string) {
	if errors.Is(err, scorch.ErrCleanup) {
		return
	}
	f := failureOf(filepath.Dir(path))
	f.once.Do(func() {
		f.err = err
		close(f.ch)
	})
}

// failed returns the failure of the index at dir, if it has failed.
func failed(dir string) error {
	f := failureOf(dir)
	select {
	case <-f.ch:
		return f.err
	default:
		return nil
	}
}

// runBatch applies b to the index bi at dir: bleve's Batch, unless the
// index's goroutines fail first.
func runBatch(bi bleve.Index, dir string, b *bleve.Batch) error {
	f := failureOf(dir)
	done := make(chan error, 1)
	go func() {
		done <- safely("update the index", func() error { return bi.Batch(b) })
	}()
	select {
	case err := <-done:
		return err
	case <-f.ch:
		return damaged("update the index: %w", f.err)
	}
}

// waitPersisted waits for the persisted callback of a batch (ch), unless
// the index at dir fails first.
func waitPersisted(dir string, ch <-chan error) error {
	f := failureOf(dir)
	select {
	case err := <-ch:
		return err
	case <-f.ch:
		return damaged("write the index: %w", f.err)
	}
}

// closeBleve closes the index bi at dir. An index whose goroutines failed
// cannot be closed (a Batch that waits forever holds its lock): it is
// left to the process's end, which releases its files and locks.
func closeBleve(bi bleve.Index, dir string) error {
	f := failureOf(dir)
	done := make(chan error, 1)
	go func() { done <- bi.Close() }()
	select {
	case err := <-done:
		return err
	case <-f.ch:
		return fmt.Errorf("its writer failed: %w", f.err)
	}
}
