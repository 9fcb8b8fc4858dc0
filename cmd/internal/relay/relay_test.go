package relay

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestFrames(t *testing.T) {
	var b bytes.Buffer
	want := []struct {
		kind byte
		p    string
	}{{Stderr, "warning\n"}, {Stdout, ""}, {Stdout, "{\"id\":\"x\"}\n"}, {Exit, "3"}}
	for _, f := range want {
		if err := WriteFrame(&b, f.kind, []byte(f.p)); err != nil {
			t.Fatal(err)
		}
	}
	whole := b.Bytes()
	r := bytes.NewReader(whole)
	for _, f := range want {
		kind, p, err := ReadFrame(r)
		if err != nil || kind != f.kind || string(p) != f.p {
			t.Fatalf("ReadFrame = %q %q %v, want %q %q", kind, p, err, f.kind, f.p)
		}
	}
	if _, _, err := ReadFrame(r); err != io.EOF {
		t.Errorf("after the last frame: %v, want io.EOF", err)
	}
	// A stream cut inside a frame is not a clean end: the first frame is
	// 5+8 bytes long, the second starts after it.
	if _, _, err := ReadFrame(bytes.NewReader(whole[5+8 : 5+8+3])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut header: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, _, err := ReadFrame(bytes.NewReader(whole[:9])); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut payload: %v, want io.ErrUnexpectedEOF", err)
	}
	// A length beyond the limit is refused before anything is allocated.
	if _, _, err := ReadFrame(bytes.NewReader([]byte{'o', 0xff, 0xff, 0xff, 0xff})); err == nil {
		t.Error("a 4 GB frame was accepted")
	}
}

func TestForwardable(t *testing.T) {
	for args, want := range map[string]bool{
		"auth tokens":                true,
		"-k 3 --explain auth":        true,
		"--help":                     false,
		"-h":                         false,
		"--eval q.jsonl":             false,
		"--eval=q.jsonl":             false,
		"--eval-results=r.jsonl x":   false,
		"-- --help":                  true, // a query that happens to look like a flag
		"--mode lexical -- --eval x": true,
	} {
		if got := forwardable(splitArgs(args)); got != want {
			t.Errorf("forwardable(%s) = %v, want %v", args, got, want)
		}
	}
}

func splitArgs(s string) []string { return bytes2strings(bytes.Fields([]byte(s))) }

func bytes2strings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// TestStoreDir: the client finds the store as the commands do: --home,
// $MIRA_HOME, the configuration file, the default; and gives up on a
// relative one, which the server would resolve in its own directory.
func TestStoreDir(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("home: /from/config\nrecall:\n  k: 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"MIRA_CONFIG": cfg, "XDG_DATA_HOME": "/data"}
	getenv := func(k string) string { return env[k] }
	check := func(name string, args []string, want string, wantOK bool) {
		t.Helper()
		got, ok := storeDir(args, &clientConfig{getenv: getenv})
		if ok != wantOK || (ok && got != want) {
			t.Errorf("%s: storeDir = %q %v, want %q %v", name, got, ok, want, wantOK)
		}
	}
	env["MIRA_HOME"] = "/from/env"
	check("flag", []string{"--home", "/from/flag", "q"}, "/from/flag", true)
	check("flag=", []string{"q", "--home=/from/flag"}, "/from/flag", true)
	check("flag after --", []string{"--", "--home=/x"}, "/from/env", true)
	check("env", []string{"q"}, "/from/env", true)
	check("relative flag", []string{"--home", "rel/dir"}, "", false)
	check("flag without value", []string{"--home"}, "", false)
	env["MIRA_HOME"] = ""
	check("empty env", []string{"q"}, "/from/config", true)
	delete(env, "MIRA_HOME")
	check("config", []string{"q"}, "/from/config", true)
	if err := os.WriteFile(cfg, []byte("recall: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The client reads only home:; the command, served or not, reports
	// the rest of the file.
	check("broken config", []string{"q"}, "/data/mira", true)
	if err := os.WriteFile(cfg, []byte("home: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("broken home", []string{"q"}, "", false)
	env["MIRA_CONFIG"] = filepath.Join(dir, "missing.yaml")
	check("default", []string{"q"}, "/data/mira", true)
	h, err := os.UserHomeDir()
	if err == nil {
		check("tilde", []string{"--home=~/mem"}, filepath.Join(h, "mem"), true)
	}
}

func TestRunWithoutServer(t *testing.T) {
	t.Setenv("MIRA_HOME", t.TempDir())
	if _, ok := Run("mira-recall", []string{"x"}); ok {
		t.Error("Run answered with no server")
	}
}
