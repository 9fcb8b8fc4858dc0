//go:build unix

package mira

import (
	"time"

	"golang.org/x/sys/unix"
)

// fileKey is what says a file is unchanged.
type fileKey struct {
	dev, ino     uint64
	size         int64
	mtime, ctime time.Time
}

func statKey(path string) (fileKey, bool) {
	// x/sys names the times alike on every Unix (syscall's are
	// Mtimespec on macOS and the BSDs).
	var s unix.Stat_t
	if err := unix.Stat(path, &s); err != nil || s.Mode&unix.S_IFMT != unix.S_IFREG {
		return fileKey{}, false
	}
	return fileKey{
		dev: uint64(s.Dev), ino: uint64(s.Ino), size: s.Size,
		mtime: time.Unix(int64(s.Mtim.Sec), int64(s.Mtim.Nsec)),
		ctime: time.Unix(int64(s.Ctim.Sec), int64(s.Ctim.Nsec)),
	}, true
}
