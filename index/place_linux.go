package index

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens a new file in dir that has no name (O_TMPFILE): it
// goes with its last descriptor, whatever kills the process.
func openUnnamed(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, errNoPlacer // the file system cannot: the spill
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// nameUnnamed gives f, opened by openUnnamed, the name name, which must
// not exist.
func nameUnnamed(f *os.File, name string) error {
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
}
