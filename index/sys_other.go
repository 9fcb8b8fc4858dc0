//go:build !unix

package index

import (
	"errors"
	"os"
	"path/filepath"
	"time"
)

// fstatat stats name in the open directory dir.
func fstatat(dir *os.File, name string) (FileStat, error) {
	fi, err := os.Lstat(filepath.Join(dir.Name(), name))
	if err != nil {
		return FileStat{}, err
	}
	return FileStat{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}, nil
}

// buildsSeen says whether lockIdle tells a generation being built by
// another process: not here (see waitForBuild).
const buildsSeen = false

// lockIdle cannot test another process's lock here: a generation counts as
// idle once its lock file is an hour old.
func lockIdle(path string) (unlock func(), ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return func() {}, os.IsNotExist(err)
	}
	return func() {}, time.Since(fi.ModTime()) > time.Hour
}

// lockFile does not lock across processes here (the index relies on
// flock, which Unix systems have): two processes that write the same
// vector cache at the same moment are not kept apart.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil
}

// mapFile is not available here: the vectors are read instead.
func mapFile(f *os.File, size int, populate bool) ([]byte, func() error, error) {
	return nil, nil, errors.New("no memory mapping on this system")
}

// lockTimed only checks that the file exists where there is no flock.
func lockTimed(path string, exclusive bool, timeout time.Duration) (unlock func(), err error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	return func() {}, nil
}

// dropPages does nothing where nothing is mapped.
func dropPages([]byte) {}
