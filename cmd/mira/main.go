// Command mira runs Mira's commands as git runs its own: mira recall …
// runs mira-recall …. Alone it lists them; mira home prints the store's
// directory and mira config the effective configuration.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(cli.Mira(os.Args[1:], cli.StdIO("mira"))) }
