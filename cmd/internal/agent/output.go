package agent

import (
	"encoding/json"
	"fmt"
	"github.com/miramem/mira/cmd/internal/cli"
	"io"
	"strings"

	"github.com/miramem/mira/agentloop"
)

// agentJSONPrinter writes each event as one line of JSON, as it happens.
func agentJSONPrinter(w io.Writer) func(agentloop.Event) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return func(ev agentloop.Event) {
		enc.Encode(ev)
	}
}

// agentTextPrinter shows a message's progress on a terminal: the reply on
// stdout as it streams, tool calls and their outcome on stderr (when
// stderr is a terminal, or always in an interactive session), and in an
// interactive session the usage after each answer.
type agentTextPrinter struct {
	o           *cli.IO
	activity    bool // show tool calls, summaries and usage
	usage       bool
	color       bool
	midLine     bool // stdout's last byte was not a newline
	wroteText   bool
	interactive bool
}

func newAgentTextPrinter(o *cli.IO, interactive bool) *agentTextPrinter {
	return &agentTextPrinter{
		o: o, activity: interactive || o.ErrTTY, usage: interactive, interactive: interactive,
		color: agentColor(o),
	}
}

func (p *agentTextPrinter) dim(s string) string {
	if !p.color {
		return s
	}
	return "\x1b[2m" + s + "\x1b[0m"
}

// endLine finishes a line of reply text before something else is shown.
func (p *agentTextPrinter) endLine() {
	if p.midLine {
		fmt.Fprintln(p.o.Out)
		p.midLine = false
	}
}

func (p *agentTextPrinter) event(ev agentloop.Event) {
	switch ev.Type {
	case "text":
		if !p.wroteText {
			ev.Text = strings.TrimLeft(ev.Text, "\n")
			if ev.Text == "" {
				return
			}
		}
		fmt.Fprint(p.o.Out, ev.Text)
		p.wroteText = true
		p.midLine = !strings.HasSuffix(ev.Text, "\n")
	case "tool_call":
		if p.activity {
			p.endLine()
			fmt.Fprintln(p.o.Err, p.dim("· "+ev.Tool+" "+agentCallSummary(ev.Tool, ev.Arguments)))
		}
	case "tool_result":
		if p.activity {
			fmt.Fprintln(p.o.Err, p.dim("  ↳ "+agentResultSummary(ev)))
		}
	case "summary":
		if p.activity {
			p.endLine()
			fmt.Fprintln(p.o.Err, p.dim("· "+ev.Text))
		}
	case "warning":
		p.endLine()
		p.o.Warnf("warning: %s", ev.Text)
	case "done":
		p.endLine()
		p.wroteText = false
		if p.usage && ev.Usage != nil && ev.Usage.PromptTokens > 0 {
			fmt.Fprintln(p.o.Err, p.dim(fmt.Sprintf("  [%d %s · effort %s · %s]", ev.Steps, agentPlural(ev.Steps, "step", "steps"), ev.Effort, ev.Usage)))
		}
	}
}

// agentCallSummary shows the argument that says most about a call.
func agentCallSummary(tool string, args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return agentClip(string(args), 100)
	}
	key := map[string]string{
		"read_file": "path", "write_file": "path", "edit_file": "path", "bash": "command",
		"glob": "pattern", "grep": "pattern", "remember": "text", "recall": "query",
	}[tool]
	if v, ok := m[key].(string); ok {
		return agentClip(v, 100)
	}
	return agentClip(string(args), 100)
}

// agentResultSummary is one line about a tool result.
func agentResultSummary(ev agentloop.Event) string {
	switch {
	case ev.Denied:
		return "denied"
	case ev.IsError:
		return "error: " + agentClip(ev.Text, 100)
	}
	n := strings.Count(ev.Text, "\n") + 1
	s := fmt.Sprintf("%d %s", n, agentPlural(n, "line", "lines"))
	if n == 1 {
		s = agentClip(ev.Text, 100)
	}
	for _, a := range ev.Artifacts {
		s += " · stored " + a
	}
	return s
}

// clipLine flattens s to one line of at most n characters.
func agentClip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func agentPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
