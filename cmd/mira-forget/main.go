// Command mira-forget tombstones memories in a Mira store.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(cli.Forget(os.Args[1:], cli.StdIO("mira-forget"))) }
