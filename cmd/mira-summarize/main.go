// Command mira-summarize keeps hierarchical summaries of a Mira store's
// conversations and evicts what a scope holds beyond its limit.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(cli.Summarize(os.Args[1:], cli.StdIO("mira-summarize"))) }
