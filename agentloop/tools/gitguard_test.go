//go:build unix

package tools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes the project root a git repository with one commit, before
// the tools are made.
func gitRepo(t *testing.T) fixtureOpt {
	return func(c *Config) {
		t.Helper()
		runGit(t, c.Root, "init", "-q")
		if err := os.WriteFile(filepath.Join(c.Root, "a.txt"), []byte("a\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		runGit(t, c.Root, "add", "a.txt")
		runGit(t, c.Root, "commit", "-qm", "first")
	}
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git not found: the store and these tests need it: %v", err)
	}
	c := exec.Command("git", args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	b, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return string(b)
}

func fileText(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// The file tools change nothing in a git directory, however it is named.
func TestFileToolsRefuseGitDir(t *testing.T) {
	f := newFixture(t, gitRepo(t))
	config := filepath.Join(f.root, ".git", "config")
	before := fileText(t, config)
	if err := os.Symlink(".git", filepath.Join(f.root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args obj
	}{
		{"edit_file", obj{"path": ".git/config", "old_string": "[core]", "new_string": "[core]\n\tfsmonitor = touch /tmp/x"}},
		{"write_file", obj{"path": ".git/config", "content": "[core]\n\tfsmonitor = touch /tmp/x\n"}},
		{"write_file", obj{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch /tmp/x\n"}},
		{"write_file", obj{"path": filepath.Join(f.root, ".git", "commondir"), "content": "../evil\n"}},
		{"write_file", obj{"path": "link/hooks/post-checkout", "content": "#!/bin/sh\n"}},
		{"write_file", obj{"path": ".GIT/config", "content": "x"}},
		{"write_file", obj{"path": "sub/.git/config", "content": "[core]\n\tfsmonitor = x\n"}},
		{"write_file", obj{"path": "wt/.git", "content": "gitdir: ../evil\n"}},
	} {
		res := f.call(t, c.tool, c.args)
		if !res.IsError || !strings.Contains(res.Content, "the file tools do not change git's files") {
			t.Errorf("%s %v = %q, want a refusal", c.tool, c.args, res.Content)
		}
	}
	if got := fileText(t, config); got != before {
		t.Errorf(".git/config changed:\n%s", got)
	}
	for _, p := range []string{".git/hooks/pre-commit", ".git/hooks/post-checkout", ".git/commondir", "sub", "wt"} {
		if exists(t, filepath.Join(f.root, p)) {
			t.Errorf("%s was written", p)
		}
	}
	// Reading stays allowed, and files named like git's elsewhere are
	// written.
	if res := f.call(t, "read_file", obj{"path": ".git/config"}); res.IsError {
		t.Errorf("read_file .git/config: %q", res.Content)
	}
	if res := f.call(t, "write_file", obj{"path": "docs/.gitignore", "content": "x\n"}); res.IsError {
		t.Errorf("write_file docs/.gitignore: %q", res.Content)
	}
}

// With the user's leave, the file tools write in the git directory.
func TestFileToolsAllowGitConfig(t *testing.T) {
	f := newFixture(t, gitRepo(t), func(c *Config) { c.AllowGitConfig = true })
	res := f.call(t, "write_file", obj{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"})
	if res.IsError || !exists(t, filepath.Join(f.root, ".git", "hooks", "pre-commit")) {
		t.Errorf("write_file with AllowGitConfig: %q", res.Content)
	}
}

// A protected path under the project (the memory store) is not written
// by the file tools.
func TestFileToolsRefuseProtected(t *testing.T) {
	var store string
	f := newFixture(t, func(c *Config) {
		store = filepath.Join(c.Root, "memory")
		if err := os.Mkdir(store, 0o755); err != nil {
			t.Fatal(err)
		}
		c.Protect = []string{store}
	})
	res := f.call(t, "write_file", obj{"path": "memory/entries/x.md", "content": "pinned\n"})
	if !res.IsError || !strings.Contains(res.Content, "remember tool") || exists(t, filepath.Join(store, "entries")) {
		t.Errorf("write_file in the store: %q", res.Content)
	}
}

// bashGitCases are commands a model could use to plant a command that the
// user's next git runs.
var bashGitCases = []struct{ name, command string }{
	{"git config", "git config core.fsmonitor 'touch $MARK'"},
	{"edit the config", "printf '[core]\\n\\tfsmonitor = touch $MARK\\n' >> .git/config"},
	{"replace the config", "cp .git/config c && printf '[core]\\n\\thooksPath = h\\n' >> c && mv c .git/config"},
	{"hook", "printf '#!/bin/sh\\ntouch $MARK\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"},
	{"hooks directory", "mv .git/hooks .git/hooks.old && mkdir .git/hooks && printf '#!/bin/sh\\ntouch $MARK\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"},
	{"new .git", "mv .git .git.old && cp -r .git.old .git && git config core.fsmonitor 'touch $MARK'"},
	{"commondir", "mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/ && printf '[core]\\n\\tfsmonitor = touch $MARK\\n' > evil/config && echo ../evil > .git/commondir"},
	{"link", "mv .git .real && ln -s .real .git && git config core.fsmonitor 'touch $MARK'"},
	{"embedded repository", "git init -q sub && echo b > sub/b && git -C sub add b && git -C sub commit -qm b && git -C sub config core.fsmonitor 'touch $MARK; false' && git add sub 2>/dev/null; git commit -qm sub"},
	{"config.worktree", "git config extensions.worktreeConfig true; printf '[core]\\n\\tfsmonitor = touch $MARK\\n' > .git/config.worktree"},
}

func testBashGit(t *testing.T) {
	needLandlock(t)
	mark := filepath.Join(t.TempDir(), "ran")
	t.Setenv("MARK", mark)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	for _, k := range []string{"GIT_AUTHOR", "GIT_COMMITTER"} {
		t.Setenv(k+"_NAME", "T")
		t.Setenv(k+"_EMAIL", "t@example.com")
	}
	for _, c := range bashGitCases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, gitRepo(t))
			git := filepath.Join(f.root, ".git")
			config := fileText(t, filepath.Join(git, "config"))
			res := f.call(t, "bash", obj{"command": c.command})
			t.Logf("%s: %s", c.command, res.Content)
			if !strings.Contains(res.Content, "--allow-git-config") {
				t.Errorf("the result does not tell the model: %q", res.Content)
			}
			if got := fileText(t, filepath.Join(git, "config")); got != config {
				t.Errorf(".git/config changed:\n%s", got)
			}
			for _, p := range []string{"hooks/pre-commit", "commondir", "config.worktree"} {
				if exists(t, filepath.Join(git, p)) {
					t.Errorf(".git/%s is there", p)
				}
			}
			// The user's next git commands run nothing of the model's.
			os.WriteFile(filepath.Join(f.root, "b.txt"), []byte("b\n"), 0o644)
			runGit(t, f.root, "status")
			runGit(t, f.root, "add", "b.txt")
			runGit(t, f.root, "commit", "-qm", "user's")
			if exists(t, mark) {
				t.Fatalf("the user's git ran the model's command")
			}
		})
	}
	t.Run("git add and commit work", func(t *testing.T) {
		f := newFixture(t, gitRepo(t))
		res := f.call(t, "bash", obj{"command": "echo c > c.txt && git add c.txt && git commit -qm second && git checkout -qb topic && git log --format=%s"})
		if res.IsError || !strings.Contains(res.Content, "second\nfirst\n[exit code 0]") {
			t.Errorf("result = %q", res.Content)
		}
	})
	t.Run("a new repository", func(t *testing.T) {
		f := newFixture(t)
		res := f.call(t, "bash", obj{"command": "git init -q && echo c > c.txt && git add c.txt && git commit -qm first && git log --format=%s"})
		if res.IsError || res.Reverted || !strings.Contains(res.Content, "first\n[exit code 0]") || !exists(t, filepath.Join(f.root, ".git")) {
			t.Errorf("result = %q", res.Content)
		}
		g := newFixture(t)
		res = g.call(t, "bash", obj{"command": "git init -q && git config core.fsmonitor 'touch $MARK'"})
		if !res.IsError || !res.Reverted || !strings.Contains(res.Content, "core.fsmonitor") {
			t.Errorf("result = %q (reverted %v)", res.Content, res.Reverted)
		}
		if exists(t, filepath.Join(g.root, ".git")) {
			t.Error("the new repository with core.fsmonitor is left as .git")
		}
	})
}

// Bash's commands cannot plant a command in the repository's git
// configuration or hooks, in a mount namespace of their own.
func TestBashGitProtected(t *testing.T) {
	if err := mountNamespaces(); err != nil {
		t.Skipf("no mount namespaces: %v", err)
	}
	testBashGit(t)
}

// Where there are no mount namespaces, what a command changed is put
// back after it, and the user is told once.
func TestBashGitRestored(t *testing.T) {
	old := mountNamespaces
	mountNamespaces = func() error { return errors.New("simulated") }
	t.Cleanup(func() { mountNamespaces = old })
	testBashGit(t)
}

// A protected path under the project is read-only to bash's commands.
func TestBashProtected(t *testing.T) {
	needLandlock(t)
	if err := mountNamespaces(); err != nil {
		t.Skipf("no mount namespaces: %v", err)
	}
	var store string
	f := newFixture(t, func(c *Config) {
		store = filepath.Join(c.Root, "memory")
		if err := os.Mkdir(store, 0o755); err != nil {
			t.Fatal(err)
		}
		c.Protect = []string{store}
	})
	res := f.call(t, "bash", obj{"command": "echo x > memory/y; mv memory m2; echo ok > z"})
	if exists(t, filepath.Join(store, "y")) || !exists(t, store) || fileText(t, filepath.Join(f.root, "z")) != "ok\n" {
		t.Errorf("result = %q", res.Content)
	}
}

// Without mount namespaces, the user is told once how git's files are
// kept; with the user's leave to change them, nothing is said.
func TestBashGitNotice(t *testing.T) {
	needLandlock(t)
	old := mountNamespaces
	mountNamespaces = func() error { return errors.New("simulated") }
	t.Cleanup(func() { mountNamespaces = old })
	for _, allow := range []bool{false, true} {
		var notices []string
		f := newFixture(t, func(c *Config) {
			c.AllowGitConfig = allow
			c.Notice = func(msg string) { notices = append(notices, msg) }
		})
		f.call(t, "bash", obj{"command": "true"})
		f.call(t, "bash", obj{"command": "true"})
		switch {
		case allow && len(notices) != 0:
			t.Errorf("notices with AllowGitConfig = %q", notices)
		case !allow && (len(notices) != 1 || !strings.Contains(notices[0], "(simulated)") || !strings.Contains(notices[0], "undone after each command")):
			t.Errorf("notices = %q, want one about git's files", notices)
		}
	}
}

// A project inside a protected path is read-only to bash's commands.
func TestBashProtectedAround(t *testing.T) {
	needLandlock(t)
	if err := mountNamespaces(); err != nil {
		t.Skipf("no mount namespaces: %v", err)
	}
	store := t.TempDir()
	proj := filepath.Join(store, "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *Config) { c.Root, c.Protect = proj, []string{store} })
	f.root = proj
	res := f.call(t, "bash", obj{"command": "echo x > y"})
	if !res.IsError || exists(t, filepath.Join(proj, "y")) {
		t.Errorf("result = %q", res.Content)
	}
}

// In a linked worktree whose main repository the user allowed, the main
// repository's configuration and hooks are kept as well, and commits
// work.
func TestBashGitWorktree(t *testing.T) {
	needLandlock(t)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	for _, k := range []string{"GIT_AUTHOR", "GIT_COMMITTER"} {
		t.Setenv(k+"_NAME", "T")
		t.Setenv(k+"_EMAIL", "t@example.com")
	}
	for _, ns := range []bool{true, false} {
		if ns && mountNamespaces() != nil {
			continue
		}
		main := t.TempDir()
		gitRepo(t)(&Config{Root: main})
		wt := filepath.Join(t.TempDir(), "wt")
		runGit(t, main, "worktree", "add", "-q", wt)
		if !ns {
			old := mountNamespaces
			mountNamespaces = func() error { return errors.New("simulated") }
			t.Cleanup(func() { mountNamespaces = old })
		}
		config := fileText(t, filepath.Join(main, ".git", "config"))
		f := newFixture(t, func(c *Config) { c.Root, c.AllowPaths = wt, []string{filepath.Join(main, ".git")} })
		res := f.call(t, "bash", obj{"command": "echo c > c.txt && git add c.txt && git commit -qm second && git log --format=%s"})
		if !strings.Contains(res.Content, "second\nfirst\n[exit code 0]") {
			t.Errorf("namespace %v: commit in the worktree: %q", ns, res.Content)
		}
		res = f.call(t, "bash", obj{"command": "git config core.fsmonitor 'touch x'; printf '#!/bin/sh\\n' > " + filepath.Join(main, ".git", "hooks", "post-commit")})
		if got := fileText(t, filepath.Join(main, ".git", "config")); got != config {
			t.Errorf("namespace %v: the main repository's config changed: %q\n%s", ns, res.Content, got)
		}
		if exists(t, filepath.Join(main, ".git", "hooks", "post-commit")) {
			t.Errorf("namespace %v: a hook was planted in the main repository: %q", ns, res.Content)
		}
		if res := f.call(t, "write_file", obj{"path": filepath.Join(main, ".git", "config"), "content": "x"}); !res.IsError {
			t.Errorf("namespace %v: write_file wrote the main repository's config", ns)
		}
	}
}

// A submodule's .git file cannot be pointed at a git directory of the
// model's, which the user's next git status would read.
func TestBashGitSubmodule(t *testing.T) {
	needLandlock(t)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	mark := filepath.Join(t.TempDir(), "ran")
	t.Setenv("MARK", mark)
	for _, k := range []string{"GIT_AUTHOR", "GIT_COMMITTER"} {
		t.Setenv(k+"_NAME", "T")
		t.Setenv(k+"_EMAIL", "t@example.com")
	}
	lib := t.TempDir()
	gitRepo(t)(&Config{Root: lib})
	plant := "mkdir -p evil && cp -r .git/modules/lib/objects .git/modules/lib/refs .git/modules/lib/HEAD evil/ && " +
		"printf '[core]\\n\\tfsmonitor = touch $MARK\\n\\tworktree = ../lib\\n' > evil/config && "
	for _, c := range []struct{ name, command string }{
		{"rewrite", plant + "echo 'gitdir: ../evil' > lib/.git"},
		{"replace the directory", plant + "mv lib lib.old && mkdir lib && cp lib.old/a.txt lib/ && echo 'gitdir: ../evil' > lib/.git"},
	} {
		for _, ns := range []bool{true, false} {
			if ns && mountNamespaces() != nil {
				continue
			}
			t.Run(fmt.Sprintf("%s namespace %v", c.name, ns), func(t *testing.T) {
				if !ns {
					old := mountNamespaces
					mountNamespaces = func() error { return errors.New("simulated") }
					t.Cleanup(func() { mountNamespaces = old })
				}
				f := newFixture(t, func(c *Config) {
					gitRepo(t)(c)
					runGit(t, c.Root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
					runGit(t, c.Root, "commit", "-qm", "lib")
				})
				link := fileText(t, filepath.Join(f.root, "lib", ".git"))
				res := f.call(t, "bash", obj{"command": c.command})
				if got := fileText(t, filepath.Join(f.root, "lib", ".git")); got != link {
					t.Errorf("lib/.git = %q after %q", got, res.Content)
				}
				runGit(t, f.root, "status")
				if exists(t, mark) {
					t.Fatalf("the user's git status ran the model's command: %q", res.Content)
				}
			})
		}
	}
}
