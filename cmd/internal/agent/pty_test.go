//go:build linux || darwin

package agent

import (
	"bytes"
	"errors"
	"github.com/miramem/mira/cmd/internal/cli"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/miramem/mira/llm/llmtest"
)

// terminal runs a command on a pseudo-terminal and lets a test type into
// it and wait for what it shows.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // output before this offset has been matched
	done chan error
}

func startTerminal(t *testing.T, dir string, env []string, name string, args ...string) *terminal {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not on PATH (testscript.Main puts it there): %v", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatalf("start %s on a terminal: %v", name, err)
	}
	term := &terminal{t: t, cmd: cmd, tty: tty, done: make(chan error, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { term.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		tty.Close()
	})
	return term
}

// typeIn sends keys to the terminal.
func (term *terminal) typeIn(keys string) {
	term.t.Helper()
	if _, err := term.tty.WriteString(keys); err != nil {
		term.t.Fatalf("typing %q: %v", keys, err)
	}
}

// expect waits until the terminal shows want after what was matched
// before, and moves past it.
func (term *terminal) expect(want string) {
	term.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		term.mu.Lock()
		out := term.out.String()
		term.mu.Unlock()
		if i := strings.Index(out[term.seen:], want); i >= 0 {
			term.seen += i + len(want)
			return
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("the terminal did not show %q; after the last match it shows:\n%q", want, out[term.seen:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wait waits for the command to exit and returns its error.
func (term *terminal) wait() error {
	term.t.Helper()
	select {
	case err := <-term.done:
		return err
	case <-time.After(15 * time.Second):
		term.t.Fatal("the command did not exit")
		return nil
	}
}

// The interactive session on a real terminal: slash commands and their
// tab completion, a streamed answer, an approval asked and given, Ctrl-C
// stopping an answer but not the session, Ctrl-D leaving, and the history
// kept for the next session.
func TestAgentREPLOnTerminal(t *testing.T) {
	hang := llmtest.Text("Thinking about it slowly, one piece at a time")
	hang.HangBeforeChunk = 4
	srv := llmtest.New(t,
		llmtest.Text("Hello from the model."),
		llmtest.Tools(llmtest.ToolCall{ID: "w", Name: "write_file", Arguments: jsonArgs(map[string]any{"path": "note.txt", "content": "approved\n"})}),
		llmtest.Text("Wrote note.txt."),
		hang,
		llmtest.Text("Back again."),
	)
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TERM=xterm", "NO_COLOR=1",
		"MIRA_HOME=" + filepath.Join(dir, "home"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + state,
		"MIRA_MODEL=test-model", "OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=test-key",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
	}

	term := startTerminal(t, proj, env, "mira-agent", "--no-extract")
	term.expect("Type a message")
	term.expect("> ")

	// Tab completes a unique command; /help lists them all.
	term.typeIn("/he\t")
	term.expect("/help")
	term.typeIn("\r")
	term.expect("/remember [KIND:] TEXT")
	term.expect("/quit")

	// Two tabs list the candidates of an ambiguous prefix.
	term.typeIn("/s\t\t")
	term.expect("/status")
	term.expect("/summarize")
	term.expect("/switch")
	term.typeIn("tatus\r")
	term.expect("conversation  chat")
	term.expect("project       proj")

	// A message is answered, streamed; a backslash continues it on the
	// next line.
	term.typeIn("say \\\r")
	term.expect(". ")
	term.typeIn("hello\r")
	term.expect("Hello from the model.")
	term.expect("[1 step")

	// A write asks first; "y" lets it run.
	term.typeIn("write the note\r")
	term.expect("mira-agent wants to run write_file")
	term.expect("Allow? [y]es, [n]o, [a]lways")
	term.typeIn("y\r")
	term.expect("Wrote note.txt.")
	if data, err := os.ReadFile(filepath.Join(proj, "note.txt")); err != nil || string(data) != "approved\n" {
		t.Errorf("note.txt = %q, %v", data, err)
	}

	// Ctrl-C stops the answer in progress, not the session.
	term.typeIn("take your time\r")
	term.expect("Thinking")
	term.typeIn("\x03")
	term.expect("(interrupted)")
	term.typeIn("are you there?\r")
	term.expect("Back again.")

	// Up recalls the previous line.
	term.typeIn("\x1b[A")
	term.expect("are you there?")
	term.typeIn("\x15") // Ctrl-U clears it

	// /status shows the spend so far.
	term.typeIn("/status\r")
	term.expect("tokens        5 requests")
	term.expect("cache hits")

	// Ctrl-D at an empty prompt leaves.
	term.typeIn("\x04")
	if err := term.wait(); err != nil {
		t.Fatalf("mira-agent exited with %v after Ctrl-D", err)
	}

	hist, err := os.ReadFile(filepath.Join(state, "mira", "history"))
	if err != nil {
		t.Fatalf("history file: %v", err)
	}
	if got := srv.Requests()[0].LastUser(); !strings.HasSuffix(got, "say \nhello") {
		t.Errorf("a continued message arrived as %q", got)
	}
	for _, line := range []string{"/help", "/status", "say \\", "hello", "are you there?"} {
		if !strings.Contains(string(hist), line+"\n") {
			t.Errorf("history lacks %q:\n%s", line, hist)
		}
	}

	// A new session has the history: Up shows the last line of the last
	// session; Ctrl-C twice at the prompt leaves.
	term = startTerminal(t, proj, env, "mira-agent", "--no-extract")
	term.expect("10 turns in the buffer")
	term.expect("> ")
	term.typeIn("\x1b[A")
	term.expect("/status")
	term.typeIn("\x03")
	term.expect("(Ctrl-C again or Ctrl-D to leave)")
	term.typeIn("\x03")
	if err := term.wait(); err != nil {
		t.Fatalf("mira-agent exited with %v after Ctrl-C twice", err)
	}
}

// Ctrl-C (SIGINT) during a one-shot answer ends the run with status 130;
// what had arrived is stored as an interrupted reply.
func TestAgentOneShotInterrupted(t *testing.T) {
	hang := llmtest.Text("Partial answer that never finishes")
	hang.HangBeforeChunk = 4
	srv := llmtest.New(t, hang)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	bin, err := exec.LookPath("mira-agent")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", "tell me everything", "--output", "jsonl")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "MIRA_HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"MIRA_MODEL=test-model", "OPENAI_BASE_URL=" + srv.URL, "GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Wait for the first piece of text, then interrupt.
	buf := make([]byte, 4096)
	var got strings.Builder
	for !strings.Contains(got.String(), `"type":"text"`) {
		n, err := out.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("stdout ended before any text: %v\n%s", err, stderr.String())
		}
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("mira-agent did not end after SIGINT")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitInterrupted {
		t.Fatalf("exit: %v, want status 130\n%s", err, stderr.String())
	}
	x := &agentEnv{t: t, home: home}
	turns := x.turns("chat")
	if len(turns) != 2 || !strings.HasPrefix(turns[1].Body, "Part") || !strings.Contains(turns[1].Body, "[interrupted by the user]") {
		t.Errorf("stored turns after the interrupt: %v", turnRoles(turns))
		for _, e := range turns {
			t.Logf("%s: %q", e.Role, e.Body)
		}
	}
}
