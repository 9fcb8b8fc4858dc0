//go:build unix

// Package proc answers one question about another process on this host:
// is it still running? Lock files and leases of the store name their
// holder's pid, and a holder that died must not keep them forever.
package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// Alive reports whether a process with this pid runs on this host: it
// exists and, where /proc tells, is no zombie (a process killed whose
// parent has not reaped it yet still answers signal 0). A process of
// another user counts as running.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: the signal's answer is all there is
	}
	i := bytes.LastIndexByte(b, ')') // the name before it may hold anything
	return i < 0 || i+2 >= len(b) || (b[i+2] != 'Z' && b[i+2] != 'X')
}
