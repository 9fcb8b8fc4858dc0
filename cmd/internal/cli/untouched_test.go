package cli

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// snapshot is every file, directory and link under dir with its mode and
// content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				b.WriteString("(missing)\n")
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + " " + fi.Mode().String())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestNothingWrittenOutsideAStore: a recall pointed at a code repository
// is refused before its server is started (which would leave .index/
// with its lock and log there); a forget, or a remember's dry run, on a
// store that does not exist says so, or shows what it would do, and
// creates nothing. The directories are left byte for byte as they were.
func TestNothingWrittenOutsideAStore(t *testing.T) {
	r := onDemand(t)
	repo := filepath.Join(t.TempDir(), "code")
	os.Mkdir(repo, 0o755)
	os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "main.go"}, {"commit", "-qm", "code"}} {
		git(t, repo, args...)
	}
	missing := filepath.Join(t.TempDir(), "none")
	before, beforeMissing := snapshot(t, repo), snapshot(t, missing)

	run := func(name string, env []string, args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		c := r.cmd(name, args...)
		c.Env = append(c.Env, env...)
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	if _, stderr, code := run("mira-recall", []string{"MIRA_SERVE=1"}, "--home", repo, "anything"); code != 2 || !strings.Contains(stderr, "not a Mira store") {
		t.Errorf("recall in a code repository: exit %d, %q; want 2, not a Mira store", code, stderr)
	}
	if _, stderr, code := run("mira-forget", nil, "--home", missing, "01J9ZZZZZZZZZZZZZZZZZZZZZZ"); code != 2 || !strings.Contains(stderr, "no Mira store") {
		t.Errorf("forget in a missing store: exit %d, %q; want 2, no Mira store", code, stderr)
	}
	stdout, stderr, code := run("mira-remember", nil, "--home", missing, "--dry-run", "a first memory")
	if code != 0 || !strings.Contains(stdout, `"op":"add"`) || !strings.Contains(stdout, "a first memory") {
		t.Errorf("dry run in a missing store: exit %d, %q, %q; want the add it would make", code, stdout, stderr)
	}
	if after := snapshot(t, repo); after != before {
		t.Errorf("the repository changed:\n%s\nthen\n%s", before, after)
	}
	if after := snapshot(t, missing); after != beforeMissing {
		t.Errorf("the missing store was written:\n%s", after)
	}
}

// TestRecallMakesOldStorePrivate: the first recall on a store other users
// can read makes it private and tells its user, on their own stderr (not
// in a server's log); the next recall has nothing to say.
func TestRecallMakesOldStorePrivate(t *testing.T) {
	r := onDemand(t)
	r.run("mira-remember", "tomatoes grow in the garden")
	filepath.WalkDir(r.home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		} else if err == nil && d.Type().IsRegular() {
			os.Chmod(p, 0o644)
		}
		return nil
	})
	for i, want := range []bool{true, false} {
		var out, errb bytes.Buffer
		c := r.cmd("mira-recall", "tomatoes")
		c.Env = append(c.Env, "MIRA_SERVE=1")
		c.Stdout, c.Stderr = &out, &errb
		if err := c.Run(); err != nil || !strings.Contains(out.String(), "tomatoes grow") {
			t.Fatalf("recall %d: %v, %q\n%s", i+1, err, out.String(), errb.String())
		}
		if got := strings.Contains(errb.String(), "made the store private"); got != want {
			t.Errorf("recall %d: notice of the repair %v, want %v: %q", i+1, got, want, errb.String())
		}
		if fi, err := os.Stat(r.home); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("recall %d: store %v, %v; want 0700", i+1, fi, err)
		}
	}
}
