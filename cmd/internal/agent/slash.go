package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/miramem/mira/cmd/internal/cli"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/internal/paths"
	"github.com/miramem/mira/internal/text"
	"github.com/miramem/mira/mem"
)

// mode is the output format of slash commands: --output, except that an
// interactive session always shows text.
func (s *agentSession) mode() string {
	if s.interactive {
		return "text"
	}
	return s.c.Output
}

// agentSlashCommand is a command the user types instead of a message.
type agentSlashCommand struct {
	name, args, help string
}

// agentSlashCommands are mira-agent's commands, in the order /help lists them.
var agentSlashCommands = []agentSlashCommand{
	{"/remember", "[KIND:] TEXT", "store a memory (fact, preference, decision, correction, goal, task or note; default note)"},
	{"/recall", "QUERY", "search the memory store"},
	{"/forget", "ID [REASON]", "forget a memory (it moves under deleted/)"},
	{"/tasks", "", "list the tasks, open and done, newest first, with their ids"},
	{"/done", "ID [STATUS]", "mark a goal or task done (or cancelled, dropped, open...): it leaves the standing context"},
	{"/goals", "", "list the goals, open and done, newest first, with their ids and tasks done/total (tasks tagged goal:ID)"},
	{"/pin", "ID [sticky|leased|ephemeral]", "pin a memory: sticky (stored), leased --until a time, task:ID or Nturns, or ephemeral (next message only)"},
	{"/unpin", "ID", "take a memory's pin away (the session's and the store's)"},
	{"/status", "", "project, model, tokens and cost so far, cache hit rate"},
	{"/context", "[SUBCOMMAND|QUERY]", "what the model sees and why, with the budget meter; subcommands below"},
	{"/mode", "[off|light|heavy]", "context mode of the next messages (no argument, or Shift-Tab: off → light → heavy → off)"},
	{"/summarize", "", "summarize the conversation buffer now"},
	{"/switch", "[PATH]", "work in the project at PATH (default: the working directory)"},
	{"/help", "", "list the commands"},
	{"/quit", "", "leave (also Ctrl-D)"},
}

// agentComplete completes a slash command at the start of the line.
func agentComplete(line string) []string {
	if sub, ok := strings.CutPrefix(line, "/context "); ok {
		return contextComplete(sub)
	}
	if strings.HasPrefix(line, "/pin ") {
		return pinComplete(line)
	}
	if !strings.HasPrefix(line, "/") || strings.ContainsAny(line, " \t") {
		return nil
	}
	var out []string
	for _, c := range agentSlashCommands {
		if strings.HasPrefix(c.name, line) {
			name := c.name
			if c.args != "" {
				name += " "
			}
			out = append(out, name)
		}
	}
	return out
}

// slash runs a slash command and reports whether the session should end.
// Its output goes to stdout: text, or JSONL with --output jsonl.
func (s *agentSession) slash(ctx context.Context, line string) (quit bool, err error) {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/quit", "/exit":
		return true, nil
	case "/help":
		s.help()
		return false, nil
	case "/remember":
		return false, s.slashRemember(ctx, arg)
	case "/recall":
		if arg == "" {
			return false, cli.Usagef("/recall needs a query")
		}
		recs, err := s.lib.search(ctx, arg, 10, agentRecallKinds)
		if err != nil {
			return false, err
		}
		return false, s.records(recs)
	case "/forget":
		id, reason, _ := strings.Cut(arg, " ")
		if id == "" {
			return false, cli.Usagef("/forget needs a memory id")
		}
		e, err := s.lib.forget(ctx, id, strings.TrimSpace(agentOr(reason, "forgotten")))
		if err != nil {
			return false, err
		}
		if !s.o.TextOutput(s.mode()) {
			return false, s.records([]mem.Record{e.Record()})
		}
		fmt.Fprintf(s.o.Out, "Forgot %s (now %s).\n", e.ID, e.Path)
		return false, nil
	case "/tasks":
		return false, s.tasks(ctx)
	case "/done":
		return false, s.done(ctx, arg)
	case "/goals":
		return false, s.goals(ctx)
	case "/pin":
		return false, s.slashPin(ctx, arg)
	case "/unpin":
		return false, s.slashUnpin(ctx, arg)
	case "/status":
		return false, s.status()
	case "/context":
		return false, s.slashContext(ctx, arg)
	case "/mode":
		return false, s.slashMode(arg)
	case "/summarize":
		n, err := s.agent.Summarize(ctx, s.printer)
		if err != nil {
			return false, err
		}
		if !s.o.TextOutput(s.mode()) {
			return false, agentJSONLine(s.o, map[string]any{"summarized": n, "buffer_turns": s.agent.Status().BufferTurns})
		}
		if n == 0 {
			fmt.Fprintln(s.o.Out, "Nothing was summarized: the buffer is too small for a summary.")
		} else {
			fmt.Fprintf(s.o.Out, "Summarized %d %s.\n", n, agentPlural(n, "turn", "turns"))
		}
		return false, nil
	case "/switch":
		dir := arg
		if dir == "" {
			var err error
			if dir, err = s.o.Getwd(); err != nil {
				return false, err
			}
		}
		p, err := s.switchProject(agentTilde(dir))
		if err != nil {
			return false, err
		}
		if !s.o.TextOutput(s.mode()) {
			return false, agentJSONLine(s.o, map[string]any{"project": p.Name, "root": p.Root, "by": p.By})
		}
		fmt.Fprintf(s.o.Out, "Now in project %s (%s, found by %s). The conversation goes on.\n", p.Name, p.Root, p.By)
		return false, nil
	}
	return false, cli.Usagef("unknown command %s; /help lists them", name)
}

