package mem

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestOpenRefusesForeignDirectories: a code repository or a directory of
// other files is never made a store, nor written to; a missing or empty
// one is; reading never creates.
func TestOpenRefusesForeignDirectories(t *testing.T) {
	ctx := t.Context()
	code := t.TempDir()
	if out, err := exec.Command("git", "-C", code, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(code, "main.go"), []byte("package main\n"), 0o644)
	exec.Command("git", "-C", code, "add", ".").Run()
	exec.Command("git", "-C", code, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "code").Run()
	plain := t.TempDir()
	os.WriteFile(filepath.Join(plain, "notes.txt"), []byte("mine\n"), 0o644)
	for _, dir := range []string{code, plain} {
		before, _ := os.ReadDir(dir)
		_, err := Open(ctx, dir, "test", time.Second)
		var ns *NotStoreError
		if !errors.As(err, &ns) {
			t.Errorf("Open(%s) = %v, want a NotStoreError", dir, err)
		}
		if _, err := OpenExisting(dir, "test"); !errors.As(err, &ns) {
			t.Errorf("OpenExisting(%s) = %v, want a NotStoreError", dir, err)
		}
		if after, _ := os.ReadDir(dir); len(after) != len(before) {
			t.Errorf("%s changed: %d entries, had %d", dir, len(after), len(before))
		}
	}
	missing := filepath.Join(t.TempDir(), "typo")
	if _, err := OpenExisting(missing, "test"); !errors.Is(err, ErrNoStore) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenExisting(missing) = %v, want ErrNoStore", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("OpenExisting created %s", missing)
	}
	empty := t.TempDir()
	st, err := Open(ctx, empty, "test", time.Second)
	if err != nil {
		t.Fatalf("Open(empty) = %v", err)
	}
	if !IsStore(st.Root) {
		t.Errorf("a new store is not recognised")
	}
	if _, err := OpenExisting(empty, "test"); err != nil {
		t.Errorf("OpenExisting(new store) = %v", err)
	}
}

// TestOpenAdoptsOldStores: a store made before the marker existed is
// recognised by its .gitignore.
func TestOpenAdoptsOldStores(t *testing.T) {
	st, err := Open(t.Context(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(st.Root, Marker)); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenExisting(st.Root, "test"); err != nil {
		t.Errorf("an old store: %v", err)
	}
	if _, err := Open(t.Context(), st.Root, "test", time.Second); err != nil {
		t.Errorf("an old store: %v", err)
	}
}

// TestOpenCreatesOnce: commands that start together on a new store all
// open it, and it has one first commit.
func TestOpenCreatesOnce(t *testing.T) {
	root := filepath.Join(t.TempDir(), "home")
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if _, err := Open(t.Context(), root, "test", 5*time.Second); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	out, err := exec.Command("git", "-C", root, "rev-list", "--count", "HEAD").Output()
	if err != nil || string(out) != "1\n" {
		t.Errorf("commits = %q, %v", out, err)
	}
}

// TestOpenSignature: the store's commits, its first one included, are
// signed as the caller says (OpenAs), never from the process's
// environment, which in a server is not its client's.
func TestOpenSignature(t *testing.T) {
	t.Setenv("GIT_AUTHOR_NAME", "Process")
	t.Setenv("GIT_AUTHOR_EMAIL", "process@example.com")
	author := func(root string) string {
		t.Helper()
		out, err := exec.Command("git", "-C", root, "log", "-1", "--format=%an <%ae>").CombinedOutput()
		if err != nil {
			t.Fatalf("git log: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	st, err := OpenAs(t.Context(), t.TempDir(), "test", time.Second, Signature{Name: "Ada", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got := author(st.Root); got != "Ada <ada@example.com>" {
		t.Errorf("the first commit of OpenAs is signed %q, want Ada's", got)
	}
	plain, err := Open(t.Context(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := author(plain.Root); got != "mira <mira@localhost>" {
		t.Errorf("the first commit of Open is signed %q, want mira's", got)
	}
	again, err := OpenExisting(st.Root, "test")
	if err != nil {
		t.Fatal(err)
	}
	if again.Author != "mira" || again.Email != "mira@localhost" {
		t.Errorf("OpenExisting signs as %s <%s>, want mira's until Sign", again.Author, again.Email)
	}
	again.Sign(Signature{Name: "Bo"})
	if again.Author != "Bo" || again.Email != "mira@localhost" {
		t.Errorf("after Sign: %s <%s>", again.Author, again.Email)
	}
}
