// Command mira-remember stores memories in a Mira store.
//
// It is a small client: when `mira-index watch` serves the store, the
// watcher runs the remember in its warm process; otherwise, and whenever
// the memories come on stdin, mira-index runs it in this one's place (see
// package relay). Either way the code and the output are those of
// cli.Remember.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/relay"
)

func main() { os.Exit(relay.Forward("mira-remember", "mira-index")) }
