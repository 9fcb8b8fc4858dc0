//go:build !unix

package rawfile

import (
	"io"
	"os"
)

// ReadSized reads a whole file; size is a hint that Unix uses.
func ReadSized(path string, size int64) ([]byte, error) { return os.ReadFile(path) }

// ReadWith reads a whole file of at most limit bytes (when limit >= 0)
// and hands it to use; a larger one is a *TooLargeError.
func ReadWith(path string, size, limit int64, use func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := io.Reader(f)
	if limit >= 0 {
		r = io.LimitReader(f, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if limit >= 0 && int64(len(data)) > limit {
		total := int64(len(data))
		if fi, err := f.Stat(); err == nil && fi.Size() > total {
			total = fi.Size()
		}
		return &TooLargeError{Path: path, Size: total, Limit: limit}
	}
	return use(data)
}

// Read reads a whole file.
func Read(path string) ([]byte, error) { return os.ReadFile(path) }

// Open opens a file for reading.
func Open(path string) (*os.File, error) { return os.Open(path) }

// ReadStatWith reads a whole file as ReadWith does and returns its size
// and time, stated once open (Size -1 when it could not be opened, nor
// stated by its path).
func ReadStatWith(path string, limit int64, use func([]byte) error) (Stat, error) {
	st := Stat{Size: -1}
	f, err := os.Open(path)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil {
			st = Stat{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
		}
		return st, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return st, err
	}
	st = Stat{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	r := io.Reader(f)
	if limit >= 0 {
		r = io.LimitReader(f, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return st, err
	}
	if limit >= 0 && int64(len(data)) > limit {
		return st, &TooLargeError{Path: path, Size: max(fi.Size(), int64(len(data))), Limit: limit}
	}
	return st, use(data)
}
