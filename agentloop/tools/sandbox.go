package tools

import (
	"runtime"
	"strings"
)

// sandboxEnv is the environment variable that turns any binary linking this
// package into the sandbox helper: when it is set, the package's init
// applies Landlock to the process as the JSON sandboxSpec it holds says,
// removes the variable and executes the shell in place (see
// sandbox_linux.go). Landlock cannot be lifted once applied, so the
// restriction has to happen in a process of its own, before the shell
// starts; re-executing the running binary does that without shipping a
// second one.
const sandboxEnv = "MIRA_SANDBOX_EXEC"

// sandboxSpec is what the sandbox helper is told, as JSON in sandboxEnv.
// The command line comes as the helper's arguments, passed on to the shell
// unchanged.
type sandboxSpec struct {
	// Shell is the absolute path of the shell to execute.
	Shell string `json:"shell"`
	// Write lists the directories and files the command may change: the
	// project root, its private temporary directory and the allowed
	// paths. Everything else is read-only to it, except sandboxDevices.
	Write []string `json:"write"`
}

// sandboxDevices are the device files a confined command may write to and
// control: the bit buckets, the random sources and the terminals (for
// programs that make a pseudo-terminal of their own; the command has no
// controlling terminal, so it cannot reach the user's).
var sandboxDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// landlockABI reports the Landlock ABI version of the running kernel, or 0
// and why there is none. Tests replace it to act as a kernel without
// Landlock.
var landlockABI = kernelLandlockABI

// unconfinedNotice is what the user is told, once a session, when bash
// cannot be confined here.
func unconfinedNotice() string {
	if runtime.GOOS != "linux" {
		return "bash is not confined: Landlock is a Linux feature; commands can write anywhere you can"
	}
	return "bash is not confined: this kernel has no Landlock (needs Linux 5.13+); commands can write anywhere you can"
}

// deniedNote follows the output of a confined command that was refused a
// write, so that the model knows why and what to do instead.
const deniedNote = "[The command runs confined: it may change files only under the project root, the paths the user allowed and $TMPDIR (removed when the command ends). Writes elsewhere are denied by the kernel (Landlock); reads, network and processes are not restricted.]\n"

// writeDenied reports whether a confined command's output shows a refused
// write: Landlock answers EACCES, and EXDEV for a rename or link that
// would carry a file out of what the command may change.
func writeDenied(output string) bool {
	return strings.Contains(output, "Permission denied") || strings.Contains(output, "Invalid cross-device link")
}
