// Package clitest holds what the commands' end-to-end scripts share: the
// environment a script runs in and the script commands that check exit
// statuses, JSONL output and the store's git history. It is imported by
// tests only.
package clitest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// RunBuilt builds the command in the working directory (a test's own
// cmd/<name> package) into a temporary directory, sets *bin to it, runs
// the tests and exits with their status: tests that start the real
// program, as a host or a signal would, start that binary.
func RunBuilt(m *testing.M, name string, bin *string) {
	dir, err := os.MkdirTemp("", name+"-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-o", *bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build %s: %v\n%s", name, err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Setup gives a script a store in its work directory, a project name, a
// git identity and no configuration of the user's. Recalls start no
// server (MIRA_SERVE=0): one would outlive the script; the scripts that
// test it start it themselves.
func Setup(env *testscript.Env) error {
	env.Setenv("MIRA_SERVE", "0")
	env.Setenv("MIRA_HOME", filepath.Join(env.WorkDir, "home"))
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
	env.Setenv("MIRA_PROJECT", "testproj")
	env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	env.Setenv("GIT_AUTHOR_NAME", "Test")
	env.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
	env.Setenv("GIT_COMMITTER_NAME", "Test")
	env.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
	env.Setenv("HOME", env.WorkDir)
	return nil
}

// Cmds are the script commands: exits, jsonlines, commits, gitclean,
// holdlock, sleep and listening.
func Cmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"exits":     exits,
		"jsonlines": jsonLines,
		"commits":   commits,
		"gitclean":  gitClean,
		"holdlock":  holdLock,
		"sleep": func(ts *testscript.TestScript, neg bool, args []string) {
			d, _ := time.ParseDuration(args[0])
			time.Sleep(d)
		},
		"listening": listening,
	}
}

// listening SOCKET: wait until a server accepts connections on the Unix
// socket SOCKET. A server started in the background is ready when it
// listens, however long a loaded machine takes to start it; a socket file
// left by a killed server does not count, since nothing accepts on it.
func listening(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: listening SOCKET")
	}
	const limit = 2 * time.Minute
	deadline := time.Now().Add(limit)
	for {
		c, err := net.Dial("unix", args[0])
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nothing listens on %s after %v: %v", args[0], limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exits N cmd args...: run a program and require exit status N exactly.
func exits(ts *testscript.TestScript, neg bool, args []string) {
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
func jsonLines(ts *testscript.TestScript, neg bool, args []string) {
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
func commits(ts *testscript.TestScript, neg bool, args []string) {
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
func gitClean(ts *testscript.TestScript, neg bool, args []string) {
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
func holdLock(ts *testscript.TestScript, neg bool, args []string) {
	host, _ := os.Hostname()
	data := fmt.Sprintf(`{"pid":%d,"host":%q,"command":"test","time":%q}`+"\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	ts.Check(os.WriteFile(filepath.Join(ts.Getenv("MIRA_HOME"), ".lock"), []byte(data), 0o644))
}

// Git runs git in dir and returns its output; a failure fails the test.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
