//go:build !linux

package gitrepo

import (
	"os"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// fillStat records the portable part of the stat data. The missing change
// time, device and inode never match what git sees, so git compares such an
// entry's content once and refreshes the entry itself: slower, never wrong.
func fillStat(e *index.Entry, fi os.FileInfo) {
	e.ModifiedAt = fi.ModTime()
	e.Size = uint32(fi.Size())
}
