package gitrepo

import (
	"bytes"
	"io"
	"os"
	"strings"

	"github.com/go-git/go-billy/v5"
)

// idxFS is the git directory as go-git's storage sees it, with pack
// indexes read whole. go-git decodes a pack index field by field from the
// open file, a system call each: at ten thousand objects, loading the
// index cost a command more than the diff it was loaded for. Read into
// memory at once, the same file decodes in a fraction of that.
type idxFS struct {
	billy.Filesystem
}

func (fs idxFS) Open(name string) (billy.File, error) {
	if !strings.HasSuffix(name, ".idx") {
		return fs.Filesystem.Open(name)
	}
	f, err := fs.Filesystem.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := fs.Filesystem.Stat(name)
	if err != nil {
		return nil, err
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	return &memFile{name: f.Name(), Reader: bytes.NewReader(data), fi: fi}, nil
}

// memFile is a read-only file held in memory.
type memFile struct {
	name string
	*bytes.Reader
	fi os.FileInfo
}

func (f *memFile) Name() string               { return f.name }
func (f *memFile) Write([]byte) (int, error)  { return 0, os.ErrPermission }
func (f *memFile) Truncate(int64) error       { return os.ErrPermission }
func (f *memFile) Close() error               { return nil }
func (f *memFile) Lock() error                { return nil }
func (f *memFile) Unlock() error              { return nil }
func (f *memFile) Stat() (os.FileInfo, error) { return f.fi, nil }
