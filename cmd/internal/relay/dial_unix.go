//go:build unix

package relay

import (
	"errors"
	"io"
	"syscall"
)

// conn is a connected Unix socket, used through plain system calls: the
// net package's poller costs a client more than a millisecond to start,
// as much as the rest of it, and a client does one blocking exchange.
type conn int

func dial(path string) (conn, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(fd)
	for {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return conn(fd), nil
}

func (c conn) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(c), p)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c conn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := syscall.Write(int(c), p[done:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

func (c conn) Close() error { return syscall.Close(int(c)) }
