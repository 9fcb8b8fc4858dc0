package cli

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miramem/mira/cmd/internal/relay"
)

// serverPIDs lists the servers started on demand for the store at home,
// from the command lines of the running processes.
func serverPIDs(t *testing.T, home string) []int {
	t.Helper()
	want := []byte("watch\x00--on-demand\x00--home\x00" + home + "\x00")
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, want) && !zombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// onDemand is a runner whose recalls may start a server, which the test
// stops at its end whatever happens.
func onDemand(t *testing.T) *procRunner {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("finds the servers through /proc")
	}
	r := newRunner(t)
	t.Cleanup(func() { killServers(t, r.home) })
	return r
}

// killServers kills the store's servers and waits until they are gone.
func killServers(t *testing.T, home string) {
	t.Helper()
	for range 200 {
		pids := serverPIDs(t, home)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("servers of %s still running", home)
}

// recall runs mira-recall with serving on demand allowed, and returns its
// output.
func (r *procRunner) recall(env []string, args ...string) string {
	r.t.Helper()
	var out, errb bytes.Buffer
	c := r.cmd("mira-recall", args...)
	c.Env = append(append(c.Env, "MIRA_SERVE=1"), env...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		r.t.Fatalf("mira-recall %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestServeOnDemand: the first recall starts a server that answers the
// next ones, and a hand edit or a remember is seen by the next recall
// through it; a server killed outright leaves a store that the next
// recall answers from, starting another server.
func TestServeOnDemand(t *testing.T) {
	r := onDemand(t)
	r.run("mira-remember", "tomatoes grow in the garden")
	if out := r.recall(nil, "tomatoes"); !strings.Contains(out, "tomatoes grow") {
		t.Fatalf("first recall: %q", out)
	}
	pids := serverPIDs(t, r.home)
	if len(pids) != 1 {
		t.Fatalf("servers after the first recall: %v, want one", pids)
	}
	if _, err := os.Stat(relay.Socket(r.home)); err != nil {
		t.Fatalf("no socket: %v", err)
	}

	// A hand edit, just before the recall.
	var file string
	filepath.WalkDir(filepath.Join(r.home, "entries"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".md") {
			file = p
		}
		return nil
	})
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.Replace(b, []byte("tomatoes"), []byte("cucumbers"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := r.recall(nil, "cucumbers"); !strings.Contains(out, "cucumbers grow") {
		t.Errorf("recall after a hand edit: %q", out)
	}
	// A remember.
	r.run("mira-remember", "zucchini need sun")
	if out := r.recall(nil, "zucchini"); !strings.Contains(out, "zucchini need sun") {
		t.Errorf("recall after a remember: %q", out)
	}
	if got := serverPIDs(t, r.home); !slices.Equal(got, pids) {
		t.Errorf("servers = %v, want the first one, %v, still answering", got, pids)
	}

	// Killed outright: its socket and lease stay behind.
	killServers(t, r.home)
	r.run("mira-remember", "radishes are quick")
	if out := r.recall(nil, "radishes"); !strings.Contains(out, "radishes are quick") {
		t.Errorf("recall after the server was killed: %q", out)
	}
	if got := serverPIDs(t, r.home); len(got) != 1 || got[0] == pids[0] {
		log, _ := os.ReadFile(filepath.Join(r.home, ".index", relay.ServeLog))
		t.Errorf("servers after the kill and a recall = %v, want a new one; log:\n%s", got, log)
	}
	r.run("mira-index", "status") // the store is sound
}

// TestServeRace: clients that start at once on a store nobody serves all
// get their answer, and one server is left running.
func TestServeRace(t *testing.T) {
	r := onDemand(t)
	r.run("mira-remember", "peppers like heat")
	r.run("mira-index", "update")
	const clients = 6
	var wg sync.WaitGroup
	outs := make([]string, clients)
	for i := range clients {
		wg.Go(func() { outs[i] = r.recall(nil, "peppers") })
	}
	wg.Wait()
	for i, out := range outs {
		if !strings.Contains(out, "peppers like heat") {
			t.Errorf("client %d: %q", i, out)
		}
	}
	// The ones that lost the race leave at once.
	var pids []int
	waitFor(5*time.Second, func() bool { pids = serverPIDs(t, r.home); return len(pids) == 1 })
	if len(pids) != 1 {
		t.Fatalf("servers = %v, want one", pids)
	}
	time.Sleep(200 * time.Millisecond)
	if got := serverPIDs(t, r.home); !slices.Equal(got, pids) {
		t.Errorf("servers = %v a moment later, want %v", got, pids)
	}
}

// TestServeIdleExit: a server started on demand stops after
// recall.serve_idle without a recall, and takes its socket with it.
func TestServeIdleExit(t *testing.T) {
	r := onDemand(t)
	cfg := filepath.Join(r.home+".config", "mira", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("recall:\n  serve_idle: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.run("mira-remember", "beans climb")
	r.recall(nil, "beans")
	if len(serverPIDs(t, r.home)) != 1 {
		t.Fatal("no server after the first recall")
	}
	if !waitFor(15*time.Second, func() bool { return len(serverPIDs(t, r.home)) == 0 }) {
		t.Fatal("the server did not stop when idle")
	}
	if _, err := os.Stat(relay.Socket(r.home)); !os.IsNotExist(err) {
		t.Errorf("socket after the idle exit: %v, want none", err)
	}
	if out := r.recall(nil, "beans"); !strings.Contains(out, "beans climb") {
		t.Errorf("recall after the idle exit: %q", out)
	}
}

// TestServeOptOut: MIRA_SERVE=0 or recall.serve: false keep recalls in
// their own process.
func TestServeOptOut(t *testing.T) {
	r := onDemand(t)
	r.run("mira-remember", "onions keep")
	r.run("mira-index", "update")
	if out := r.recall([]string{"MIRA_SERVE=0"}, "onions"); !strings.Contains(out, "onions keep") {
		t.Errorf("recall: %q", out)
	}
	if got := serverPIDs(t, r.home); len(got) != 0 {
		t.Errorf("MIRA_SERVE=0: servers %v, want none", got)
	}
	cfg := filepath.Join(r.home+".config", "mira", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("recall:\n  k: 5\n  serve: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := r.recall([]string{"MIRA_SERVE="}, "onions"); !strings.Contains(out, "onions keep") {
		t.Errorf("recall: %q", out)
	}
	if got := serverPIDs(t, r.home); len(got) != 0 {
		t.Errorf("recall.serve: false: servers %v, want none", got)
	}
	// Turned on again by the environment.
	r.recall(nil, "onions")
	if got := serverPIDs(t, r.home); len(got) != 1 {
		t.Errorf("MIRA_SERVE=1 over recall.serve: false: servers %v, want one", got)
	}
}

// TestServedRemember: while a server runs, mira-remember's small client
// has it store the memory (a client with no mira-index beside it still
// succeeds), signed as the client's environment says; memories on stdin
// and refused ones are the client's own business, with the same output
// and status as without a server.
func TestServedRemember(t *testing.T) {
	r := onDemand(t)
	r.run("mira-remember", "tomatoes grow in the garden")
	r.recall([]string{"GIT_AUTHOR_NAME=Server"}, "tomatoes") // starts the server
	if len(serverPIDs(t, r.home)) != 1 {
		t.Fatal("no server")
	}
	// The client alone: it cannot run the command itself.
	lone := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(lone, "mira-remember")); err != nil {
		t.Fatal(err)
	}
	alone := func(stdin string, args ...string) (string, string, error) {
		c := r.cmd("mira-remember", args...)
		c.Path = filepath.Join(lone, "mira-remember")
		c.Args[0] = c.Path
		c.Env = append(c.Env, "PATH=", "GIT_AUTHOR_NAME=Client")
		c.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		return out.String(), errb.String(), err
	}
	out, errb, err := alone("", "zucchini need sun", "--kind", "fact")
	if err != nil || !strings.Contains(out, `"text":"zucchini need sun"`) || !strings.Contains(out, `"kind":"fact"`) {
		t.Fatalf("served remember: %v, %q, %q", err, out, errb)
	}
	if got := git(t, r.home, "log", "-1", "--format=%an"); strings.TrimSpace(got) != "Client" {
		t.Errorf("served commit signed by %q, want the client's Client", got)
	}
	if out := r.recall(nil, "zucchini"); !strings.Contains(out, "zucchini need sun") {
		t.Errorf("recall after a served remember: %q", out)
	}
	// The same memory again: found, not stored twice, as without a server.
	out, errb, err = alone("", "zucchini need sun", "--kind", "fact")
	if err != nil || !strings.Contains(errb, "already remembered") {
		t.Errorf("served duplicate: %v, %q, %q", err, out, errb)
	}
	// A refused memory: the same status and message.
	_, errb, err = alone("", "--kind", "nonsense", "x")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitUsage || !strings.Contains(errb, "--kind: must be one of") {
		t.Errorf("served bad kind: %v, %q", err, errb)
	}
	// stdin is the client's: the server does not take it, so the lone
	// client has to run the command itself, and cannot.
	_, errb, err = alone("beans climb\n")
	if err == nil || !strings.Contains(errb, "cannot find mira-index") {
		t.Errorf("remember from stdin with no mira-index: %v, %q", err, errb)
	}
	c := r.cmd("mira-remember")
	c.Stdin = strings.NewReader("beans climb\n")
	if b, err := c.CombinedOutput(); err != nil || !strings.Contains(string(b), "beans climb") {
		t.Errorf("remember from stdin beside a server: %v, %s", err, b)
	}
	r.run("mira-index", "status")
}

// TestServeReadyPipe: a server started on demand writes one byte to its
// readiness pipe once its socket answers, then closes it; one that finds
// the store served closes it without a byte. The client that started it
// waits on that pipe instead of looking again and again.
func TestServeReadyPipe(t *testing.T) {
	r := onDemand(t)
	r.run("mira-remember", "tomatoes grow in the garden")
	start := func() (*exec.Cmd, *os.File) {
		t.Helper()
		rd, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		c := r.cmd("mira-index", "watch", "--on-demand", "--home", r.home, "--ready-fd", "3")
		c.ExtraFiles = []*os.File{w}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		t.Cleanup(func() { rd.Close() })
		return c, rd
	}
	_, rd := start()
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	// The server still runs: the pipe ended with its byte, not with it.
	if len(b) != 1 {
		t.Fatalf("the server wrote %q to its readiness pipe, want one byte", b)
	}
	c, err := net.Dial("unix", relay.Socket(r.home))
	if err != nil {
		t.Fatalf("ready, but its socket does not answer: %v", err)
	}
	c.Close()
	if pids := serverPIDs(t, r.home); len(pids) != 1 {
		t.Fatalf("servers after the byte: %v, want one", pids)
	}

	// A second one leaves quietly, and says nothing on its pipe.
	second, rd2 := start()
	b, err = io.ReadAll(rd2)
	if err != nil || len(b) != 0 {
		t.Fatalf("a server that does not serve wrote %q (%v), want the pipe closed empty", b, err)
	}
	if err := second.Wait(); err != nil {
		t.Errorf("the second server: %v", err)
	}
}
