// Package atomicfile replaces files so that a reader, or a process killed
// at any moment, sees either the old file or the whole new one: the data
// goes to a temporary file in the same directory, which is renamed over the
// name. With durable set the file is synced before the rename and the
// directory after it, so the new file also survives a power failure. The
// store's entries, the index's files and the git plumbing all write this
// way.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Fail, when set, is asked before each file is written and fails the write
// with the error it returns, as the file system would: tests make a disk
// full (syscall.ENOSPC) with it where they cannot fill one. Programs leave
// it nil.
var Fail func(name string) error

// Check returns what Fail says of a write of name, nil when it is not set.
// Writers other than Write and WriteWith (logs appended to) ask it too.
func Check(name string) error {
	if Fail == nil {
		return nil
	}
	if err := Fail(name); err != nil {
		return &os.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}

// Write replaces name with data, written in one call: a buffer would only
// copy it (and a bulk load writes a hundred thousand small files, for which
// WriteWith's buffer cost 25 GB of allocation).
func Write(name string, data []byte, perm os.FileMode, durable bool) error {
	return write(name, perm, durable, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteWith replaces name with what fill writes (through a buffer).
func WriteWith(name string, perm os.FileMode, durable bool, fill func(io.Writer) error) error {
	return write(name, perm, durable, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 256<<10)
		if err := fill(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// write replaces name with what fill writes to the temporary file.
func write(name string, perm os.FileMode, durable bool, fill func(*os.File) error) (err error) {
	dir := filepath.Dir(name)
	if err := Check(name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	err = fill(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil && durable {
		err = f.Sync()
	}
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if durable {
		return SyncDir(dir)
	}
	return nil
}

// SyncDir makes the creations, renames and removals in dir durable. File
// systems that cannot sync a directory (os.ErrInvalid) are let be.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// Create writes data to name, which must not exist, directly: no
// temporary file and no rename, half the directory operations of Write.
// On Linux the file is written without a name and linked in whole; else
// a reader may see it partly written, and a process killed meanwhile
// leaves it so: for files nobody reads before they are committed, whose
// writer removes them again when it fails (a store's journal, Store.Recover).
// It fails with an error matching fs.ErrExist when name exists; a failed
// write removes what it made. Nothing is synced (the caller syncs a whole
// batch at once). The file's mode is perm less the umask. It returns the
// file's stat data, taken from the open file after the write: what a
// later stat finds while nobody touches the file.
func Create(name string, data []byte, perm os.FileMode) (os.FileInfo, error) {
	if err := Check(name); err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	fi, err := create(name, data, perm)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	return fi, nil
}

// createFile is create through os.File.
func createFile(name string, data []byte, perm os.FileMode) (os.FileInfo, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	var fi os.FileInfo
	_, err = f.Write(data)
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return nil, err
	}
	return fi, nil
}
