//go:build linux

package gitrepo

import (
	"os"
	"syscall"
)

// fillStat copies into e the stat data git compares to decide, without
// reading a file, that it is unchanged. Fields are truncated to 32 bits as
// git truncates them.
func fillStat(e *indexEntry, fi os.FileInfo) {
	mtime := fi.ModTime()
	e.mtimeSec, e.mtimeNsec = uint32(mtime.Unix()), uint32(mtime.Nanosecond())
	e.size = uint32(fi.Size())
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	e.ctimeSec, e.ctimeNsec = uint32(st.Ctim.Sec), uint32(st.Ctim.Nsec)
	e.dev = uint32(st.Dev)
	e.ino = uint32(st.Ino)
	e.uid = st.Uid
	e.gid = st.Gid
}
