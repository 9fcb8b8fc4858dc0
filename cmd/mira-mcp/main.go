// Command mira-mcp serves a Mira store to MCP hosts.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
)

func main() { os.Exit(cli.MCP(os.Args[1:], cli.StdIO("mira-mcp"))) }
