package code

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gitEnv points git and the index at a home of the test's own, with no
// system configuration, so that the user's settings do not leak in.
func gitEnv(t *testing.T) (home, xdg string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home, xdg = t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	os.Unsetenv("GIT_CONFIG_GLOBAL")
	t.Setenv("GIT_DIR", "")
	os.Unsetenv("GIT_DIR")
	return home, xdg
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, s := range files {
		f := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gitCmd runs git in dir with the test's environment (not git()'s, which
// hides the global configuration) and returns its output.
func gitCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com",
		"GIT_COMMITTER_NAME=A", "GIT_COMMITTER_EMAIL=a@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gitFiles lists the files git sees in dir, tracked or not, less those it
// ignores, relative to dir.
func gitFiles(t *testing.T, dir string) []string {
	t.Helper()
	out := gitCmd(t, dir, "ls-files", "--cached", "--others", "--exclude-standard")
	var fs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			fs = append(fs, l)
		}
	}
	slices.Sort(fs)
	return fs
}

// checkAsGit compares the files the walk lists under root with git's, and
// DirFilter and ignored with the walk.
func checkAsGit(t *testing.T, root string, files map[string]string) {
	t.Helper()
	ents, err := walk(context.Background(), root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.path)
	}
	if want := gitFiles(t, root); !slices.Equal(got, want) {
		t.Errorf("walk lists\n %q\ngit lists\n %q", got, want)
	}
	ix := open(t, root, t.TempDir(), nil)
	f := NewDirFilter(root)
	for p := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if _, err := os.Stat(full); err != nil || strings.HasPrefix(p, "../") {
			continue
		}
		rel, _ := filepath.Rel(root, full)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "..") {
			continue
		}
		listed := slices.Contains(got, rel)
		if ix.ignored(rel) == listed {
			t.Errorf("ignored(%q) = %v, but the walk lists it: %v", rel, !listed, listed)
		}
		if dir, _, ok := strings.Cut(rel, "/"); ok && strings.HasPrefix(rel, "gen/") && f.Skip(dir) == listed {
			t.Errorf("DirFilter.Skip(%q) = %v, but the walk lists %s: %v", dir, !listed, rel, listed)
		}
	}
}

var ignoreTree = map[string]string{
	"a.go":           "package a\n",
	"a.gen.go":       "package a\n",
	"keep.gen.go":    "package a\n",
	"notes.tmp":      "x\n",
	"local.txt":      "x\n",
	"gen/x.go":       "package gen\n",
	"sub/b.go":       "package b\n",
	"sub/b.gen.go":   "package b\n",
	"sub/cache.bak":  "x\n",
	"sub/.gitignore": "!cache.bak\n",
	".gitignore":     "!keep.gen.go\n",
}

// TestIgnoreExcludesFile: core.excludesFile from the global configuration
// ($XDG_CONFIG_HOME/git/config, ~ expanded) is honoured, the project's
// .gitignore negations still winning over it.
func TestIgnoreExcludesFile(t *testing.T) {
	home, xdg := gitEnv(t)
	writeFiles(t, xdg, map[string]string{"git/config": "[core]\n\texcludesFile = ~/my-ignores\n"})
	writeFiles(t, home, map[string]string{"my-ignores": "*.gen.go\n*.tmp\n*.bak\ngen/\n"})
	root := t.TempDir()
	writeFiles(t, root, ignoreTree)
	gitCmd(t, root, "init", "-q")
	checkAsGit(t, root, ignoreTree)
}

// TestIgnoreXDGDefault: with core.excludesFile unset, git reads
// $XDG_CONFIG_HOME/git/ignore; ~/.gitconfig setting it wins.
func TestIgnoreXDGDefault(t *testing.T) {
	home, xdg := gitEnv(t)
	writeFiles(t, xdg, map[string]string{"git/ignore": "*.tmp\ngen/\n"})
	root := t.TempDir()
	writeFiles(t, root, ignoreTree)
	gitCmd(t, root, "init", "-q")
	checkAsGit(t, root, ignoreTree)

	writeFiles(t, home, map[string]string{".gitconfig": "[core]\n  excludesfile = " + filepath.Join(home, "other") + "\n", "other": "local.txt\n"})
	checkAsGit(t, root, ignoreTree)
}

