//go:build unix

package tools

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// needLandlock skips the test, saying why, where the kernel cannot confine
// commands, and returns the kernel's Landlock ABI version.
func needLandlock(t *testing.T) int {
	t.Helper()
	needBash(t)
	abi, err := landlockABI()
	if abi < 1 {
		t.Skipf("kernel has no Landlock: %v", err)
	}
	return abi
}

// exists reports whether path is there.
func exists(t testing.TB, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// bashDescription returns the bash tool's description as the model sees it.
func bashDescription(f *fixture) string {
	for _, d := range f.reg.Definitions() {
		if d.Function.Name == "bash" {
			return d.Function.Description
		}
	}
	return ""
}

func TestBashConfined(t *testing.T) {
	abi := needLandlock(t)
	t.Logf("Landlock ABI %d", abi)
	outside, allowed := t.TempDir(), t.TempDir()
	keep := filepath.Join(outside, "keep")
	if err := os.MkdirAll(filepath.Join(keep, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(keep, "file.txt"), filepath.Join(keep, "sub", "deep.txt")} {
		if err := os.WriteFile(p, []byte("keep\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var notices []string
	f := newFixture(t, func(c *Config) {
		c.AllowPaths = []string{allowed}
		c.Notice = func(msg string) { notices = append(notices, msg) }
	})

	t.Run("writes in the project", func(t *testing.T) {
		res := f.call(t, "bash", obj{"command": "echo in > inside.txt && mkdir -p d/e && echo x > d/e/f && rm -r d && cat inside.txt"})
		if res.Content != "in\n[exit code 0]" || res.IsError {
			t.Errorf("result = %q (error %v)", res.Content, res.IsError)
		}
		if got := f.read(t, "inside.txt"); got != "in\n" {
			t.Errorf("inside.txt = %q", got)
		}
	})

	t.Run("writes in TMPDIR", func(t *testing.T) {
		res := f.call(t, "bash", obj{"command": `echo t > "$TMPDIR/t.txt" && cat "$TMPDIR/t.txt" && echo "$TMPDIR"`})
		lines := strings.Split(res.Content, "\n")
		if res.IsError || len(lines) != 3 || lines[0] != "t" || lines[2] != "[exit code 0]" {
			t.Fatalf("result = %q (error %v)", res.Content, res.IsError)
		}
		tmp := lines[1]
		if !filepath.IsAbs(tmp) || within(tmp, f.root) || tmp == os.TempDir() {
			t.Errorf("TMPDIR = %q, want a directory of the command's own outside the project", tmp)
		}
		if exists(t, tmp) {
			t.Errorf("the command's TMPDIR %s is left behind", tmp)
		}
	})

	t.Run("writes in an allowed path", func(t *testing.T) {
		res := f.call(t, "bash", obj{"command": fmt.Sprintf("echo a > %q/a.txt && cat %[1]q/a.txt", allowed)})
		if res.Content != "a\n[exit code 0]" || res.IsError {
			t.Errorf("result = %q (error %v)", res.Content, res.IsError)
		}
	})

	t.Run("write outside is denied", func(t *testing.T) {
		target := filepath.Join(outside, "new.txt")
		res := f.call(t, "bash", obj{"command": fmt.Sprintf("echo x > %q", target)})
		if !res.IsError {
			t.Errorf("result = %q, want an error", res.Content)
		}
		wantContains(t, "result", res.Content, "Permission denied", "Writes elsewhere are denied by the kernel (Landlock)", "[exit code 1]")
		if exists(t, target) {
			t.Errorf("%s was written", target)
		}
	})

	t.Run("rm -rf outside leaves it intact", func(t *testing.T) {
		res := f.call(t, "bash", obj{"command": fmt.Sprintf("rm -rf %q", keep)})
		if !res.IsError {
			t.Errorf("result = %q, want an error", res.Content)
		}
		wantContains(t, "result", res.Content, "Permission denied", "denied by the kernel (Landlock)")
		for _, p := range []string{filepath.Join(keep, "file.txt"), filepath.Join(keep, "sub", "deep.txt")} {
			if b, err := os.ReadFile(p); err != nil || string(b) != "keep\n" {
				t.Errorf("%s after rm -rf: %q, %v", p, b, err)
			}
		}
	})

	t.Run("move out of the project is denied", func(t *testing.T) {
		target := filepath.Join(outside, "moved.txt")
		res := f.call(t, "bash", obj{"command": fmt.Sprintf("echo z > z.txt && mv z.txt %q", target)})
		if !res.IsError {
			t.Errorf("result = %q, want an error", res.Content)
		}
		if exists(t, target) || !exists(t, filepath.Join(f.root, "z.txt")) {
			t.Errorf("z.txt left the project: %q", res.Content)
		}
	})

	t.Run("reads outside", func(t *testing.T) {
		res := f.call(t, "bash", obj{"command": fmt.Sprintf("cat %q && ls %q", filepath.Join(keep, "file.txt"), keep)})
		if res.Content != "keep\nfile.txt\nsub\n[exit code 0]" {
			t.Errorf("result = %q", res.Content)
		}
	})

	t.Run("devices", func(t *testing.T) {
		res := f.call(t, "bash", obj{"command": "echo x > /dev/null && echo y >> /dev/null && head -c 4 /dev/urandom | wc -c && head -c 2 /dev/zero | wc -c"})
		if res.Content != "4\n2\n[exit code 0]" {
			t.Errorf("result = %q", res.Content)
		}
	})

	t.Run("a long here-document", func(t *testing.T) {
		// Past the size of a pipe (64 KiB), bash keeps a
		// here-document in a file under TMPDIR; the whole command
		// stays under the 128 KiB an argument may have.
		body := strings.Repeat("0123456789abcdef\n", 4500)
		res := f.call(t, "bash", obj{"command": "wc -l <<'EOF'\n" + body + "EOF"})
		if res.Content != "4500\n[exit code 0]" {
			t.Errorf("result = %q", res.Content)
		}
	})

	t.Run("moves between directories of the project", func(t *testing.T) {
		if abi < 2 {
			t.Skipf("Landlock ABI %d refuses moves between directories", abi)
		}
		res := f.call(t, "bash", obj{"command": "mkdir -p a b && echo m > a/f && mv a/f b/f && cat b/f"})
		if res.Content != "m\n[exit code 0]" {
			t.Errorf("result = %q", res.Content)
		}
	})

	t.Run("network", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skipf("no loopback: %v", err)
		}
		defer ln.Close()
		got := make(chan string, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				got <- err.Error()
				return
			}
			defer c.Close()
			b := make([]byte, 16)
			n, _ := c.Read(b)
			got <- string(b[:n])
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		res := f.call(t, "bash", obj{"command": fmt.Sprintf("echo hello >/dev/tcp/127.0.0.1/%d", port)})
		if res.Content != "(no output)\n[exit code 0]" {
			t.Errorf("result = %q", res.Content)
		}
		if s := <-got; s != "hello\n" {
			t.Errorf("the listener got %q", s)
		}
	})

	t.Run("the helper's variable is not passed on", func(t *testing.T) {
		res := f.call(t, "bash", obj{"command": "echo ${" + sandboxEnv + "-unset}"})
		if res.Content != "unset\n[exit code 0]" {
			t.Errorf("result = %q", res.Content)
		}
	})

	if len(notices) != 0 {
		t.Errorf("notices = %q with Landlock, want none", notices)
	}
	wantContains(t, "bash's description", bashDescription(f), "writes anywhere else are denied")
}

// Where commands cannot be confined, they run as before, and the user is
// told so once, at the first bash call.
func TestBashUnconfinedNotice(t *testing.T) {
	needBash(t)
	old := landlockABI
	landlockABI = func() (int, error) { return 0, errors.New("simulated") }
	t.Cleanup(func() { landlockABI = old })
	var notices []string
	f := newFixture(t, func(c *Config) { c.Notice = func(msg string) { notices = append(notices, msg) } })
	if len(notices) != 0 {
		t.Fatalf("notices = %q before bash ran", notices)
	}
	outside := t.TempDir()
	for i := range 3 {
		target := filepath.Join(outside, fmt.Sprintf("f%d.txt", i))
		res := f.call(t, "bash", obj{"command": fmt.Sprintf("echo x > %q", target)})
		if res.IsError || !exists(t, target) {
			t.Errorf("unconfined command: %q (error %v), %s written: %v", res.Content, res.IsError, target, exists(t, target))
		}
	}
	if len(notices) != 1 || notices[0] != unconfinedNotice() || !strings.HasPrefix(notices[0], "bash is not confined: ") {
		t.Errorf("notices = %q, want once %q", notices, unconfinedNotice())
	}
	if desc := bashDescription(f); strings.Contains(desc, "denied") {
		t.Errorf("bash's description claims confinement: %q", desc)
	}
}
