package index

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// lockName is the file of a generation that processes lock while they use
// it: shared to read it, exclusive to write it, and exclusive without
// waiting to remove it (tidy).
const lockName = "lock"

// errBusy is what taking a generation's lock returns while another
// process holds it for longer than the timeout.
var errBusy = errors.New("index is busy")

// genLock is a process's lock on a generation.
type genLock struct {
	unlock   func()
	writable bool
}

// Close lets go of the lock. It is safe to call more than once.
func (l *genLock) Close() error {
	if l != nil && l.unlock != nil {
		l.unlock()
		l.unlock = nil
	}
	return nil
}

// lockGen takes the lock of the generation genDir, exclusive when
// writable, waiting at most timeout for other processes (errBusy). A
// generation without its lock file is damaged.
func lockGen(genDir string, writable bool, timeout time.Duration) (*genLock, error) {
	unlock, err := lockTimed(filepath.Join(genDir, lockName), writable, timeout)
	if errors.Is(err, errBusy) {
		return nil, errBusy
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, damaged("no lock file: %w", err)
	}
	if err != nil {
		return nil, damaged("lock: %w", err)
	}
	return &genLock{unlock: unlock, writable: writable}, nil
}

// createLock makes the lock file of a new generation and takes it
// exclusively, for as long as the generation is being built.
func createLock(genDir string, timeout time.Duration) (*genLock, error) {
	f, err := os.OpenFile(filepath.Join(genDir, lockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	return lockGen(genDir, true, timeout)
}
