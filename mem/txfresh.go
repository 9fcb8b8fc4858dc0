package mem

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/internal/gitrepo"
)

// maxMakers bounds the goroutines that make the bytes and blobs of a
// batch's new files.
const maxMakers = 8

// createFresh creates the new files of a batch, tx.files[i] for each i in
// fresh, each in place (atomicfile.Create), and writes its blob as it goes
// (blobs), so the commit reads none back. Making an entry's bytes and
// compressing its blob run on the other cores while this goroutine creates
// the files, one after another: creating files in one directory from
// several threads made the kernel spin on the directory's lock, twice the
// system time for the same files. changes[i] receives each file's change
// and reached[i] is set for each file made, whole or in part; on failure
// the error is that of the first file in order that failed, and the files
// after it may or may not be made.
func (tx *Tx) createFresh(fresh []int, blobs *gitrepo.Blobs, changes []gitrepo.Change, reached []bool) error {
	if len(fresh) == 0 {
		return nil
	}
	// The files go from the makers to this goroutine in runs: one
	// hand-over a file had cost a wake-up of one goroutine or the other
	// for each, a tenth of a million-file load's CPU.
	const run = 64
	type made struct {
		k    int      // the run's first index into fresh
		data [][]byte // the bytes of each of its files
	}
	errs := make([]error, len(fresh))
	out := make(chan made, 8)
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	for range max(1, min(runtime.GOMAXPROCS(0)-1, maxMakers)) {
		wg.Go(func() {
			for !failed.Load() {
				k := int(next.Add(run) - run)
				if k >= len(fresh) {
					return
				}
				m := made{k: k, data: make([][]byte, 0, run)}
				for j := k; j < min(k+run, len(fresh)); j++ {
					data, err := tx.makeOne(fresh[j], blobs, changes)
					if err != nil {
						errs[j] = err
						failed.Store(true)
						break
					}
					m.data = append(m.data, data)
				}
				out <- m
			}
		})
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	for m := range out {
		for j, data := range m.data {
			if failed.Load() {
				break // the makers stop; what they made is dropped
			}
			k := m.k + j
			if err := tx.createOne(fresh[k], data, changes, reached); err != nil {
				errs[k] = err
				failed.Store(true)
			}
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// makeOne makes the bytes of the new file tx.files[i] and writes its blob.
func (tx *Tx) makeOne(i int, blobs *gitrepo.Blobs, changes []gitrepo.Change) ([]byte, error) {
	f := &tx.files[i]
	data := f.data
	if f.entry != nil {
		var err error
		if data, err = f.entry.Marshal(); err != nil {
			return nil, fmt.Errorf("memory %s: %w", f.entry.ID, err)
		}
	}
	var err error
	if changes[i], err = blobs.Add(f.Path, data); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return data, nil
}

// createOne creates the new file tx.files[i] with data and completes its
// change with the file's stat data.
func (tx *Tx) createOne(i int, data []byte, changes []gitrepo.Change, reached []bool) error {
	f := &tx.files[i]
	fi, err := atomicfile.Create(tx.abs(f.Path), data, FileMode)
	if errors.Is(err, fs.ErrExist) {
		return tx.existsError(f)
	}
	reached[i] = true // a failed write removed what it made, or tried to
	if err != nil {
		return fmt.Errorf("write %s: %w", f.Path, err)
	}
	if err := changes[i].Stat(fi); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// existsError is the error of a new file whose path was taken.
func (tx *Tx) existsError(f *pending) error {
	if f.entry != nil {
		return existsError(f.entry)
	}
	return fmt.Errorf("%s already exists", f.Path)
}
