package mem

import (
	"context"
	"encoding/json"
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

// TestRecoverRemovesTemps: the temporary files of a writer killed in the
// middle of a change, beside the journal's paths and the journal itself,
// are removed by the next writer; other files are not.
func TestRecoverRemovesTemps(t *testing.T) {
	st, err := Open(t.Context(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	head, err := st.Head()
	if err != nil {
		t.Fatal(err)
	}
	rel := "entries/global/notes/20260101T000000Z__01JTEMP000000000000000000.md"
	dir := filepath.Join(st.Root, "entries", "global", "notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(journal{Head: head, Files: []journalEntry{{Path: rel, Absent: true}}})
	if err := os.WriteFile(st.journalPath(), data, 0o644); err != nil {
		t.Fatal(err)
	}
	temps := []string{
		filepath.Join(dir, ".20260101T000000Z__01JTEMP000000000000000000.md.123456.tmp"),
		filepath.Join(st.Root, ".git", ".mira-journal.987.tmp"),
	}
	keep := []string{
		filepath.Join(dir, ".other.md.1.tmp"), // not this change's
		filepath.Join(dir, "20260101T000000Z__01JKEEP000000000000000000.md"),
	}
	for _, p := range append(temps, keep...) {
		if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := st.Recover(); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	for _, p := range temps {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}
