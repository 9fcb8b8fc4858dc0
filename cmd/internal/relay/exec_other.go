//go:build !unix

package relay

import (
	"errors"
	"os"
	"os/exec"
)

// Exec runs the full command (see the Unix version) as a child, with this
// process's streams, and exits with its status.
func Exec(target, command string, args []string) error {
	path, err := find(target)
	if err != nil {
		return err
	}
	c := exec.Command(path, append([]string{AsFlag + command}, args...)...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		os.Exit(ee.ExitCode())
	}
	if err != nil {
		return err
	}
	os.Exit(0)
	return nil
}