// TestIgnoreRepoConfig: the repository's own configuration may set
// core.excludesFile, relative to the top of the work tree; it wins over
// the global one.
func TestIgnoreRepoConfig(t *testing.T) {
	home, _ := gitEnv(t)
	writeFiles(t, home, map[string]string{".gitconfig": "[core]\n\texcludesFile = ~/global\n", "global": "*.tmp\n"})
	root := t.TempDir()
	writeFiles(t, root, ignoreTree)
	writeFiles(t, root, map[string]string{"ignores/mine": "*.gen.go\nlocal.txt\n"})
	gitCmd(t, root, "init", "-q")
	gitCmd(t, root, "config", "core.excludesFile", "ignores/mine")
	checkAsGit(t, root, ignoreTree)
}

// TestIgnoreWorktreeExclude: in a linked work tree .git is a file; git
// reads info/exclude from the main repository's directory.
func TestIgnoreWorktreeExclude(t *testing.T) {
	gitEnv(t)
	main := t.TempDir()
	writeFiles(t, main, map[string]string{"a.go": "package a\n", ".git-keep": ""})
	gitCmd(t, main, "init", "-q", "-b", "main")
	gitCmd(t, main, "add", "-A")
	gitCmd(t, main, "commit", "-q", "-m", "first")
	writeFiles(t, main, map[string]string{".git/info/exclude": "*.tmp\nlocal.txt\ngen/\n"})
	wt := filepath.Join(t.TempDir(), "wt")
	gitCmd(t, main, "worktree", "add", "-q", "-b", "side", wt)
	writeFiles(t, wt, ignoreTree)
	checkAsGit(t, wt, ignoreTree)
}

// TestIgnoreRootBelowTop: a project rooted below the top of its
// repository (a .mira/project.yaml there) follows the repository's
// exclude files and the .gitignore files above it, anchored at the top.
func TestIgnoreRootBelowTop(t *testing.T) {
	gitEnv(t)
	top := t.TempDir()
	files := map[string]string{
		".gitignore":       "/proj/local.txt\n*.tmp\nlocal.txt\n!/other/local.txt\n",
		"proj/.gitignore":  "!keep.gen.go\n",
		"proj/a.go":        "package a\n",
		"proj/local.txt":   "x\n",
		"proj/notes.tmp":   "x\n",
		"proj/a.gen.go":    "package a\n",
		"proj/keep.gen.go": "package a\n",
		"proj/gen/x.go":    "package gen\n",
		"proj/gen/y.go":    "package gen\n",
		"other/local.txt":  "x\n",
	}
	writeFiles(t, top, files)
	gitCmd(t, top, "init", "-q")
	writeFiles(t, top, map[string]string{".git/info/exclude": "*.gen.go\n/proj/gen/\n"})
	rel := map[string]string{}
	for p, s := range files {
		if r, ok := strings.CutPrefix(p, "proj/"); ok {
			rel[r] = s
		}
	}
	checkAsGit(t, filepath.Join(top, "proj"), rel)
}

// TestIgnoreSymlinkedGitignore: as git does, a .gitignore that is a
// symbolic link is not read: it could point out of the project, at a
// device or a pipe that never ends.
func TestIgnoreSymlinkedGitignore(t *testing.T) {
	gitEnv(t)
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "patterns")
	writeFiles(t, root, map[string]string{"a.go": "package a\n", "sub/b.go": "package b\n"})
	if err := os.WriteFile(outside, []byte("*.go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "sub", ".gitignore")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	gitCmd(t, root, "init", "-q")
	ents, err := walk(context.Background(), root, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.path)
	}
	if !slices.Contains(got, "sub/b.go") || !slices.Contains(got, "a.go") {
		t.Errorf("walk lists %q: a symlinked .gitignore was followed", got)
	}
	if want := gitFiles(t, root); !slices.Contains(want, "sub/b.go") {
		t.Fatalf("git itself ignores sub/b.go: %q", want)
	}
	ix := open(t, root, t.TempDir(), nil)
	if ix.ignored("sub/b.go") {
		t.Error("ignored(sub/b.go): a symlinked .gitignore was followed")
	}
}
