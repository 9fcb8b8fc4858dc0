//go:build unix

package rawfile

import (
	"io/fs"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// readBufs are the buffers ReadSized reads into; an entry file is small.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// ReadSized reads a whole file as os.ReadFile does, in fewer system
// calls: open, read until end of file, close. With the size a stat pass
// found (size >= 0), a first read that returns exactly that many bytes
// ends it: the read that would return end of file is not made (100,000
// calls in a rebuild at 100k entries). A file that has grown since is
// caught as a change by the next refresh, by its size and time, as it
// would be if the read came first. O_NONBLOCK makes a FIFO given an
// entry's name fail instead of waiting for a writer forever; a regular
// file ignores it.
func ReadSized(path string, size int64) ([]byte, error) {
	var out []byte
	err := ReadWith(path, size, -1, func(b []byte) error {
		out = append([]byte(nil), b...)
		return nil
	})
	return out, err
}

// ReadWith reads a whole file as ReadSized does, into a buffer it lends
// to use: the bytes are good until use returns, and use must not keep
// them. A reader that copies what it keeps anyway (a parser) saves the
// copy of the file ReadSized makes. A file of more than limit bytes (when
// limit >= 0) is read no further than that: the error is a
// *TooLargeError.
func ReadWith(path string, size, limit int64, use func([]byte) error) error {
	bp := readBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 64<<10 { // a rare big file's buffer is not kept
			readBufs.Put(bp)
		}
	}()
	data, err := readInto(path, size, limit, bp, nil)
	if err != nil {
		return err
	}
	return use(data)
}

// ReadStatWith is ReadWith for a file whose size is not known: it states
// the file once open, and returns its size and time (Size -1 when it
// could not be opened, nor stated by its path), and reads it in one call
// that the size says is all. A rebuild lists the store's files without
// stating them and takes their stat data from here: one lookup of the
// path a file instead of two.
func ReadStatWith(path string, limit int64, use func([]byte) error) (Stat, error) {
	bp := readBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 64<<10 {
			readBufs.Put(bp)
		}
	}()
	st := Stat{Size: -1}
	data, err := readInto(path, -1, limit, bp, &st)
	if st.Size < 0 {
		var us unix.Stat_t
		if unix.Lstat(path, &us) == nil {
			st = Stat{Size: us.Size, ModTime: us.Mtim.Nano()}
		}
	}
	if err != nil {
		return st, err
	}
	return st, use(data)
}

// readInto reads the file at path into *bp, growing it as need be, up to
// limit bytes.
func readInto(path string, size, limit int64, bp *[]byte, st *Stat) ([]byte, error) {
	fd, err := open(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	if st != nil {
		var us unix.Stat_t
		if err := unix.Fstat(fd, &us); err != nil {
			return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
		}
		*st = Stat{Size: us.Size, ModTime: us.Mtim.Nano()}
		if us.Mode&unix.S_IFMT == unix.S_IFREG {
			size = us.Size
		}
	}
	buf, n := *bp, 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
			*bp = buf
		}
		m, err := syscall.Read(fd, buf[n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		case m == 0:
			return buf[:n], nil
		}
		n += m
		if limit >= 0 && int64(n) > limit {
			total := int64(n)
			var st syscall.Stat_t
			if syscall.Fstat(fd, &st) == nil && st.Size > total {
				total = st.Size
			}
			return nil, &TooLargeError{Path: path, Size: total, Limit: limit}
		}
		if int64(n) == size && n < len(buf) {
			return buf[:n], nil
		}
	}
}

func open(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// Read reads a whole file, as ReadSized with the size unknown.
func Read(path string) ([]byte, error) { return ReadSized(path, -1) }

// Open opens a file for reading as os.Open does, in two system calls
// instead of six: a descriptor opened blocking and handed to os.NewFile
// is not offered to the poller, which cannot wait on a regular file
// anyway. Reads of a pipe or a terminal opened this way block their
// thread instead of parking the goroutine, and deadlines do not apply;
// the callers open regular files.
func Open(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}
