// Command mira-recall finds memories in a Mira store.
//
// It is a small client: when `mira-index watch` serves the store, the
// watcher runs the recall in its warm process; otherwise mira-index runs
// it in this one's place (see package relay). Either way the code and the
// output are those of cli.Recall.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/relay"
)

func main() { os.Exit(relay.Main("mira-recall", "mira-index")) }
