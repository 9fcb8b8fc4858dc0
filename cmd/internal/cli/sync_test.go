package cli

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miramem/mira/internal/fault"
)

// syncEnv is the environment the sync tests run commands in.
func syncEnv(t *testing.T) []string {
	dir := t.TempDir()
	return append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "MIRA_CONFIG=",
		"MIRA_HOME=", "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "MIRA_PROJECT=synctest")
}

// run runs a command (one of this test binary's, or git) and returns its
// exit status and output.
func runCmd(t *testing.T, env []string, stdin string, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return 0, string(out)
}

func mustRun(t *testing.T, env []string, stdin string, name string, args ...string) string {
	t.Helper()
	code, out := runCmd(t, env, stdin, name, args...)
	if code != 0 {
		t.Fatalf("%s %v exited %d:\n%s", name, args, code, out)
	}
	return out
}

// twoSyncedStores makes a bare remote, a store a with one memory pushed
// to it, and b cloned from it.
func twoSyncedStores(t *testing.T, env []string) (remote, a, b string) {
	t.Helper()
	dir := t.TempDir()
	remote, a, b = filepath.Join(dir, "remote.git"), filepath.Join(dir, "a"), filepath.Join(dir, "b")
	mustRun(t, env, "", "git", "init", "-q", "--bare", "--initial-branch=main", remote)
	mustRun(t, env, "first memory of the killed store\n", "mira-remember", "--home", a)
	mustRun(t, env, "", "git", "-C", a, "remote", "add", "origin", remote)
	mustRun(t, env, "", "mira-sync", "--home", a)
	mustRun(t, env, "", "mira-sync", "--home", b, "--clone", remote)
	return remote, a, b
}

// TestSyncKilled kills mira-sync with SIGKILL at random moments; the next
// sync completes, the repositories stay sound and nothing is lost.
func TestSyncKilled(t *testing.T) {
	env := syncEnv(t)
	remote, a, b := twoSyncedStores(t, env)
	want := 1
	for round := range 8 {
		var lines strings.Builder
		for n := range 5 {
			fmt.Fprintf(&lines, "round %d memory %d of the killed store\n", round, n)
		}
		mustRun(t, env, lines.String(), "mira-remember", "--home", a, "--lines")
		want += 5
		mustRun(t, env, fmt.Sprintf("round %d memory from the other store\n", round), "mira-remember", "--home", b)
		want++
		mustRun(t, env, "", "mira-sync", "--home", b)
		cmd := exec.Command("mira-sync", "--home", a)
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(400)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if code, out := runCmd(t, env, "", "mira-sync", "--home", a); code != 0 {
			t.Fatalf("round %d: sync after the kill exited %d:\n%s", round, code, out)
		}
	}
	mustRun(t, env, "", "mira-sync", "--home", b)
	checkSynced(t, env, remote, want, a, b)
}

// TestSyncExitCodes: an unreachable remote and refused credentials have
// statuses of their own and leave the store untouched.
func TestSyncExitCodes(t *testing.T) {
	env := syncEnv(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	mustRun(t, env, "a memory\n", "mira-remember", "--home", home)
	head := mustRun(t, env, "", "git", "-C", home, "rev-parse", "HEAD")

	// Nothing to do without a remote configured: a usage error.
	if code, out := runCmd(t, env, "", "mira-sync", "--home", home); code != ExitUsage || !strings.Contains(out, "mira-sync: remote: ") {
		t.Errorf("no remote: exit %d: %s", code, out)
	}

	mustRun(t, env, "", "git", "-C", home, "remote", "add", "origin", filepath.Join(dir, "missing.git"))
	// A hand edit waiting to be committed stays as it is.
	os.WriteFile(filepath.Join(home, "entries", "global", "notes", "20260101T000000Z__HAND.md"), []byte("---\nid: HAND\n---\nby hand\n"), 0o644)
	if code, out := runCmd(t, env, "", "mira-sync", "--home", home); code != ExitUnreachable || !strings.HasPrefix(out, "mira-sync: fetch from origin: fetch: remote unreachable") {
		t.Errorf("unreachable: exit %d: %s", code, out)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer srv.Close()
	mustRun(t, env, "", "git", "-C", home, "remote", "set-url", "origin", srv.URL+"/store.git")
	if code, out := runCmd(t, env, "", "mira-sync", "--home", home); code != ExitAuth || !strings.Contains(out, "authentication failed") {
		t.Errorf("auth: exit %d: %s", code, out)
	}
	if now := mustRun(t, env, "", "git", "-C", home, "rev-parse", "HEAD"); now != head {
		t.Errorf("the store moved from %s to %s", head, now)
	}
}

// crashEnv names the step (one of package fault's) at which a command of
// this test binary kills itself.
const crashEnv = "MIRA_TEST_CRASH_AT"

// crashAt makes this process die by SIGKILL, leaving what a kill leaves,
// the first time it reaches step.
func crashAt(step string) {
	if step == "" {
		return
	}
	fault.Set(func(s string) {
		if s != step {
			return
		}
		p, _ := os.FindProcess(os.Getpid())
		p.Kill()
		select {}
	})
}

// TestSyncKilledAt kills mira-sync at each delicate step of its merge
// commit, the same way every time: the next sync repairs what the kill
// left, and both stores and the remote end up with every memory, clean and
// sound.
func TestSyncKilledAt(t *testing.T) {
	for _, step := range []string{fault.TxFilesWritten, fault.BeforeRef, fault.RefMoved, fault.IndexWritten} {
		t.Run(step, func(t *testing.T) {
			env := syncEnv(t)
			remote, a, b := twoSyncedStores(t, env)
			mustRun(t, env, "a memory of the killed store\n", "mira-remember", "--home", a)
			mustRun(t, env, "a memory of the other store\n", "mira-remember", "--home", b)
			mustRun(t, env, "", "mira-sync", "--home", b)

			code, out := runCmd(t, append(env, crashEnv+"="+step), "", "mira-sync", "--home", a)
			if code != -1 {
				t.Fatalf("mira-sync meant to die at %s exited %d:\n%s", step, code, out)
			}
			mustRun(t, env, "", "mira-sync", "--home", a)
			mustRun(t, env, "", "mira-sync", "--home", b)
			checkSynced(t, env, remote, 3, a, b)
		})
	}
}

// checkSynced checks that each store holds want entry files, committed and
// clean, and that git finds every repository sound.
func checkSynced(t *testing.T, env []string, remote string, want int, homes ...string) {
	t.Helper()
	for _, home := range homes {
		out := mustRun(t, env, "", "git", "-C", home, "ls-files", "entries")
		if n := strings.Count(out, ".md\n"); n != want {
			t.Errorf("%s holds %d entry files, want %d", home, n, want)
		}
		if out := mustRun(t, env, "", "git", "-C", home, "status", "--porcelain"); out != "" {
			t.Errorf("%s not clean:\n%s", home, out)
		}
		if out := mustRun(t, env, "", "git", "-C", home, "fsck", "--no-dangling"); out != "" {
			t.Errorf("fsck %s: %s", home, out)
		}
	}
	if out := mustRun(t, env, "", "git", "-C", remote, "fsck", "--no-dangling"); out != "" {
		t.Errorf("fsck remote: %s", out)
	}
}
