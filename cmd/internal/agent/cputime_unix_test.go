//go:build unix

package agent

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time, user and system, of this process and of
// the children it waited for (git): on a shared machine a steadier measure
// than wall time.
func cpuTime() time.Duration {
	var t time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			t += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return t
}
