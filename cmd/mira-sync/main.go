// Command mira-sync shares a Mira store with others through a git remote.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(cli.Sync(os.Args[1:], cli.StdIO("mira-sync"))) }