func (s *agentSession) help() {
	w := s.o.Out
	fmt.Fprintln(w, "Type a message for the agent, or a command:")
	for _, c := range agentSlashCommands {
		fmt.Fprintf(w, "  %-28s %s\n", strings.TrimSpace(c.name+" "+c.args), c.help)
	}
	contextHelp(w)
	fmt.Fprintln(w, "End a line with \\ to go on on the next one. Ctrl-C stops the answer or command in progress;")
	fmt.Fprintln(w, "Ctrl-C twice at the prompt, or Ctrl-D, leaves. Shift-Tab cycles the context mode (off, light, heavy).")
}

// slashRemember stores "[KIND:] TEXT".
func (s *agentSession) slashRemember(ctx context.Context, arg string) error {
	kind := mem.KindNote
	if k, rest, ok := strings.Cut(arg, ":"); ok && slices.Contains(mem.Kinds, strings.ToLower(strings.TrimSpace(k))) {
		kind, arg = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(rest)
	}
	if kind == mem.KindTurn || kind == mem.KindSummary {
		return cli.Usagef("/remember: %s entries are written by the agent, not remembered", kind)
	}
	if arg == "" {
		return cli.Usagef("/remember needs the text to remember")
	}
	e, dup, err := s.lib.remember(ctx, arg, kind, nil, "cli")
	var refused *agentRefusal
	if errors.As(err, &refused) {
		return &cli.UsageError{Err: err}
	}
	if err != nil {
		return err
	}
	if !s.o.TextOutput(s.mode()) {
		return s.records([]mem.Record{e.Record()})
	}
	if dup {
		fmt.Fprintf(s.o.Out, "Already remembered as %s (%s).\n", e.ID, e.Path)
		return nil
	}
	fmt.Fprintf(s.o.Out, "Remembered as %s (%s, scope %s).\n", e.ID, e.Kind, e.Scope)
	return nil
}

// records prints records as mira-recall does.
func (s *agentSession) records(recs []mem.Record) error {
	if s.o.TextOutput(s.mode()) && len(recs) == 0 {
		fmt.Fprintln(s.o.Out, "(none)")
		return nil
	}
	return cli.WriteRecords(s.o, s.mode(), recs, false)
}

