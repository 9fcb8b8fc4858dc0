package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// countFileLines counts the lines of a file without holding it whole.
func countFileLines(t *testing.T, name string) (lines int, size int64) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		lines += bytes.Count(buf[:n], []byte{'\n'})
		size += int64(n)
		if err != nil {
			break
		}
	}
	return lines, size
}

// A command printing more than the old 1 MiB cap is stored whole, and the
// note gives the true line count.
func TestLongCommandOutputStoredWhole(t *testing.T) {
	f := newFixture(t)
	res := f.call(t, "bash", obj{"command": "seq 1 200000"})
	if len(res.Artifacts) == 0 {
		t.Fatalf("no artifact: %s", res.Content)
	}
	wantContains(t, "note", res.Content, "(200000 lines", "\n1\n", "\n200000\n", "[exit code 0]")
	if strings.Contains(res.Content, "omitted …]\n") && strings.Contains(res.Content, "of output omitted") {
		t.Errorf("the output was cut before it was stored: %s", res.Content)
	}
	name := filepath.Join(f.store, filepath.FromSlash(res.Artifacts[0]))
	lines, _ := countFileLines(t, name)
	// 200,000 lines of output, then the exit status on a line of its own.
	if lines != 200000 {
		t.Errorf("the artifact has %d lines, want 200000", lines)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("\n100000\n")) || !bytes.HasSuffix(data, []byte("200000\n[exit code 0]")) {
		t.Errorf("the artifact misses the middle or the end of the output")
	}
}

// Past the cap the first part is kept, and the note and the description
// say how much was kept and how much was not.
func TestArtifactCapIsHonest(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Limits.ArtifactBytes = 100 << 10; c.Limits.ReadFileBytes = 50 << 10 })
	res := f.call(t, "bash", obj{"command": "seq 1 100000"})
	if len(res.Artifacts) != 2 {
		t.Fatalf("artifacts = %v: %s", res.Artifacts, res.Content)
	}
	name := filepath.Join(f.store, filepath.FromSlash(res.Artifacts[0]))
	lines, size := countFileLines(t, name)
	if size > 100<<10+100 {
		t.Errorf("the artifact holds %d bytes, past the cap", size)
	}
	// seq's first 100 KiB hold the numbers 1 to 18,917 whole (the
	// digits and line feeds of 1-9999 make 48,888 bytes, then 6 a line).
	kept := 9999 + (100<<10-48888)/6
	// Then the exit status, on a line of its own without a line feed.
	lines++
	if lines != kept+1 {
		t.Errorf("the artifact has %d lines, want %d and the exit status", lines, kept+1)
	}
	wantContains(t, "note", res.Content, "(100000 lines, ", "larger than the 100.0 KiB artifacts keep",
		fmt.Sprintf("only its first 100.0 KiB (%d lines) are stored", kept),
		fmt.Sprintf("the remaining %d lines were not kept", 100000-kept), "\n100000\n[exit code 0]")
	var m Meta
	data, err := os.ReadFile(filepath.Join(f.store, filepath.FromSlash(res.Artifacts[1])))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if !m.Truncated || m.TotalLines != 100000 || m.Type != ArtifactCommand || m.Source != "seq 1 100000" || m.Bytes != size || m.Lines != lines || m.Created.IsZero() {
		t.Errorf("description = %+v", m)
	}
	// read_file pages through an artifact larger than it opens.
	page := f.call(t, "read_file", obj{"path": "artifact://" + m.ID, "offset": 18000, "limit": 2})
	want := " 18000\t18000\n 18001\t18001\n" + fmt.Sprintf("[Lines 18000-18001 of %d. To read on, call read_file with offset 18002.]", lines)
	if page.Content != want {
		t.Errorf("read_file = %q, want %q", page.Content, want)
	}
}

// Artifacts and their descriptions are private, in private directories.
func TestArtifactsArePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	f := newFixture(t)
	res := f.call(t, "bash", obj{"command": "seq 1 10000"})
	if len(res.Artifacts) != 2 {
		t.Fatalf("artifacts = %v", res.Artifacts)
	}
	for _, rel := range res.Artifacts {
		fi, err := os.Stat(filepath.Join(f.store, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v", rel, fi.Mode().Perm())
		}
	}
	for _, dir := range []string{"artifacts", "artifacts/conv1"} {
		fi, err := os.Stat(filepath.Join(f.store, dir))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v", dir, fi.Mode().Perm())
		}
	}
}

