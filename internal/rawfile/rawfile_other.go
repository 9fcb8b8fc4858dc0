//go:build !unix

package rawfile

import "os"

// ReadSized reads a whole file; size is a hint that Unix uses.
func ReadSized(path string, size int64) ([]byte, error) { return os.ReadFile(path) }

// ReadWith reads a whole file and hands it to use.
func ReadWith(path string, size int64, use func([]byte) error) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return use(data)
}

// Read reads a whole file.
func Read(path string) ([]byte, error) { return os.ReadFile(path) }

// Open opens a file for reading.
func Open(path string) (*os.File, error) { return os.Open(path) }