// status prints /status.
func (s *agentSession) status() error {
	st := s.agent.Status()
	if !s.o.TextOutput(s.mode()) {
		out := map[string]any{
			"conversation": st.Conversation, "project": st.Project.Name, "root": st.Project.Root,
			"model": st.Model, "effort": st.Effort, "usage": st.Usage, "cache_hit_rate": st.Usage.CacheHitRate(),
			"buffer_turns": st.BufferTurns, "buffer_tokens": st.BufferTokens, "buffer_limit": st.BufferLimit,
		}
		if st.Summary != nil {
			out["summary"] = st.Summary.ID
		}
		return agentJSONLine(s.o, out)
	}
	w := s.o.Out
	fmt.Fprintf(w, "conversation  %s\n", st.Conversation)
	fmt.Fprintf(w, "project       %s (%s, found by %s)\n", st.Project.Name, st.Project.Root, st.Project.By)
	effort := st.Effort
	if st.LastEffort != "" {
		effort += ", last " + st.LastEffort
	}
	fmt.Fprintf(w, "model         %s (effort %s)\n", st.Model, effort)
	fmt.Fprintf(w, "tokens        %s\n", st.Usage)
	switch {
	case st.Usage.Cost != nil:
		fmt.Fprintf(w, "cost          $%.4f so far\n", *st.Usage.Cost)
	default:
		fmt.Fprintln(w, "cost          unknown (set --price-input, --price-cached and --price-output)")
	}
	fmt.Fprintf(w, "cache hits    %.0f%% of prompt tokens\n", 100*st.Usage.CacheHitRate())
	fmt.Fprintf(w, "buffer        %d %s, %s of %s tokens before summarizing", st.BufferTurns, agentPlural(st.BufferTurns, "turn", "turns"),
		text.Thousands(st.BufferTokens), text.Thousands(st.BufferLimit))
	if st.TailTurns > 0 {
		fmt.Fprintf(w, "; and the newest %d summarized", st.TailTurns)
	}
	fmt.Fprintln(w)
	if st.Summary != nil {
		fmt.Fprintf(w, "summary       %s %s (%s)\n", st.Summary.Level, st.Summary.ID, st.Summary.CreatedAt.Format("2006-01-02 15:04"))
	} else {
		fmt.Fprintln(w, "summary       none yet")
	}
	return nil
}

// context prints /context: the meter, then each plan's entries with the
// reason they are in or out.
func (s *agentSession) context(ctx context.Context, query string) error {
	v, err := s.agent.Context(ctx, query)
	if err != nil {
		return err
	}
	if !s.o.TextOutput(s.mode()) {
		out := map[string]any{
			"meter": v.Meter(), "instructions_tokens": v.InstructionsTokens, "tools": v.Tools,
			"standing": v.Standing, "standing_tokens": v.StandingTokens,
			"buffer_turns": v.BufferTurns, "buffer_tokens": v.BufferTokens, "buffer_limit": v.BufferLimit,
			"tail_turns": v.TailTurns, "tail_tokens": v.TailTokens,
		}
		if v.Recall != nil {
			out["recall"] = v.Recall
			out["query"] = v.Query
		}
		return agentJSONLine(s.o, out)
	}
	w := s.o.Out
	fmt.Fprintln(w, v.Meter())
	fmt.Fprintf(w, "\n1. instructions and %d tools (the same in every request)\n", v.Tools)
	fmt.Fprintf(w, "2. standing context, plan %s (%s)\n", v.Standing.ID, v.Standing.Meter())
	agentPlanLines(w, v.Standing)
	if v.TailTurns > 0 {
		fmt.Fprintf(w, "3. the newest %d summarized %s, still whole (%s tokens), then\n", v.TailTurns, agentPlural(v.TailTurns, "turn", "turns"), text.Thousands(v.TailTokens))
	} else {
		fmt.Fprint(w, "3. ")
	}
	fmt.Fprintf(w, "conversation since the summary: %d %s, %s tokens (summarized past %s)\n", v.BufferTurns,
		agentPlural(v.BufferTurns, "turn", "turns"), text.Thousands(v.BufferTokens), text.Thousands(v.BufferLimit))
	switch {
	case v.Recall != nil:
		fmt.Fprintf(w, "4. memories recalled for %q, plan %s (%s)\n", agentClip(v.Query, 60), v.Recall.ID, v.Recall.Meter())
		agentPlanLines(w, v.Recall)
	default:
		fmt.Fprintln(w, "4. memories recalled for the message: none yet (give /context a query to see them)")
	}
	return nil
}

// agentPlanLines lists a plan's entries, included first.
func agentPlanLines(w interface{ Write([]byte) (int, error) }, p *plan.Plan) {
	for _, e := range p.Included {
		fmt.Fprintf(w, "   + %-10s %-28s %5s tok  %s\n", e.Section, e.ID, text.Thousands(e.Tokens), e.Reason)
	}
	for _, e := range p.Excluded {
		fmt.Fprintf(w, "   - %-10s %-28s %5s tok  %s\n", e.Section, e.ID, text.Thousands(e.Tokens), e.Reason)
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "   ! %s\n", warn)
	}
}

// agentJSONLine writes v as one line of JSON to stdout.
func agentJSONLine(o *cli.IO, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.Out, "%s\n", b)
	return err
}

func agentFirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

func agentOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// agentTilde expands a leading ~/ to the home directory.
func agentTilde(p string) string {
	if p == "~" {
		p = "~/"
	}
	if strings.HasPrefix(p, "~/") {
		if h, err := paths.ExpandHome(p); err == nil {
			return h
		}
	}
	return p
}
