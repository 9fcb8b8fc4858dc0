//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package code

import "os"

// mapFile reads the file f of size bytes whole: this platform's mapping
// would keep the file from being replaced while it is open.
func mapFile(f *os.File, size int64) ([]byte, *mapping, error) {
	return readWhole(f, size)
}
