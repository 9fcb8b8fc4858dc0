//go:build !unix

package agent

import "os"

// endSignals end an interactive session (Ctrl-C only stops an answer):
// none beyond the interrupt on this system.
var endSignals = []os.Signal{}

// reraise is never needed without endSignals.
func reraise(os.Signal) {}
