//go:build unix

package tools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBash(t *testing.T) {
	needBash(t)
	f := newFixture(t)
	f.write(t, "hello.txt", "hi\n")
	tests := []struct {
		name    string
		args    obj
		want    string
		isError bool
	}{
		{"output and exit code", obj{"command": "cat hello.txt"}, "hi\n[exit code 0]", false},
		{"runs in the root", obj{"command": "pwd -P"}, f.root + "\n[exit code 0]", false},
		{"non-zero exit", obj{"command": "echo failing; exit 3"}, "failing\n[exit code 3]", true},
		{"stderr interleaved", obj{"command": "echo one; echo two >&2; echo three"}, "one\ntwo\nthree\n[exit code 0]", false},
		{"no output", obj{"command": "true"}, "(no output)\n[exit code 0]", false},
		{"no final newline", obj{"command": "printf abc"}, "abc\n[exit code 0]", false},
		{"stdin is empty", obj{"command": "cat; echo done"}, "done\n[exit code 0]", false},
		{"colours and progress removed", obj{"command": `printf '\033[31mred\033[0m\n10%%\r50%%\r100%%\n'`}, "red\n100%\n[exit code 0]", false},
		{"killed by a signal", obj{"command": "kill -9 $$"}, "(no output)\n[killed by signal 9 (killed)]", true},
		{"empty command", obj{"command": "  "}, "command is empty", true},
		{"negative timeout", obj{"command": "true", "timeout": -5}, "timeout must be a positive number of seconds", true},
		{"timeout over the maximum", obj{"command": "echo ok", "timeout": 600000}, "[The timeout of 600000s is more than the maximum; it ran with 10m0s.]\nok\n[exit code 0]", false},
		{"timeout at the maximum", obj{"command": "echo ok", "timeout": 600}, "ok\n[exit code 0]", false},
		{"timeout one second over", obj{"command": "echo ok", "timeout": 601}, "[The timeout of 601s is more than the maximum; it ran with 10m0s.]\nok\n[exit code 0]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t, "bash", tt.args)
			if res.Content != tt.want || res.IsError != tt.isError {
				t.Errorf("bash(%v) = %q (error %v), want %q (error %v)", tt.args, res.Content, res.IsError, tt.want, tt.isError)
			}
		})
	}
}

// alive reports whether the process pid exists.
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// childPid reads the pid the command under test wrote, waiting for it.
func childPid(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(file)
		if pid, err2 := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && err2 == nil {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the command did not write its child's pid")
	return 0
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("child %d survived", pid)
	}
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	t.Parallel() // it waits on timers, not the processors
	needBash(t)
	f := newFixture(t)
	start := time.Now()
	res := f.call(t, "bash", obj{"command": "echo started; sleep 30 & echo $! > child.pid; wait", "timeout": 1})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a 1 s timeout took %v", took)
	}
	if !res.IsError {
		t.Errorf("timed-out result = %+v, want an error", res)
	}
	wantContains(t, "result", res.Content, "started\n", "[Timed out after 1s: the command and the processes it started were stopped.]")
	waitGone(t, childPid(t, filepath.Join(f.root, "child.pid")))
}

// A process that ignores SIGTERM is killed after the grace period.
func TestBashTimeoutKillsStubbornProcess(t *testing.T) {
	t.Parallel() // it waits on timers, not the processors
	needBash(t)
	if testing.Short() {
		t.Skip("waits for the kill grace period")
	}
	f := newFixture(t)
	start := time.Now()
	res := f.call(t, "bash", obj{"command": "trap '' TERM; sleep 30 & echo $! > child.pid; wait; wait", "timeout": 1})
	if took := time.Since(start); took > 1*time.Second+killGrace+3*time.Second {
		t.Errorf("took %v", took)
	}
	wantContains(t, "result", res.Content, "[Timed out after 1s")
	waitGone(t, childPid(t, filepath.Join(f.root, "child.pid")))
}

func TestBashContextCancel(t *testing.T) {
	t.Parallel() // it waits on timers, not the processors
	needBash(t)
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		childPid(t, filepath.Join(f.root, "child.pid"))
		cancel()
	}()
	start := time.Now()
	res, err := f.reg.Call(ctx, "bash", []byte(`{"command":"sleep 30 & echo $! > child.pid; wait"}`))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Call error = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("cancelling took %v", took)
	}
	if !res.IsError {
		t.Errorf("result = %+v, want an error", res)
	}
	wantContains(t, "result", res.Content, "[Interrupted: the command and the processes it started were stopped.]")
	waitGone(t, childPid(t, filepath.Join(f.root, "child.pid")))
}

// A process left in the background does not hold the call open.
func TestBashBackgroundProcessDoesNotBlock(t *testing.T) {
	needBash(t)
	f := newFixture(t)
	start := time.Now()
	res := f.call(t, "bash", obj{"command": "sleep 30 & echo $! > child.pid; echo back"})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if res.Content != "back\n[exit code 0]" {
		t.Errorf("content = %q", res.Content)
	}
	pid := childPid(t, filepath.Join(f.root, "child.pid"))
	syscall.Kill(pid, syscall.SIGKILL)
}

func TestBashOutputCap(t *testing.T) {
	needBash(t)
	f := newFixture(t, func(c *Config) { c.Limits.BashOutputBytes = 1000 })
	res := f.call(t, "bash", obj{"command": "echo BEGIN; head -c 5000 /dev/zero | tr '\\0' x; echo; echo END"})
	wantContains(t, "result", res.Content, "BEGIN\n", "KiB of output omitted …]", "END\n[exit code 0]")
	if len(res.Content) > 1200 {
		t.Errorf("capped output is %d bytes", len(res.Content))
	}
}

// needBash fails the test where the bash tool is meant to work (every Unix
// system; the tool runs commands with bash -c) and bash is missing, and
// skips it only where the tool cannot run at all.
func needBash(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		if runtime.GOOS == "windows" {
			t.Skip("bash is not available on Windows")
		}
		t.Fatalf("bash not found: the bash tool needs it: %v", err)
	}
}
