//go:build !unix

package cli

import (
	"os"
	"os/exec"
)

// execProgram runs the program at path with argv as a child with this
// process's streams, there being no exec here; its *exec.ExitError
// carries the status.
func execProgram(path string, argv []string) error {
	c := exec.Command(path, argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	return c.Run()
}
