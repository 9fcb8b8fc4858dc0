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
