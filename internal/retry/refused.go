//go:build !windows

package retry

import (
	"errors"
	"syscall"
)

// refused reports whether err is a connection the other end refused:
// nothing listens on that port.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
