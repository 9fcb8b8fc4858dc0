package mem

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// batchSync is the number of files from which Commit syncs the file system
// once (syncFS) instead of every file: an import of thousands of memories
// would otherwise spend most of its time in fsync.
const batchSync = 16

// syncFS flushes the file system holding dir: one call instead of an fsync
// per file for a large batch.
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync file system: %w", err)
	}
	return nil
}
