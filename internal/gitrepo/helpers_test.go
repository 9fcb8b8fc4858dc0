package gitrepo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

var testSig = Signature{Name: "Mira Test", Email: "test@example.com", When: time.Date(2026, 11, 21, 10, 0, 0, 0, time.FixedZone("", 3600))}

// gitEnv isolates the git CLI from the user's and the system's
// configuration, so the tests see git's defaults.
func gitEnv(t testing.TB) []string {
	return append(os.Environ(),
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=CLI", "GIT_AUTHOR_EMAIL=cli@example.com",
		"GIT_COMMITTER_NAME=CLI", "GIT_COMMITTER_EMAIL=cli@example.com",
		"HOME="+t.TempDir(),
	)
}

// runGit runs the git CLI in dir and returns its standard output; it fails
// the test when git fails.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := tryGit(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func tryGit(t testing.TB, dir string, args ...string) (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(t)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// lines splits git output into its non-empty lines.
func lines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimRight(l, "\n"); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func newRepo(t testing.TB) (*Repo, string) {
	t.Helper()
	dir := t.TempDir()
	if _, err := Init(dir); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

func writeFile(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func removeFile(t testing.TB, dir, name string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
		t.Fatal(err)
	}
}

// assertClean checks the two properties every commit must leave: `git
// status` shows nothing and `git fsck` finds nothing wrong.
func assertClean(t testing.TB, dir string) {
	t.Helper()
	if st := runGit(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("git status --porcelain = %q, want empty", st)
	}
	out, err := tryGit(t, dir, "fsck", "--full", "--strict", "--no-progress")
	var bad []string
	for _, l := range lines(out) {
		if !strings.HasPrefix(l, "dangling ") {
			bad = append(bad, l)
		}
	}
	if err != nil || len(bad) > 0 {
		t.Errorf("git fsck: %v\n%s", err, strings.Join(bad, "\n"))
	}
}

// committedPaths lists the paths the commit changed according to git.
func committedPaths(t testing.TB, dir, rev string) []string {
	t.Helper()
	ps := lines(runGit(t, dir, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", rev))
	sort.Strings(ps)
	return ps
}
