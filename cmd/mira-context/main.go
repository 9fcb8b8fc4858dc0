// Command mira-context plans the context block of an LLM prompt from
// candidate memories under a token budget.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(cli.Context(os.Args[1:], cli.StdIO("mira-context"))) }
