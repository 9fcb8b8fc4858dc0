package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStaleGitIndexLock: a .git/index.lock that a git killed midway left
// in the store (no process uses it) no longer makes every write exit 11;
// the next writer takes it over.
func TestStaleGitIndexLock(t *testing.T) {
	env := syncEnv(t)
	home := filepath.Join(t.TempDir(), "home")
	mustRun(t, env, "a first memory\n", "mira-remember", "--home", home)
	lock := filepath.Join(home, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute)
	if err := os.Chtimes(lock, past, past); err != nil {
		t.Fatal(err)
	}
	if code, out := runCmd(t, env, "a second memory\n", "mira-remember", "--home", home); code != 0 {
		t.Fatalf("mira-remember with a dead git's index.lock exited %d:\n%s", code, out)
	}
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("index.lock still there: %v", err)
	}
	if out := mustRun(t, env, "", "git", "-C", home, "status", "--porcelain"); out != "" {
		t.Errorf("not clean:\n%s", out)
	}
}
