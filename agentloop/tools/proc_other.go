//go:build !unix

package tools

import (
	"fmt"
	"os"
	"os/exec"
)

// newGroup does nothing where there are no process groups.
func newGroup(cmd *exec.Cmd) {}

// terminateGroup ends the command; its children may survive it.
func terminateGroup(cmd *exec.Cmd) {
	cmd.Process.Kill()
}

// killGroup ends the command; its children may survive it.
func killGroup(cmd *exec.Cmd) {
	cmd.Process.Kill()
}

// exitStatus describes how a command ended.
func exitStatus(ps *os.ProcessState) (string, bool) {
	return fmt.Sprintf("exit code %d", ps.ExitCode()), ps.ExitCode() == 0
}

// fileID reports no identity where the system gives none.
func fileID(os.FileInfo) (dev, ino uint64) { return 0, 0 }
