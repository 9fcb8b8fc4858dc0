//go:build unix

package gitrepo

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this pid exists. A process of
// another user counts as alive: signal 0 is refused, not unanswered.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
