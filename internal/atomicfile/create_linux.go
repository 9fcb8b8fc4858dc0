package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// create makes name with data through the system calls themselves: an
// os.File costs a stat, a finalizer and a look at the poller besides, a
// fifth of the time of creating a bulk load's million files.
//
// The file is written without a name (O_TMPFILE) and linked in whole, so
// that a process killed meanwhile leaves no half-written file at name
// for a reader to find before the next writer removes it; a file system
// without unnamed files gets the file created at name and then written.
func create(name string, data []byte, perm os.FileMode) (os.FileInfo, error) {
	var fd int
	unnamed := true
	err := retry(func() (err error) {
		fd, err = syscall.Open(filepath.Dir(name), unix.O_TMPFILE|syscall.O_WRONLY|syscall.O_CLOEXEC, uint32(perm.Perm()))
		return err
	})
	if err != nil {
		unnamed = false
		err = retry(func() (err error) {
			fd, err = syscall.Open(name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(perm.Perm()))
			return err
		})
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	fi := &stat{name: filepath.Base(name)}
	for rest := data; len(rest) > 0 && err == nil; {
		var n int
		if n, err = syscall.Write(fd, rest); err == syscall.EINTR {
			err = nil
		}
		rest = rest[max(n, 0):]
	}
	if err == nil && unnamed {
		err = retry(func() error {
			return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
		})
		if err != nil {
			syscall.Close(fd)
			if err == syscall.EEXIST {
				return nil, &os.PathError{Op: "link", Path: name, Err: err}
			}
			return createFile(name, data, perm) // no /proc to link from
		}
	}
	if err == nil {
		// After the link, which changes the file's ctime.
		err = retry(func() error { return syscall.Fstat(fd, &fi.st) })
	}
	if cerr := syscall.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return nil, &os.PathError{Op: "write", Path: name, Err: err}
	}
	return fi, nil
}

// retry calls fn again while a signal interrupts it.
func retry(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}

// stat is the fs.FileInfo of a file create made, from fstat(2).
type stat struct {
	name string
	st   syscall.Stat_t
}

func (s *stat) Name() string { return s.name }
func (s *stat) Size() int64  { return s.st.Size }
func (s *stat) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	default:
		m |= fs.ModeIrregular
	}
	return m
}
func (s *stat) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *stat) IsDir() bool        { return s.Mode().IsDir() }
func (s *stat) Sys() any           { return &s.st }
