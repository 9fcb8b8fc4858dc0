//go:build unix

package index

import (
	"errors"
	"os"
	"time"

	"github.com/miramem/mira/internal/rawfile"
	"golang.org/x/sys/unix"
)

// fstatat stats name relative to the open directory dir without resolving
// the whole path again, which is most of the cost of a stat pass.
func fstatat(dir *os.File, name string) (FileStat, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return FileStat{}, &os.PathError{Op: "fstatat", Path: name, Err: err}
		}
		break
	}
	return FileStat{Size: st.Size, ModTime: st.Mtim.Nano()}, nil
}

// lockIdle takes an exclusive lock on the file (a generation's lock file)
// without waiting. It fails while some process has
// the generation open, to build or to read it; a generation is removed only
// while this lock is held. A missing file counts as idle.
// buildsSeen says whether lockIdle tells a generation being built by
// another process (see waitForBuild).
const buildsSeen = true

func lockIdle(path string) (unlock func(), ok bool) {
	f, err := rawfile.Open(path)
	if err != nil {
		return func() {}, errors.Is(err, os.ErrNotExist)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// lockFile takes an exclusive lock on the file at path (created if need
// be), waiting for other processes to release it. The kernel releases it
// if the process dies.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	return func() { f.Close() }, nil
}

// mapFile maps the first size bytes of f read-only, with populate the
// pages read in at once where the system can, and returns them with the
// function that unmaps them.
func mapFile(f *os.File, size int, populate bool) ([]byte, func() error, error) {
	if size == 0 {
		return nil, nil, errors.New("empty file")
	}
	flags := unix.MAP_SHARED
	if populate {
		flags |= mapPopulate
	}
	data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, flags)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	return data, func() error { return unix.Munmap(data) }, nil
}

// lockTimed takes a lock on the file at path, exclusive or shared,
// waiting at most timeout for other processes' locks (errBusy). A missing
// file is an error matching os.ErrNotExist.
func lockTimed(path string, exclusive bool, timeout time.Duration) (unlock func(), err error) {
	f, err := rawfile.Open(path)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		err = unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			f.Close()
			return nil, &os.PathError{Op: "flock", Path: path, Err: err}
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, errBusy
		}
		time.Sleep(wait)
		wait = min(2*wait, 10*time.Millisecond)
	}
}
