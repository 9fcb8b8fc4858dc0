package mem

import (
	"os"
	"path/filepath"

	"github.com/miramem/mira/internal/atomicfile"
)

// WriteFileAtomic writes data to name so that a reader, or a process killed
// at any moment, sees either the old file or the whole new one, and makes
// it durable. Missing directories are created.
func WriteFileAtomic(name string, data []byte, perm os.FileMode) error {
	return writeFile(name, data, perm, true)
}

// writeFile is WriteFileAtomic where durability may be left to one sync of
// the file system for a whole batch (see syncFS).
func writeFile(name string, data []byte, perm os.FileMode, durable bool) error {
	if err := os.MkdirAll(filepath.Dir(name), DirMode); err != nil {
		return err
	}
	return atomicfile.Write(name, data, perm, durable)
}
