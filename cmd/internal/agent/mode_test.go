package agent

import (
	"bytes"
	"strings"
	"testing"

	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/llm/llmtest"
)

// /mode cycles off → light → heavy → off, or sets the mode named; the
// prompt shows it; the next message is planned with it (off leaves the
// open task out of what the model is sent, light puts it back); after
// the reply the meter line shows the plan's mode and budget, dimmed only
// on a terminal that allows colour.
func TestAgentModeInSession(t *testing.T) {
	x := newAgentEnv(t, llmtest.Text("one"), llmtest.Text("two"))
	x.ok("", "-p", "/remember task: Ship the parser fix before Friday.")
	var out bytes.Buffer
	s := x.session(&out, "--no-extract", "--context-mode", "light")
	ctx := t.Context()

	if got := s.promptText(); got != "CTX: Light > " {
		t.Errorf("prompt %q, want CTX: Light > ", got)
	}
	if s.meterLine() != "" {
		t.Errorf("meter before any message: %q", s.meterLine())
	}
	for _, want := range []string{"Heavy", "Off", "Light", "Heavy"} {
		if _, err := s.slash(ctx, "/mode"); err != nil {
			t.Fatal(err)
		}
		if got := s.promptText(); got != "CTX: "+want+" > " {
			t.Errorf("after /mode the prompt is %q, want CTX: %s > ", got, want)
		}
	}
	if !strings.Contains(out.String(), "Context mode off from the next message on.\n") {
		t.Errorf("/mode said:\n%s", out.String())
	}
	if _, err := s.slash(ctx, "/mode OFF"); err != nil {
		t.Fatal(err)
	}
	if s.agent.ContextMode() != plan.ModeOff {
		t.Fatalf("/mode OFF left the mode %s", s.agent.ContextMode())
	}
	if _, err := s.slash(ctx, "/mode loud"); err == nil || !strings.Contains(err.Error(), "/mode loud: unknown context mode") {
		t.Errorf("/mode loud: %v, want an error naming it", err)
	}
	if s.agent.ContextMode() != plan.ModeOff {
		t.Errorf("a refused /mode changed the mode to %s", s.agent.ContextMode())
	}

	const task = "Ship the parser fix"
	for i, step := range []struct {
		mode, meter string
		sent        bool
	}{{"off", "ctx off · ", false}, {"light", "ctx light · ", true}} {
		if _, err := s.slash(ctx, "/mode "+step.mode); err != nil {
			t.Fatal(err)
		}
		if _, err := s.send(ctx, "what is next?"); err != nil {
			t.Fatal(err)
		}
		req := x.srv.Requests()[i]
		if got := strings.Contains(req.Messages[1].Content, task); got != step.sent {
			t.Errorf("mode %s: the task in the standing context sent = %v, want %v:\n%s", step.mode, got, step.sent, req.Messages[1].Content)
		}
		m := s.meterLine()
		if !strings.HasPrefix(m, step.meter) || !strings.HasSuffix(m, " out — /context for why") {
			t.Errorf("mode %s: meter %q", step.mode, m)
		}
	}
	// The meter in light mode counts the task in.
	if m := s.meterLine(); !strings.Contains(m, " · 1 in (0 pinned) · 0 out") {
		t.Errorf("meter %q, want the task counted in", m)
	}

	// Shown on stderr, dimmed on a colour terminal, plain with NO_COLOR
	// or off a terminal.
	for _, c := range []struct {
		tty     bool
		noColor string
		dim     bool
	}{{true, "", true}, {true, "1", false}, {false, "", false}} {
		out.Reset()
		s.o.ErrTTY = c.tty
		x.env["NO_COLOR"] = c.noColor
		s.showMeter()
		got := out.String()
		if strings.Contains(got, "\x1b") != c.dim || !strings.Contains(got, "ctx light · ") || !strings.HasSuffix(got, "\n") {
			t.Errorf("tty %v NO_COLOR=%q: meter shown as %q", c.tty, c.noColor, got)
		}
	}
}

// /mode in a one-shot run answers in JSON with --output jsonl.
func TestAgentModeJSON(t *testing.T) {
	x := newAgentEnv(t)
	if out := x.ok("", "-p", "/mode heavy", "--output", "jsonl"); out != `{"context_mode":"heavy"}`+"\n" {
		t.Errorf("/mode heavy --output jsonl: %q", out)
	}
	code, _, errs := x.run("", "-p", "/mode loud")
	if code != 2 || !strings.Contains(errs, "/mode loud: unknown context mode (want off, light or heavy)") {
		t.Errorf("/mode loud: exit %d, %q", code, errs)
	}
}

// Tab completes the modes after /mode, and the commands as before.
func TestAgentModeComplete(t *testing.T) {
	for line, want := range map[string][]string{
		"/mode ":   {"/mode off", "/mode light", "/mode heavy"},
		"/mode h":  {"/mode heavy"},
		"/mode x":  nil,
		"/mo":      {"/mode "},
		"/context": {"/context "},
	} {
		if got := agentCompleteWithMode(line); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("complete %q = %q, want %q", line, got, want)
		}
	}
}
