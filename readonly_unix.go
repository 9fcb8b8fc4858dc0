//go:build unix

package mira

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// writable reports whether this process may create files in dir (false on
// a read-only mount, or without the permission).
func writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }

// ownDir reports whether dir is a directory of uid's that only uid may
// write (a cache directory: the user's, whoever may read it).
func ownDir(dir string, uid int) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}

// privateDir checks that dir is a directory of uid's that no one else may
// enter, and makes it so when it is uid's; with create, a missing one is
// made. A link, or a directory of another user, is refused: uid cannot
// know what its owner put there, nor keep them out of it.
func privateDir(dir string, uid int, create bool) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("it is not a directory")
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return errors.New("its owner cannot be told")
	}
	if int(st.Uid) != uid {
		return fmt.Errorf("it belongs to another user (uid %d), who could plant an index there: remove it", st.Uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, fi.Mode().Perm()&^0o077)
	}
	return nil
}
