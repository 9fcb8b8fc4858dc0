//go:build unix

package gitrepo

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time this process has used, user and system. On
// a machine shared with other work it is a steadier measure than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
