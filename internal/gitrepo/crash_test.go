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

	"github.com/miramem/mira/internal/fault"
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

const killAtEnv = "GITREPO_KILL_AT"

// TestKilledAtStep kills a commit at each of its delicate steps, the same
// way every time, and checks that what it left is repaired by the next
// step of a store: a RepairIndex when a writer takes the store's lock, or
// a next commit, even one that finds nothing to record.
func TestKilledAtStep(t *testing.T) {
	if step := os.Getenv(killAtEnv); step != "" {
		killedChild(os.Getenv(crashEnv), step)
		return
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Parallel()
	for _, step := range []string{fault.BeforeRef, fault.RefMoved, fault.IndexWritten} {
		for _, next := range []string{"repair", "empty commit", "commit"} {
			t.Run(step+"/"+next, func(t *testing.T) {
				r, dir := newRepo(t)
				writeFile(t, dir, "entries/old.md", "old\n")
				writeFile(t, dir, "entries/gone.md", "gone\n")
				writeFile(t, dir, "entries/keep.md", "keep\n")
				first, err := r.Commit([]Change{{Path: "entries/old.md"}, {Path: "entries/gone.md"}, {Path: "entries/keep.md"}}, "first", testSig)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(os.Args[0], "-test.run=^TestKilledAtStep$", "-test.count=1")
				cmd.Env = append(os.Environ(), crashEnv+"="+dir, killAtEnv+"="+step)
				out, err := cmd.CombinedOutput()
				if err == nil || !strings.Contains(err.Error(), "killed") {
					t.Fatalf("child meant to die at %s: %v\n%s", step, err, out)
				}
				switch next {
				case "repair":
					repaired, err := r.RepairIndex()
					if err != nil || !repaired {
						t.Fatalf("RepairIndex() = %v, %v; want true, nil", repaired, err)
					}
					if repaired, err := r.RepairIndex(); err != nil || repaired {
						t.Errorf("RepairIndex() again = %v, %v; want false, nil", repaired, err)
					}
				case "empty commit":
					if _, err := r.Commit([]Change{{Path: "entries/keep.md"}}, "nothing", testSig); !errors.Is(err, ErrNothingToCommit) {
						t.Fatalf("Commit of an unchanged file: %v, want ErrNothingToCommit", err)
					}
				case "commit":
					writeFile(t, dir, "entries/other.md", "other\n")
					if _, err := r.Commit([]Change{{Path: "entries/other.md"}}, "next", testSig); err != nil {
						t.Fatal(err)
					}
				}
				if step == fault.BeforeRef {
					// The killed commit never happened: its files are
					// changes waiting in the work tree.
					if got := runGit(t, dir, "status", "--porcelain", "--untracked-files=all"); got != " D entries/gone.md\n M entries/old.md\n?? entries/new.md\n" {
						t.Errorf("git status after a commit killed before its ref moved:\n%s", got)
					}
					return
				}
				assertClean(t, dir)
				if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("index.lock left: %v", err)
				}
				// The journal, with or without the killed commit's line,
				// answers what the trees answer.
				head, err := r.Head()
				if err != nil {
					t.Fatal(err)
				}
				got, err := r.Diff(first, head, "")
				if err != nil {
					t.Fatal(err)
				}
				if want := treeDiff(t, r, first, head, ""); strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("Diff after the kill = %v, the trees say %v", got, want)
				}
			})
		}
	}
}

// killedChild commits a change of three files in dir and dies by SIGKILL
// at step.
func killedChild(dir, step string) {
	fault.Set(func(s string) {
		if s == step {
			p, _ := os.FindProcess(os.Getpid())
			p.Kill()
			select {}
		}
	})
	r, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	for name, data := range map[string]string{"entries/new.md": "new\n", "entries/old.md": "changed\n"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(data), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
	os.Remove(filepath.Join(dir, "entries", "gone.md"))
	changes := []Change{{Path: "entries/new.md"}, {Path: "entries/old.md"}, {Path: "entries/gone.md", Delete: true}}
	if _, err := r.Commit(changes, "killed\n", testSig); err != nil {
		fmt.Fprintln(os.Stderr, "commit:", err)
		os.Exit(3)
	}
	fmt.Fprintln(os.Stderr, "not killed at", step)
	os.Exit(3)
}
