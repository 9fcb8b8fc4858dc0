//go:build linux

package server

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// soPeerPidfd is SO_PEERPIDFD (Linux 6.5): a pidfd of the process that
// connected, which stays bound to that process when its pid is reused.
const soPeerPidfd = 77

// peerConfined reports whether the process at the other end of c runs
// with no_new_privs set, as everything in mira-agent's sandbox does
// (Landlock requires it, and children inherit it). When it cannot tell
// (the process is gone, /proc is not mounted), it says yes: the caller
// then refuses what it would refuse a confined peer.
func peerConfined(c net.Conn) (bool, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return true, errors.New("not a Unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return true, err
	}
	var (
		nnp  bool
		perr error
	)
	err = raw.Control(func(fd uintptr) { nnp, perr = peerNoNewPrivs(int(fd)) })
	if err == nil {
		err = perr
	}
	if err != nil {
		return true, err
	}
	return nnp, nil
}

// peerNoNewPrivs reads the peer's no_new_privs flag. With a pidfd, the
// pid read from it is checked to still be that process after its status
// was read, so a pid reused by another process cannot answer for it.
func peerNoNewPrivs(fd int) (bool, error) {
	pidfd, err := getsockoptInt(fd, syscall.SOL_SOCKET, soPeerPidfd)
	if err == nil {
		defer syscall.Close(pidfd)
		pid, err := pidfdPid(pidfd)
		if err != nil {
			return true, err
		}
		nnp, err := noNewPrivs(pid)
		if err != nil {
			return true, err
		}
		if again, err := pidfdPid(pidfd); err != nil || again != pid {
			return true, fmt.Errorf("the process %d went away", pid)
		}
		return nnp, nil
	}
	// Kernels before 6.5: the pid the connection was made with.
	cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return true, err
	}
	return noNewPrivs(int(cred.Pid))
}

func getsockoptInt(fd, level, opt int) (int, error) {
	var v int32
	l := uint32(unsafe.Sizeof(v))
	_, _, e := syscall.Syscall6(syscall.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return -1, e
	}
	return int(v), nil
}

// pidfdPid returns the pid of the process pidfd refers to, from its
// fdinfo; -1 there means the process has exited.
func pidfdPid(pidfd int) (int, error) {
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(pidfd))
	if err != nil {
		return 0, err
	}
	v, ok := statusField(b, "Pid:")
	if !ok {
		return 0, errors.New("no Pid in the pidfd's fdinfo")
	}
	pid, err := strconv.Atoi(v)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("the process has exited (pid %q)", v)
	}
	return pid, nil
}

// noNewPrivs reads the NoNewPrivs line of /proc/<pid>/status.
func noNewPrivs(pid int) (bool, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true, err
	}
	v, ok := statusField(b, "NoNewPrivs:")
	if !ok {
		return true, fmt.Errorf("/proc/%d/status has no NoNewPrivs", pid)
	}
	return v != "0", nil
}

// statusField returns the value of the line of b that starts with key.
func statusField(b []byte, key string) (string, bool) {
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte(key)); ok {
			return string(bytes.TrimSpace(v)), true
		}
	}
	return "", false
}