// A secret that a piece boundary would cut is still redacted.
func TestStreamChunksKeepKeyBlocks(t *testing.T) {
	key := fakePEM(40, 3)
	var b strings.Builder
	for b.Len() < chunkBytes-len(key)/2 {
		b.WriteString("filler line of text\n")
	}
	b.WriteString(key)
	b.WriteString("after\n")
	var out strings.Builder
	if err := streamChunks(strings.NewReader(b.String()), func(c string) error {
		out.WriteString(Redact(c))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "PRIVATE KEY-----\n") && strings.Contains(out.String(), key[40:80]) {
		t.Errorf("the key block was cut and not redacted")
	}
	if strings.Count(out.String(), "\n") != strings.Count(b.String(), "\n") {
		t.Errorf("lines changed")
	}
}

// An artifact is named by its id alone: ids that are paths are refused,
// and so is an artifact file that is a link out of the store.
func TestArtifactOpenRefusesPaths(t *testing.T) {
	store := t.TempDir()
	a := &Artifacts{Store: store, Scope: "conv1"}
	m, _, err := a.SaveText("kept\n", ArtifactOutput, "test", "txt", 0)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("outside\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../conv1/" + m.ID, "..", "/etc/passwd", secret, "conv1/" + m.ID, ".hidden", "a/../../b", `..\x`, ""} {
		if f, _, err := a.Open(id); err == nil {
			f.Close()
			t.Errorf("Open(%q) succeeded", id)
		}
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink(secret, filepath.Join(store, "artifacts", "conv1", "01LINK.txt")); err != nil {
			t.Fatal(err)
		}
		if f, _, err := a.Open("01LINK"); err == nil {
			f.Close()
			t.Error("Open followed a link out of the store")
		} else if !strings.Contains(err.Error(), "01LINK") {
			t.Errorf("error = %v, want it to name the artifact", err)
		}
		if res := newFixtureAt(t, store).call(t, "read_file", obj{"path": "artifact://01LINK"}); !res.IsError || strings.Contains(res.Content, "outside") {
			t.Errorf("read_file followed a link out of the store: %q", res.Content)
		}
	}
	f, got, err := a.Open(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got.ID != m.ID || got.Type != ArtifactOutput || got.Source != "test" || got.Lines != 1 || got.Bytes != 5 {
		t.Errorf("description = %+v", got)
	}
	list, err := a.List()
	// The link is not listed.
	if err != nil || len(list) != 1 || list[0].ID != m.ID {
		t.Errorf("List = %+v, %v", list, err)
	}
}

// newFixtureAt is a fixture whose artifacts are in store.
func newFixtureAt(t *testing.T, store string) *fixture {
	return newFixture(t, func(c *Config) { c.Artifacts = &Artifacts{Store: store, Scope: "conv1"} })
}

// The view of a long output: its first and last lines, the count between.
func TestLineView(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	v := newLineView(3, 2, 100)
	if err := streamChunks(strings.NewReader(b.String()+"no newline"), func(c string) error { v.add(c); return nil }); err != nil {
		t.Fatal(err)
	}
	head, tail, omitted := v.finish()
	if strings.Join(head, "") != "line 1\nline 2\nline 3\n" || strings.Join(tail, "") != "line 100000\nno newline" || omitted != 99996 {
		t.Errorf("head %q, tail %q, omitted %d", head, tail, omitted)
	}
	// One long line: clipped, in the head only.
	v = newLineView(3, 2, 10)
	v.add(strings.Repeat("x", 5*chunkBytes))
	v.add("\n")
	head, tail, omitted = v.finish()
	if len(head) != 1 || head[0] != "xxxxxxxxxx\n" || len(tail) != 0 || omitted != 0 {
		t.Errorf("head %q, tail %q, omitted %d", head, tail, omitted)
	}
}
