package gitrepo

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestForeignIndexLock: a .git/index.lock of git's, which names no
// process, is respected while a git command works in the repository (even
// one that keeps it closed while its editor runs) or any process has it
// open, however old it is; once its git is killed, the lock it leaves is
// taken over at once instead of blocking every commit.
func TestForeignIndexLock(t *testing.T) {
	r, dir := newRepo(t)
	writeFile(t, dir, "a.md", "a\n")
	if _, err := r.Commit([]Change{{Path: "a.md"}}, "first", testSig); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, ".git", "index.lock")
	old := func() {
		t.Helper()
		past := time.Now().Add(-time.Minute)
		if err := os.Chtimes(lock, past, past); err != nil {
			t.Fatal(err)
		}
	}
	// start runs cmd in a process group of its own, and returns what kills
	// the group.
	start := func(cmd *exec.Cmd) func() {
		t.Helper()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kill := func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			waitGroupGone(t, cmd.Process.Pid)
		}
		t.Cleanup(kill)
		return kill
	}
	commit := func(name string) error {
		writeFile(t, dir, name, name+"\n")
		_, err := r.Commit([]Change{{Path: name}}, name, testSig)
		return err
	}

	// git commit -a waiting for its editor holds the lock without keeping
	// it open.
	writeFile(t, dir, "a.md", "changed by hand\n")
	git := exec.Command("git", "-c", "user.name=Ed", "-c", "user.email=ed@example.com", "commit", "-q", "-a")
	git.Dir = dir
	git.Env = append(gitEnv(t), "GIT_EDITOR=sleep 60;:")
	killGit := start(git)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(lock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("git commit took no index.lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
	old()
	if err := commit("b.md"); !errors.Is(err, ErrLocked) {
		t.Fatalf("Commit while git commit waits for its editor: %v, want ErrLocked", err)
	}
	killGit()
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the killed git left no lock: %v", err)
	}
	old()
	if err := commit("b.md"); err != nil {
		t.Fatalf("Commit over the lock of a killed git: %v", err)
	}

	// A lock some process has open is in use.
	writeFile(t, dir, ".git/index.lock", "")
	old()
	f, err := os.Open(lock)
	if err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("sleep", "60")
	holder.Stdin = f
	killHolder := start(holder)
	f.Close()
	if err := commit("c.md"); !errors.Is(err, ErrLocked) {
		t.Fatalf("Commit while a process has index.lock open: %v, want ErrLocked", err)
	}
	killHolder()
	if err := commit("c.md"); err != nil {
		t.Fatalf("Commit once nobody has index.lock open: %v", err)
	}
	// A fresh one is given its moment.
	writeFile(t, dir, ".git/index.lock", "")
	if err := commit("d.md"); !errors.Is(err, ErrLocked) {
		t.Fatalf("Commit with a lock made just now: %v, want ErrLocked", err)
	}
	removeFile(t, dir, ".git/index.lock")
	removeFile(t, dir, "d.md")
	runGit(t, dir, "checkout", "-q", "--", "a.md")
	assertClean(t, dir)
}

// waitGroupGone waits until every process of the process group pgid has
// died: a SIGKILL sent to a group takes effect in each process in its own
// time (a git caught between fork and exec by it still runs a moment).
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		live := ""
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, st := range stats {
			b, err := os.ReadFile(st)
			if err != nil {
				continue
			}
			i := bytes.LastIndexByte(b, ')')
			f := strings.Fields(string(b[i+1:])) // state ppid pgrp ...
			if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
				live = st
			}
		}
		if live == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still runs: %s", pgid, live)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
