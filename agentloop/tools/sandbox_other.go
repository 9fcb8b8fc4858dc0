//go:build !linux

package tools

import (
	"errors"
	"os/exec"
)

// kernelLandlockABI reports that there is no Landlock: it is Linux's.
func kernelLandlockABI() (int, error) {
	return 0, errors.New("Landlock is a Linux feature")
}

// confinedCommand is never called where there is no Landlock.
func confinedCommand(shell, command string, write, env, bind, readOnly []string) (*exec.Cmd, error) {
	return nil, errors.New("commands cannot be confined on this system")
}

// kernelNamespaces reports that there are no mount namespaces: they are
// Linux's.
func kernelNamespaces() error {
	return errors.New("mount namespaces are a Linux feature")
}
