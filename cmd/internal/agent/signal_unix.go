//go:build unix

package agent

import (
	"os"
	"os/signal"
	"syscall"
)

// endSignals end an interactive session (Ctrl-C only stops an answer).
var endSignals = []os.Signal{syscall.SIGTERM, syscall.SIGHUP}

// reraise lets sig take its default effect on the process, after the
// session has put the terminal back: the way a program that handles a
// signal for its own cleanup ends with it.
func reraise(sig os.Signal) {
	signal.Reset(sig)
	if s, ok := sig.(syscall.Signal); ok {
		syscall.Kill(os.Getpid(), s)
	}
}
