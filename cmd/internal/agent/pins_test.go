package agent

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// /pin and /unpin in a session: a sticky pin is stored, an ephemeral one
// and a lease of turns are not; the meter counts each kind; errors name
// the id; the model's suggest_pin is shown, dimmed on a colour terminal
// only, and not applied; /context pins lists it all, JSONL when asked.
func TestAgentPins(t *testing.T) {
	x := newAgentEnv(t)
	ids := x.rememberAll("/remember fact: the exporter writes CSV with semicolons", "/remember decision: answer in English", "/remember fact: releases go out on Fridays")
	x.srv.Push(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "suggest_pin", Arguments: jsonArgs(map[string]string{"id": ids[2], "reason": "release questions keep coming"})}}},
		llmtest.Text("Suggested."),
		llmtest.Text("Fine."),
	)
	var out bytes.Buffer
	s := x.session(&out, "--no-extract", "--recall-k", "0")
	ctx := t.Context()
	for _, cmd := range []string{"/pin " + ids[0] + " ephemeral", "/pin " + ids[1], "/pin " + ids[2] + " leased --until 2turns"} {
		if _, err := s.slash(ctx, cmd); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	if got := out.String(); !strings.Contains(got, "Pinned "+ids[0]+" (ephemeral, for the next message).") || !strings.Contains(got, "Pinned "+ids[1]+" (sticky") ||
		!strings.Contains(got, "Pinned "+ids[2]+" (leased for the next 2 messages, in this session).") {
		t.Errorf("/pin said:\n%s", got)
	}
	for i, want := range []string{"", mem.PinSticky, ""} {
		if e, err := s.lib.m.Get(ctx, ids[i]); err != nil || e.Pin != want {
			t.Errorf("memory %d in the store: pin %q (%v), want %q", i, e.Pin, err, want)
		}
	}
	if _, err := s.send(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	sys := x.srv.Requests()[0].Messages[1].Content
	for _, want := range []string{"semicolons", "answer in English", "Fridays"} {
		if !strings.Contains(sys, want) {
			t.Errorf("the standing context lacks %q:\n%s", want, sys)
		}
	}
	if m := s.meterLine(); !strings.Contains(m, "(3 pinned: 1 sticky, 1 leased, 1 ephemeral)") {
		t.Errorf("meter %q", m)
	}

	// The suggestion: shown dimmed on a colour terminal, plain with
	// NO_COLOR, and never applied.
	for _, c := range []struct {
		tty     bool
		noColor string
		dim     bool
	}{{true, "", true}, {true, "1", false}} {
		s.agent.SuggestPin(ctx, ids[2], "release questions keep coming") // made new again
		out.Reset()
		s.o.ErrTTY = c.tty
		x.env["NO_COLOR"] = c.noColor
		s.showSuggestions()
		got := out.String()
		if strings.Contains(got, "\x1b[2m") != c.dim || !strings.Contains(got, "suggested pin: "+ids[2]) || !strings.Contains(got, "(/pin "+ids[2]+" to accept)") {
			t.Errorf("tty %v NO_COLOR=%q: suggestion shown as %q", c.tty, c.noColor, got)
		}
	}
	if e, _ := s.lib.m.Get(ctx, ids[2]); e.Pin != "" {
		t.Errorf("the suggestion was applied in the store: %q", e.Pin)
	}

	// /context pins, as text and as JSONL.
	out.Reset()
	if _, err := s.slash(ctx, "/context pins"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"sticky    " + ids[1], "leased    " + ids[2], "(session, until turn 2)", "(store)", "suggested pin: " + ids[2], "Activation halves every 2 messages"} {
		if !strings.Contains(got, want) {
			t.Errorf("/context pins lacks %q:\n%s", want, got)
		}
	}
	s.interactive = false
	s.c.Output = "jsonl"
	out.Reset()
	if _, err := s.slash(ctx, "/context pins"); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range jsonLines(t, out.String()) {
		kinds = append(kinds, l["type"].(string))
	}
	if !slices.Contains(kinds, "item") || !slices.Contains(kinds, "suggestion") {
		t.Errorf("/context pins as JSONL: %q", out.String())
	}
	s.c.Output = "text"

	// /unpin takes the store's pin and the session's away.
	out.Reset()
	for _, id := range []string{ids[1], ids[2]} {
		if _, err := s.slash(ctx, "/unpin "+id); err != nil {
			t.Fatal(err)
		}
	}
	if e, _ := s.lib.m.Get(ctx, ids[1]); e.Pin != "" {
		t.Errorf("/unpin left the store's pin: %q", e.Pin)
	}
	if _, err := s.send(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	sys = x.srv.Last().Messages[1].Content
	if strings.Contains(sys, "answer in English") || strings.Contains(sys, "Fridays") {
		t.Errorf("unpinned memories are still in the standing context:\n%s", sys)
	}

	const missing = "01JZZZZZZZZZZZZZZZZZZZZZZZ"
	wantUsageErrors(t, s, map[string]string{
		"/pin " + missing:                           "/pin " + missing + ": no memory with id " + missing,
		"/unpin " + missing:                         "/unpin " + missing + ": no memory with id " + missing,
		"/unpin " + ids[1]:                          "/unpin " + ids[1] + ": it is not pinned",
		"/pin " + ids[0] + " leased":                "needs --until",
		"/pin " + ids[0] + " forever":               `unknown pin "forever"`,
		"/pin " + ids[0] + " sticky --until 2h":     "--until applies only to a leased pin",
		"/pin " + ids[0] + " leased --until 0turns": "0turns",
		"/pin": "/pin needs a memory id",
	})
}

func TestAgentPinComplete(t *testing.T) {
	for line, want := range map[string][]string{
		"/pi":          {"/pin "},
		"/unp":         {"/unpin "},
		"/pin 01AB ":   {"/pin 01AB sticky", "/pin 01AB leased --until ", "/pin 01AB ephemeral"},
		"/pin 01AB e":  {"/pin 01AB ephemeral"},
		"/pin 01AB le": {"/pin 01AB leased --until "},
		"/pin 01AB x":  nil,
	} {
		if got := agentComplete(line); !slices.Equal(got, want) {
			t.Errorf("agentComplete(%q) = %q, want %q", line, got, want)
		}
	}
}
