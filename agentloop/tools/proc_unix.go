//go:build unix

package tools

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// newGroup makes cmd the leader of a new process group, so that it can be
// stopped together with every process it starts.
func newGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup asks cmd's process group to end.
func terminateGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
}

// killGroup ends cmd's process group.
func killGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// exitStatus describes how a command ended.
func exitStatus(ps *os.ProcessState) (string, bool) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal()), false
	}
	return fmt.Sprintf("exit code %d", ps.ExitCode()), ps.ExitCode() == 0
}

// fileID returns the device and inode of fi.
func fileID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
