package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/miramem/mira/cmd/internal/clitest"
	"github.com/miramem/mira/cmd/internal/relay"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as every mira command, so scripts run
// the real command code in real processes.
func TestMain(m *testing.M) {
	testscript.Main(m, commands)
}

var commands = map[string]func(){
	"mira-remember": func() { os.Exit(relay.Forward("mira-remember", "mira-index")) }, // as the real main
	"mira-recall":   func() { os.Exit(relay.Main("mira-recall", "mira-index")) },      // as the real main
	"mira":          func() { os.Exit(Mira(os.Args[1:], StdIO("mira"))) },
	"mira-forget":   func() { os.Exit(Forget(os.Args[1:], StdIO("mira-forget"))) },
	"mira-sync":     func() { crashAt(os.Getenv(crashEnv)); os.Exit(Sync(os.Args[1:], StdIO("mira-sync"))) },
	"mira-index":    func() { os.Exit(Index(os.Args[1:], StdIO("mira-index"))) },

	"mira-summarize": func() { os.Exit(Summarize(os.Args[1:], StdIO("mira-summarize"))) },
	"mira-context":   func() { os.Exit(Context(os.Args[1:], StdIO("mira-context"))) },
	"mira-code":      func() { os.Exit(Code(os.Args[1:], StdIO("mira-code"))) },
}

func TestScripts(t *testing.T) {
	fake := newFakeOpenAI()
	t.Cleanup(fake.srv.Close)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FAKE_OPENAI", fake.srv.URL+"/v1")
			root, err := filepath.Abs("../../..")
			if err != nil {
				return err
			}
			env.Setenv("REPO", root)
			return clitest.Setup(env)
		},
		Cmds: scriptCmds(map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"embedded": func(ts *testscript.TestScript, neg bool, args []string) {
				// embedded N: the fake server has embedded exactly N texts so far
				// in this test binary's run of the script (reset by "embedded reset").
				if args[0] == "reset" {
					fake.embedded.Store(0)
					return
				}
				want, _ := strconv.Atoi(args[0])
				if got := fake.embedded.Load(); int(got) != want {
					ts.Fatalf("fake server embedded %d texts, want %d", got, want)
				}
			},
		}),
	})
}

// scriptCmds adds this package's script commands to the shared ones.
func scriptCmds(own map[string]func(ts *testscript.TestScript, neg bool, args []string)) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := clitest.Cmds()
	for k, v := range own {
		cmds[k] = v
	}
	return cmds
}
