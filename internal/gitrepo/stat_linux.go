//go:build linux

package gitrepo

import (
	"os"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillStat copies into e the stat data git compares to decide, without
// reading a file, that it is unchanged. Fields are truncated to 32 bits as
// git truncates them.
func fillStat(e *index.Entry, fi os.FileInfo) {
	e.ModifiedAt = fi.ModTime()
	e.Size = uint32(fi.Size())
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	e.CreatedAt = time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
	e.Dev = uint32(st.Dev)
	e.Inode = uint32(st.Ino)
	e.UID = st.Uid
	e.GID = st.Gid
}
