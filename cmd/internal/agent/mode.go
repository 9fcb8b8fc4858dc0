package agent

import (
	"fmt"
	"strings"

	"github.com/miramem/mira/cmd/internal/cli"
	plan "github.com/miramem/mira/ctx"
)

// The context mode can change during a session: /mode sets it, or cycles
// it off → light → heavy → off, for the messages that follow. The prompt
// shows it, and after each reply a meter line shows what the standing
// context of that message took of its budget.
//
// At the prompt, Shift-Tab cycles it too and redraws the prompt at once
// (agentModeKey, lineeditor.go).

// agentModes are the context modes in the order /mode cycles them.
var agentModes = []plan.Mode{plan.ModeOff, plan.ModeLight, plan.ModeHeavy}

// agentNextMode is the mode after m in the cycle.
func agentNextMode(m plan.Mode) plan.Mode {
	for i, x := range agentModes {
		if x == m {
			return agentModes[(i+1)%len(agentModes)]
		}
	}
	return plan.ModeLight
}

// agentModeName is a mode as the prompt shows it: Off, Light, Heavy.
func agentModeName(m plan.Mode) string {
	s := string(m)
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// promptText is the REPL's prompt: the context mode, then "> ". It is
// plain text whatever the terminal, so it has no colour to take away for
// NO_COLOR.
func (s *agentSession) promptText() string {
	return "CTX: " + agentModeName(s.agent.ContextMode()) + " > "
}

// slashMode runs /mode [off|light|heavy]: it sets the context mode of the
// messages that follow, or with no argument moves to the next one.
func (s *agentSession) slashMode(arg string) error {
	m := agentNextMode(s.agent.ContextMode())
	if arg != "" {
		var err error
		if m, err = plan.ParseMode(strings.ToLower(arg)); err != nil {
			return cli.Usagef("/mode %s: unknown context mode (want off, light or heavy)", arg)
		}
	}
	if err := s.agent.SetContextMode(m); err != nil {
		return err
	}
	if !s.o.TextOutput(s.mode()) {
		return agentJSONLine(s.o, map[string]any{"context_mode": m})
	}
	fmt.Fprintf(s.o.Out, "Context mode %s from the next message on.\n", m)
	return nil
}

// agentColor reports whether stderr may show colour: a terminal, and
// neither NO_COLOR nor TERM=dumb.
func agentColor(o *cli.IO) bool {
	return o.ErrTTY && o.Getenv("NO_COLOR") == "" && o.Getenv("TERM") != "dumb"
}

// meterLine is the budget meter of the last message's standing context,
// such as "ctx light · 3,480/4,000 tok · 9 in (2 pinned: 2 sticky) · 4 out — /context
// for why", or "" before any message was planned.
func (s *agentSession) meterLine() string {
	standing, _ := s.agent.LastPlans()
	if standing == nil {
		return ""
	}
	return standing.Meter() + " — /context for why"
}

// showMeter writes the meter line on stderr, where the REPL shows the
// usage of each reply, dimmed as that is.
func (s *agentSession) showMeter() {
	line := s.meterLine()
	if line == "" {
		return
	}
	if agentColor(s.o) {
		line = "\x1b[2m  " + line + "\x1b[0m"
	} else {
		line = "  " + line
	}
	fmt.Fprintln(s.o.Err, line)
}

// agentCompleteWithMode completes the modes after "/mode ", and the rest
// as agentComplete does.
func agentCompleteWithMode(line string) []string {
	sub, ok := strings.CutPrefix(line, "/mode ")
	if !ok {
		return agentComplete(line)
	}
	var out []string
	for _, m := range agentModes {
		if strings.HasPrefix(string(m), strings.ToLower(sub)) {
			out = append(out, "/mode "+string(m))
		}
	}
	return out
}
