//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package code

import (
	"os"
	"runtime"
	"syscall"
)

// mapFile maps the file f of size bytes read-only. The mapping lives as
// long as the returned owner is reachable: whatever keeps slices of the
// data must keep the owner too. Mapping the index costs a fraction of
// reading it into fresh memory, and only the pages read are resident.
func mapFile(f *os.File, size int64) ([]byte, *mapping, error) {
	if size == 0 {
		return nil, &mapping{}, nil
	}
	if int64(int(size)) != size {
		return readWhole(f, size)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return readWhole(f, size)
	}
	m := &mapping{}
	runtime.AddCleanup(m, func(b []byte) { syscall.Munmap(b) }, b)
	return b, m, nil
}
