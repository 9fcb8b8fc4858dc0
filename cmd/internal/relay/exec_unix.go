//go:build unix

package relay

import (
	"os"
	"syscall"
)

// Exec runs the full command in this process's place: it executes target
// (mira-index, found beside this program or on $PATH) with AsFlag naming
// the command, and returns only if that fails.
func Exec(target, command string, args []string) error {
	path, err := find(target)
	if err != nil {
		return err
	}
	argv := append([]string{target, AsFlag + command}, args...)
	return syscall.Exec(path, argv, os.Environ())
}
