package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/cmd/internal/relay"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as every mira command, so scripts run
// the real command code in real processes.
func TestMain(m *testing.M) {
	testscript.Main(m, commands)
}

var commands = map[string]func(){
	"mira-remember": func() { os.Exit(Remember(os.Args[1:], StdIO("mira-remember"))) },
	"mira-recall":   func() { os.Exit(relay.Main("mira-recall", "mira-index")) }, // as the real main
	"mira-forget":   func() { os.Exit(Forget(os.Args[1:], StdIO("mira-forget"))) },
	"mira-index":    func() { os.Exit(Index(os.Args[1:], StdIO("mira-index"))) },

	"mira-summarize": func() { os.Exit(Summarize(os.Args[1:], StdIO("mira-summarize"))) },
	"mira-agent":     func() { os.Exit(Agent(os.Args[1:], StdIO("mira-agent"))) },
	"mira-context":   func() { os.Exit(Context(os.Args[1:], StdIO("mira-context"))) },
}

func TestScripts(t *testing.T) {
	fake := newFakeOpenAI()
	t.Cleanup(fake.srv.Close)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("MIRA_HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			env.Setenv("MIRA_PROJECT", "testproj")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "Test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "Test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("FAKE_OPENAI", fake.srv.URL+"/v1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":     cmdExits,
			"jsonlines": cmdJSONLines,
			"commits":   cmdCommits,
			"gitclean":  cmdGitClean,
			"holdlock":  cmdHoldLock,
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
			"sleep": func(ts *testscript.TestScript, neg bool, args []string) {
				d, _ := time.ParseDuration(args[0])
				time.Sleep(d)
			},
		},
	})
}

// exits N cmd args...: run a program and require exit status N exactly.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: exits N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if e, ok := err.(*exec.ExitError); ok {
			ee = e
		}
		if ee == nil {
			// testscript wraps the error; parse the status from its text.
			if _, serr := fmt.Sscanf(err.Error()[strings.LastIndex(err.Error(), "exit status ")+len("exit status "):], "%d", &got); serr != nil {
				ts.Fatalf("%s: %v", args[1], err)
			}
		} else {
			got = ee.ExitCode()
		}
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// jsonlines N: stdout of the last command has exactly N lines, each a JSON
// object.
func cmdJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	out := strings.TrimRight(ts.ReadFile("stdout"), "\n")
	var lines []string
	if out != "" {
		lines = strings.Split(out, "\n")
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "{") || !strings.HasSuffix(l, "}") {
			ts.Fatalf("stdout line %d is not a JSON object: %s", i+1, l)
		}
	}
	if len(lines) != want {
		ts.Fatalf("stdout has %d JSON lines, want %d", len(lines), want)
	}
}

// commits N: the store's history has exactly N commits.
func cmdCommits(ts *testscript.TestScript, neg bool, args []string) {
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	out, err := exec.Command("git", "-C", ts.Getenv("MIRA_HOME"), "rev-list", "--count", "HEAD").CombinedOutput()
	if err != nil {
		ts.Fatalf("git rev-list: %v\n%s", err, out)
	}
	got, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	if got != want {
		log, _ := exec.Command("git", "-C", ts.Getenv("MIRA_HOME"), "log", "--oneline").CombinedOutput()
		ts.Fatalf("store has %d commits, want %d:\n%s", got, want, log)
	}
}

// gitclean: `git status --porcelain` in the store is empty and fsck passes.
func cmdGitClean(ts *testscript.TestScript, neg bool, args []string) {
	home := ts.Getenv("MIRA_HOME")
	out, err := exec.Command("git", "-C", home, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
	if err != nil {
		ts.Fatalf("git status: %v\n%s", err, out)
	}
	clean := len(bytes.TrimSpace(out)) == 0
	if clean == neg {
		ts.Fatalf("git status --porcelain:\n%s", out)
	}
	if out, err := exec.Command("git", "-C", home, "fsck", "--full", "--no-dangling").CombinedOutput(); err != nil {
		ts.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// holdlock: write the store's lock file as if a live writer (this test
// process) held it right now.
func cmdHoldLock(ts *testscript.TestScript, neg bool, args []string) {
	host, _ := os.Hostname()
	data := fmt.Sprintf(`{"pid":%d,"host":%q,"command":"test","time":%q}`+"\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	ts.Check(os.WriteFile(filepath.Join(ts.Getenv("MIRA_HOME"), ".lock"), []byte(data), 0o644))
}
