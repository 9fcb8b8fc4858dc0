// Command mira-agent is a coding agent in the terminal whose one
// never-ending conversation is kept in the Mira store.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/agent"
	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(agent.Main(os.Args[1:], cli.StdIO("mira-agent"))) }
