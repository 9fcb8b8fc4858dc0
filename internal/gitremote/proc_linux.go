package gitremote

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes git die with the process that started it: a sync
// killed with -9 must not leave a fetch or push running on its own, which
// would move refs under the next sync.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
