//go:build unix

package mem

import (
	"os"
	"syscall"
)

const unixModes = true

// ownedBySelf reports whether fi is this process's user's.
func ownedBySelf(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
