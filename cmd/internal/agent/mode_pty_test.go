//go:build linux || darwin

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miramem/mira/llm/llmtest"
)

// On a real terminal the prompt shows the context mode, /mode and
// Shift-Tab cycle it, the next message is sent with the new mode, and the
// meter line follows the reply, without escapes under NO_COLOR.
func TestAgentModeOnTerminal(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("Heavy reply."), llmtest.Text("Off reply."), llmtest.Text("Light reply."))
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TERM=xterm", "NO_COLOR=1",
		"MIRA_HOME=" + filepath.Join(dir, "home"), "XDG_CONFIG_HOME=" + filepath.Join(dir, "config"), "XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"MIRA_MODEL=test-model", "OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=test-key",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
	}

	term := startTerminal(t, proj, env, "mira-agent", "--no-extract")
	term.expect("CTX: Light > ")
	term.typeIn("/remember task: Ship the parser fix before Friday.\r")
	term.expect("Remembered as")
	term.expect("CTX: Light > ")

	term.typeIn("/mode\r")
	term.expect("Context mode heavy from the next message on.")
	term.expect("CTX: Heavy > ")
	term.typeIn("what is next?\r")
	term.expect("Heavy reply.")
	term.expect("[1 step")
	term.expect("ctx heavy · ")
	term.expect(" · 1 in (0 pinned) · 0 out — /context for why")
	term.expect("CTX: Heavy > ")

	term.typeIn("/mode o\t") // tab completes the mode
	term.expect("/mode off")
	term.typeIn("\r")
	term.expect("CTX: Off > ")
	term.typeIn("and now?\r")
	term.expect("Off reply.")
	term.expect("ctx off · ")
	term.expect(" · 0 in (0 pinned) · 1 out — /context for why")
	term.expect("CTX: Off > ")

	// Shift-Tab (ESC [ Z) cycles the mode at once, the line typed so far
	// kept, and the message sent next carries the new mode.
	term.typeIn("ship")
	term.expect("ship")
	term.typeIn("\x1b[Z")
	term.expect("CTX: Light > ")
	term.expect("ship") // redrawn after the prompt
	term.typeIn(" it?\r")
	term.expect("Light reply.")
	term.expect("ctx light · ")
	term.expect(" · 1 in (0 pinned) · 0 out — /context for why")
	term.expect("CTX: Light > ")
	term.typeIn("\x04")
	if err := term.wait(); err != nil {
		t.Fatalf("mira-agent exited with %v after Ctrl-D", err)
	}

	term.mu.Lock()
	shown := term.out.String()
	term.mu.Unlock()
	if strings.Contains(shown, "\x1b[2m") {
		t.Errorf("NO_COLOR, yet the terminal was sent dim text:\n%q", shown)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if got := reqs[2].LastUser(); !strings.HasSuffix(got, "ship it?") {
		t.Errorf("the message typed around Shift-Tab arrived as %q", got)
	}
	for i, want := range []bool{true, false, true} {
		if got := strings.Contains(reqs[i].Messages[1].Content, "Ship the parser fix"); got != want {
			t.Errorf("request %d: the task in the standing context = %v, want %v", i+1, got, want)
		}
	}
}
