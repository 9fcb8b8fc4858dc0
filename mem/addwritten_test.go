package mem

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// An artifact written by its maker is committed as it is on disk; a
// failed commit takes it away; links and other paths are refused.
func TestAddWritten(t *testing.T) {
	st := newTestStore(t)
	rel := "artifacts/chat/01ART.txt"
	name := filepath.Join(st.Root, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(name), 0o700)
	content := strings.Repeat("a line of output\n", 50000)
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	tx := st.Begin(false)
	if err := tx.AddWritten(rel); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit("artifact"); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", st.Root, "show", "HEAD:"+rel).Output()
	if err != nil || string(out) != content {
		t.Errorf("git show: %d bytes, %v; want %d", len(out), err, len(content))
	}
	if out, _ := exec.Command("git", "-C", st.Root, "status", "--porcelain").Output(); len(out) != 0 {
		t.Errorf("git status:\n%s", out)
	}

	// A commit that fails removes the artifact it brought.
	rel2 := "artifacts/chat/02ART.txt"
	name2 := filepath.Join(st.Root, filepath.FromSlash(rel2))
	os.WriteFile(name2, []byte("doomed\n"), 0o600)
	objects := filepath.Join(st.Root, ".git", "objects")
	os.Rename(objects, objects+".away")
	os.WriteFile(objects, []byte("not a directory"), 0o644)
	tx = st.Begin(false)
	if err := tx.AddWritten(rel2); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit("doomed"); err == nil {
		t.Fatal("the commit did not fail")
	}
	if _, err := os.Stat(name2); err == nil {
		t.Error("the artifact of a failed commit is still there")
	}
	os.Remove(objects)
	os.Rename(objects+".away", objects)

	for _, bad := range []string{"entries/chat/x.md", "artifacts/../x", "artifacts/chat/sub/x.txt", "artifacts/deleted/x.txt", "artifacts/chat/missing.txt"} {
		if err := st.Begin(false).AddWritten(bad); err == nil {
			t.Errorf("AddWritten(%q) succeeded", bad)
		}
	}
	if runtime.GOOS != "windows" {
		os.Symlink("/etc/passwd", filepath.Join(st.Root, "artifacts", "chat", "link.txt"))
		if err := st.Begin(false).AddWritten("artifacts/chat/link.txt"); err == nil {
			t.Error("AddWritten took a symbolic link")
		}
	}
}
