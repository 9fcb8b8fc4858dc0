//go:build !linux

package gitremote

import "os/exec"

// dieWithParent has no portable equivalent outside Linux; Fetch retries
// when a git left running by a killed sync moves the tracking ref.
func dieWithParent(*exec.Cmd) {}
