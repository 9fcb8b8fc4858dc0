package mem

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAddFileCommitsAnArtifact(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	st, err := Open(context.Background(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The tool wrote the artifact already; the turn's commit includes it.
	rel := "artifacts/chat/01ABC.txt"
	abs := filepath.Join(st.Root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	data := []byte("a long tool output\n")
	if err := os.WriteFile(abs, data, 0o644); err != nil {
		t.Fatal(err)
	}
	lock, err := st.Lock(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	tx := st.Begin(false)
	if err := tx.Add(&Entry{Kind: KindTurn, Role: "tool", Scope: "chat", Body: "see artifact://01ABC"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.AddFile(rel, data); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit("agent: tool turn"); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", st.Root}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got := git("show", "HEAD:"+rel); got != string(data) {
		t.Errorf("committed artifact = %q, want %q", got, data)
	}
	if out := git("status", "--porcelain"); out != "" {
		t.Errorf("git status after the commit:\n%s", out)
	}
	for _, bad := range []string{"entries/chat/notes/x.md", "artifacts/x.txt", "artifacts/chat/../../x", "artifacts/Bad Scope/x.txt", "/etc/passwd"} {
		if err := st.Begin(false).AddFile(bad, data); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("AddFile(%q) = %v, want an error naming it", bad, err)
		}
	}
}
