package retry

import (
	"errors"
	"syscall"
)

// refused reports whether err is a connection the other end refused:
// nothing listens on that port. Windows reports it as its own socket
// error WSAECONNREFUSED (10061), not as the POSIX ECONNREFUSED.
func refused(err error) bool {
	return errors.Is(err, syscall.Errno(10061)) || errors.Is(err, syscall.ECONNREFUSED)
}
