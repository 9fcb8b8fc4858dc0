package agent

import (
	"os"
	"testing"

	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/cmd/internal/clitest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as mira-agent, so scripts and the
// terminal tests run the real command in real processes.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mira-agent": func() { os.Exit(Main(os.Args[1:], cli.StdIO("mira-agent"))) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script", Setup: clitest.Setup, Cmds: clitest.Cmds()})
}
