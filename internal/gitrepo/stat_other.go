//go:build !linux

package gitrepo

import "os"

// fillStat records the portable part of the stat data. The missing change
// time, device and inode never match what git sees, so git compares such an
// entry's content once and refreshes the entry itself: slower, never wrong.
func fillStat(e *indexEntry, fi os.FileInfo) {
	mtime := fi.ModTime()
	e.mtimeSec, e.mtimeNsec = uint32(mtime.Unix()), uint32(mtime.Nanosecond())
	e.size = uint32(fi.Size())
}
