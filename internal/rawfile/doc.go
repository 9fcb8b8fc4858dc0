// Package rawfile opens and reads files in the fewest system calls.
//
// os.Open of a regular file on Linux makes six calls where one would do:
// it sets the descriptor non-blocking, offers it to the runtime's poller
// (which refuses regular files), and sets it blocking again, and
// os.ReadFile stats it besides. A served recall reads a dozen small files
// (the store's HEAD and branch, the index's CURRENT and meta, the lock,
// the vectors' header) and a rebuild reads every entry, so on a machine
// where a system call costs microseconds those calls were a good part of
// the time. Elsewhere than on Unix the functions are the os package's.
package rawfile

import "fmt"

// TooLargeError is a file larger than the limit its reader set.
type TooLargeError struct {
	Path  string
	Size  int64 // as far as known: at least Limit+1
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %d bytes, more than the limit of %d", e.Path, e.Size, e.Limit)
}

// Stat is a file's size and modification time (unix nanoseconds).
type Stat struct {
	Size    int64
	ModTime int64
}
