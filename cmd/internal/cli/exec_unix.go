//go:build unix

package cli

import (
	"os"
	"syscall"
)

// execProgram runs the program at path with argv in this process's place,
// as git runs its commands: returns only if that fails.
func execProgram(path string, argv []string) error {
	return syscall.Exec(path, argv, os.Environ())
}
