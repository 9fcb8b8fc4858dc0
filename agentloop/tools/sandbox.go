package tools

import (
	"fmt"
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
	// Bind and ReadOnly are set when the helper runs in a user and mount
	// namespace of its own: it mounts each Bind path on itself, so that
	// it cannot be renamed or removed, and each ReadOnly path on itself
	// read-only, before anything else. Probe makes it do that and exit.
	Bind     []string `json:"bind,omitempty"`
	ReadOnly []string `json:"readonly,omitempty"`
	Probe    bool     `json:"probe,omitempty"`
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

// mountNamespaces reports why a confined command cannot run in a user and
// mount namespace of its own, or nil. Tests replace it to act as a system
// without them.
var mountNamespaces = kernelNamespaces

// unconfinedNotice is what the user is told, once a session, when bash
// cannot be confined here.
func unconfinedNotice() string {
	if runtime.GOOS != "linux" {
		return "bash is not confined: Landlock is a Linux feature; commands can write anywhere you can"
	}
	return "bash is not confined: this kernel has no Landlock (needs Linux 5.13+); commands can write anywhere you can"
}

// noNamespaceNotice is what the user is told, once a session, when bash's
// commands are confined but cannot run in a mount namespace of their own:
// git's files are then checked after each command, and protected paths
// under the project are not kept from them.
func noNamespaceNotice(why error, git bool, store []string) string {
	var parts []string
	if git {
		parts = append(parts, "changes bash's commands make to the repository's git configuration and hooks are undone after each command, not refused (a process a command leaves running could still make one later)")
	}
	if len(store) > 0 {
		parts = append(parts, "bash's commands can change the memory store at "+strings.Join(store, ", ")+", which lies under a path they may write")
	}
	return fmt.Sprintf("bash cannot run its commands in a mount namespace of their own here (%v): %s", why, strings.Join(parts, "; "))
}

// deniedNote follows the output of a confined command that was refused a
// write, so that the model knows why and what to do instead.
const deniedNote = "[The command runs confined: it may change files only under the project root, the paths the user allowed and $TMPDIR (removed when the command ends). Writes elsewhere are denied by the kernel (Landlock); reads, network and processes are not restricted.]\n"

// gitDeniedNote follows the output of a confined command that was refused
// a change to git's configuration or hooks.
const gitDeniedNote = "[Git's configuration and hooks (.git/config, .git/hooks and the like) are read-only to commands: git runs commands named there at the user's next git command, outside the sandbox. Do not work around it: ask the user, who can allow it with mira-agent --allow-git-config.]\n"

// gitDenied reports whether a confined command's output shows a refused
// change to git's configuration or hooks: in the command's mount
// namespace they are read-only mounts (EROFS) or mount points (EBUSY).
func gitDenied(output string) bool {
	return (strings.Contains(output, "Read-only file system") || strings.Contains(output, "Device or resource busy")) &&
		(strings.Contains(output, ".git") || strings.Contains(output, "config") || strings.Contains(output, "hooks"))
}

// writeDenied reports whether a confined command's output shows a refused
// write: Landlock answers EACCES, and EXDEV for a rename or link that
// would carry a file out of what the command may change.
func writeDenied(output string) bool {
	return strings.Contains(output, "Permission denied") || strings.Contains(output, "Invalid cross-device link")
}
