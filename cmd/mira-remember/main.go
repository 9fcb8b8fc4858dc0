// Command mira-remember stores memories in a Mira store.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(cli.Remember(os.Args[1:], cli.StdIO("mira-remember"))) }
