//go:build unix && !linux

package mem

import "syscall"

// batchSync is the number of files from which Commit syncs the file system
// once (syncFS) instead of every file: an import of thousands of memories
// would otherwise spend most of its time in fsync.
const batchSync = 16

// syncFS flushes every file system: where syncfs(2) is missing, sync(2) is
// the one call that covers a whole batch.
func syncFS(string) error {
	syscall.Sync()
	return nil
}
