package gitrepo

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const crashEnv = "GITREPO_CRASH_DIR"

// TestKilledCommit kills a process that commits (and now and then repacks)
// in a loop at random moments, and checks after each kill what a crash may
// leave: a repository that `git fsck` accepts, HEAD on a complete commit,
// an index git can read, and no lock that blocks the next commit.
func TestKilledCommit(t *testing.T) {
	if dir := os.Getenv(crashEnv); dir != "" {
		crashChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Parallel()
	_, dir := newRepo(t)
	for round := range 6 {
		delay := time.Duration(20+rand.IntN(100)) * time.Millisecond
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledCommit$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+dir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		cmd.Process.Kill()
		if err := cmd.Wait(); err != nil && !strings.Contains(err.Error(), "killed") {
			t.Fatalf("round %d: child failed before the kill: %v\n%s", round, err, stderr.String())
		}

		out, err := tryGit(t, dir, "fsck", "--full", "--strict", "--no-dangling", "--no-progress")
		if err != nil || out != "" {
			t.Fatalf("round %d (killed after %v): git fsck: %v\n%s", round, delay, err, out)
		}
		r, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		head, err := r.Head()
		if err != nil {
			t.Fatalf("round %d: Head: %v", round, err)
		}
		if head != "" {
			runGit(t, dir, "cat-file", "-e", head+"^{tree}")
		}
		// Whatever the child wrote but did not get to commit, and a
		// commit whose index update it did not finish, show up as
		// changes; recording them is how the store catches up.
		name := fmt.Sprintf("after/round%d.md", round)
		writeFile(t, dir, name, "x\n")
		changes := []Change{{Path: name}}
		for _, l := range lines(runGit(t, dir, "status", "--porcelain", "--untracked-files=all", "--no-renames")) {
			p := l[3:]
			_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
			changes = append(changes, Change{Path: p, Delete: errors.Is(err, os.ErrNotExist)})
		}

		// The next commit must go through without anyone removing locks.
		if _, err := r.Commit(changes, "after a crash", testSig); err != nil {
			t.Fatalf("round %d (killed after %v): commit after the kill: %v", round, delay, err)
		}
		// A lock's temporary file may stay for a minute (it is written
		// before the lock is taken); the others must be gone.
		for _, pattern := range []string{"mira-ref-*.tmp", "mira-index-*.tmp"} {
			if left, _ := filepath.Glob(filepath.Join(dir, ".git", pattern)); len(left) > 0 {
				t.Errorf("round %d: temporary files left: %v", round, left)
			}
		}
		assertClean(t, dir)
		t.Logf("round %d: %s commits", round, strings.TrimSpace(runGit(t, dir, "rev-list", "--count", "HEAD")))
	}
}

// crashChild commits forever until it is killed.
func crashChild(dir string) {
	r, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	for i := 0; ; i++ {
		name := fmt.Sprintf("entries/s%d/k%d/p%d-%d.md", i%3, i%5, os.Getpid(), i)
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(strings.Repeat("memory ", i%50+1)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		changes := []Change{{Path: name}}
		if i%4 == 3 { // a forget: the previous file moves away
			prev := fmt.Sprintf("entries/s%d/k%d/p%d-%d.md", (i-1)%3, (i-1)%5, os.Getpid(), i-1)
			os.Remove(filepath.Join(dir, filepath.FromSlash(prev)))
			changes = append(changes, Change{Path: prev, Delete: true})
		}
		if _, err := r.Commit(changes, fmt.Sprintf("commit %d\n\nMira-Command: crash\n", i), testSig); err != nil {
			fmt.Fprintln(os.Stderr, "commit:", err)
			os.Exit(3)
		}
		if i%3 == 1 {
			if err := r.Repack(); err != nil {
				fmt.Fprintln(os.Stderr, "repack:", err)
				os.Exit(3)
			}
		}
	}
}
