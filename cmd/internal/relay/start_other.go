//go:build !unix

package relay

import (
	"errors"
	"os"
)

// Start would start a server on demand; where there are no Unix sockets
// there is no server to start.
func Start(home, target string) (conn, error) {
	return conn{}, errors.New("no recall server on this system")
}

// LockServe always succeeds where there are no Unix sockets to serve on.
func LockServe(home string) (unlock func(), err error) { return func() {}, nil }

// ReadyPipe is nil where Start starts no server.
func ReadyPipe(fd int) *os.File { return nil }

// Ready closes f.
func Ready(f *os.File) { f.Close() }
