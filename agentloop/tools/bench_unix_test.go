//go:build unix

package tools

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkBashGit measures a trivial confined command (true) in a git
// repository, as bash runs it: in a mount namespace with git's files
// mounted read-only ("namespace"), with only the check after it
// ("check"), and with git's files not kept ("allowed"), so the difference
// is what the protection costs a command.
func BenchmarkBashGit(b *testing.B) {
	if abi, _ := landlockABI(); abi < 1 {
		b.Skip("no Landlock")
	}
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	repo := func(c *Config) {
		if out, err := exec.Command("git", "init", "-q", c.Root).CombinedOutput(); err != nil {
			b.Fatalf("git init: %v %s", err, out)
		}
	}
	run := func(b *testing.B, f *fixture) {
		args := []byte(`{"command":"true"}`)
		for b.Loop() {
			if res, _ := f.reg.Call(context.Background(), "bash", args); res.IsError {
				b.Fatal(res.Content)
			}
		}
		if !exists(b, filepath.Join(f.root, ".git", "config")) {
			b.Fatal("no repository")
		}
	}
	b.Run("namespace", func(b *testing.B) {
		if err := mountNamespaces(); err != nil {
			b.Skip(err)
		}
		run(b, newFixture(b, repo))
	})
	b.Run("check", func(b *testing.B) {
		old := mountNamespaces
		mountNamespaces = func() error { return errors.New("off") }
		defer func() { mountNamespaces = old }()
		run(b, newFixture(b, repo))
	})
	b.Run("allowed", func(b *testing.B) {
		run(b, newFixture(b, repo, func(c *Config) { c.AllowGitConfig = true }))
	})
}
