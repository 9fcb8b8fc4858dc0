// Command mira-index maintains the search index of a Mira store.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(cli.Index(os.Args[1:], cli.StdIO("mira-index"))) }
