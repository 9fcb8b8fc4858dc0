// Command mira-recall finds memories in a Mira store.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(cli.Recall(os.Args[1:], cli.StdIO("mira-recall"))) }
