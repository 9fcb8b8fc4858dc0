// Command mira-code is Mira's code intelligence for the current project.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(cli.Code(os.Args[1:], cli.StdIO("mira-code"))) }
