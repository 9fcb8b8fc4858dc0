// Command mira-proxy gives any OpenAI-compatible client a memory: it
// serves /v1/chat/completions in front of the configured chat server.
package main

import (
	"os"

	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/cmd/internal/proxy"
)

func main() { os.Exit(proxy.Main(os.Args[1:], cli.StdIO("mira-proxy"))) }
