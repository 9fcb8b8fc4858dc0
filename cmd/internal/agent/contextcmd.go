package agent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/agentloop/tools"
	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/internal/text"
)

// contextSub is a subcommand of /context and of mira-agent context.
type contextSub struct {
	name, args, help string
}

// contextSubs are the subcommands, in the order /help lists them.
var contextSubs = []contextSub{
	{"messages", "[--role R] [--last N]", "the turns since the summary; those the model no longer sees are marked"},
	{"artifacts", "", "the conversation's artifacts: type, lines, size, what they hold"},
	{"show", "ID", "print an artifact as stored"},
	{"stats", "", "messages by role, artifacts by type, buffer tokens, the conversation's cost and cache hits (and this session's), dates"},
	{"add", "FILE", "store a file as an artifact and tell the model about it"},
	{"add-folder", "PATH", "the same with a folder's listing"},
	{"add-search", "QUERY", "the same with the memories that match QUERY"},
	{"prune", "[--strategy relevance] [--max-tokens N] [--keep-recent 10]", "hide the least relevant older turns from the model (the store keeps them)"},
	{"clear", "", "start the buffer afresh; the summary goes on, the store keeps the turns"},
	{"compact", "", "summarize the buffer now"},
	{"export", "FILE", "write the summary and the turns to FILE (.json or .md)"},
	{"why", "TURN [MEMORY]", "what the model was shown for a message (last, an id, a day, or its words) and what became of MEMORY there"},
	{"pins", "", "the pins (store and session), each item's activation, and the model's pin suggestions"},
}

// contextSubNames are the names of the subcommands.
func contextSubNames() []string {
	out := make([]string, len(contextSubs))
	for i, c := range contextSubs {
		out[i] = c.name
	}
	return out
}

// slashContext runs /context with the rest of the line: a subcommand when
// its first word names one, else the memories recalled for the text (see
// contextQuery).
func (s *agentSession) slashContext(ctx context.Context, arg string) error {
	words, err := splitWords(arg)
	if err != nil {
		return cli.Usagef("/context: %v", err)
	}
	return s.contextCommand(ctx, words, arg)
}

// contextCommand runs the subcommand in words, or the context overview for
// the query text when words name none. The rule, so that a mistyped
// subcommand is not taken for a query: the first word names a subcommand;
// "--" makes the rest a query whatever it says; a lone word that is close to
// a subcommand's name (a prefix or a typo), or starts with "-", is refused
// with a suggestion; any other text is a query.
func (s *agentSession) contextCommand(ctx context.Context, words []string, text string) error {
	if len(words) == 0 {
		return s.context(ctx, "")
	}
	name, rest := words[0], words[1:]
	if name == "--" {
		return s.context(ctx, strings.Join(rest, " "))
	}
	if !slices.Contains(contextSubNames(), name) {
		if len(words) == 1 {
			if near := nearSub(name); near != "" || strings.HasPrefix(name, "-") {
				hint := ""
				if near != "" {
					hint = fmt.Sprintf(" (did you mean %s?)", near)
				}
				return cli.Usagef("/context: unknown subcommand %q%s; the subcommands are %s. For the memories recalled for that word, type /context -- %s",
					name, hint, strings.Join(contextSubNames(), ", "), name)
			}
		}
		return s.context(ctx, strings.TrimSpace(text))
	}
	if name == "why" {
		return s.ctxWhy(ctx, rest)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	parse := func(min, max int, what string) ([]string, error) {
		if err := fs.Parse(rest); err != nil {
			if strings.Contains(err.Error(), "not defined") {
				return nil, cli.Usagef("/context %s: %v (mira-agent's own flags go before context)", name, err)
			}
			return nil, cli.Usagef("/context %s: %v", name, err)
		}
		args := fs.Args()
		if len(args) < min || len(args) > max {
			if what == "" {
				return nil, cli.Usagef("/context %s takes no argument", name)
			}
			return nil, cli.Usagef("/context %s needs %s", name, what)
		}
		return args, nil
	}
	switch name {
	case "messages":
		role := fs.String("role", "", "")
		last := fs.Int("last", 0, "")
		if _, err := parse(0, 0, ""); err != nil {
			return err
		}
		if *role != "" && !slices.Contains(agentloop.Roles, *role) {
			return cli.Usagef("/context messages --role: %q is no role (%s)", *role, strings.Join(agentloop.Roles, ", "))
		}
		if *last < 0 {
			return cli.Usagef("/context messages --last must not be negative")
		}
		return s.ctxMessages(*role, *last)
	case "artifacts":
		if _, err := parse(0, 0, ""); err != nil {
			return err
		}
		return s.ctxArtifacts()
	case "pins":
		if _, err := parse(0, 0, ""); err != nil {
			return err
		}
		return s.ctxPins(ctx)
	case "show":
		args, err := parse(1, 1, "one artifact id")
		if err != nil {
			return err
		}
		return s.ctxShow(args[0])
	case "stats":
		if _, err := parse(0, 0, ""); err != nil {
			return err
		}
		return s.ctxStats()
	case "add", "add-folder":
		args, err := parse(1, 1, "one path")
		if err != nil {
			return err
		}
		p, err := s.absPath(args[0])
		if err != nil {
			return err
		}
		var added *agentloop.Added
		if name == "add" {
			added, err = s.agent.AddFile(ctx, s.artifacts(), p, s.c.artifactBytes())
		} else {
			added, err = s.agent.AddFolder(ctx, s.artifacts(), p)
		}
		if err != nil {
			return err
		}
		return s.ctxAdded(added)
	case "add-search":
		if len(rest) == 0 {
			return cli.Usagef("/context add-search needs a query")
		}
		added, err := s.agent.AddSearch(ctx, s.artifacts(), strings.Join(rest, " "))
		if err != nil {
			return err
		}
		return s.ctxAdded(added)
	case "prune":
		var opt agentloop.PruneOptions
		fs.StringVar(&opt.Strategy, "strategy", agentloop.StrategyRelevance, "")
		fs.IntVar(&opt.MaxTokens, "max-tokens", 0, "")
		fs.IntVar(&opt.KeepRecent, "keep-recent", agentloop.DefaultKeepRecent, "")
		if _, err := parse(0, 0, ""); err != nil {
			return err
		}
		switch {
		case opt.Strategy != agentloop.StrategyRelevance:
			return cli.Usagef("/context prune --strategy: %q is no strategy (relevance is the one there is)", opt.Strategy)
		case opt.MaxTokens < 0:
			return cli.Usagef("/context prune --max-tokens must not be negative")
		case opt.KeepRecent < 1:
			return cli.Usagef("/context prune --keep-recent must be at least 1")
		}
		res, err := s.agent.Prune(opt)
		if err != nil {
			return err
		}
		return s.ctxPruned(res)
	case "clear":
		if _, err := parse(0, 0, ""); err != nil {
			return err
		}
		n, err := s.agent.Clear()
		if err != nil {
			return err
		}
		if !s.o.TextOutput(s.mode()) {
			return agentJSONLine(s.o, map[string]any{"cleared": n})
		}
		fmt.Fprintf(s.o.Out, "The model no longer sees the %d %s since the summary; the store keeps them, and the summary goes on.\n", n, agentPlural(n, "turn", "turns"))
		return nil
	case "compact":
		if _, err := parse(0, 0, ""); err != nil {
			return err
		}
		_, err := s.slash(ctx, "/summarize")
		return err
	case "export":
		args, err := parse(1, 1, "a file ending in .json or .md")
		if err != nil {
			return err
		}
		if _, err := agentloop.ExportFormat(args[0]); err != nil {
			return &cli.UsageError{Err: err}
		}
		p, err := s.absPath(args[0])
		if err != nil {
			return err
		}
		format, err := s.agent.ExportFile(p)
		if err != nil {
			return err
		}
		if !s.o.TextOutput(s.mode()) {
			return agentJSONLine(s.o, map[string]any{"exported": p, "format": format})
		}
		fmt.Fprintf(s.o.Out, "Exported the conversation to %s (%s).\n", p, format)
		return nil
	}
	return cli.Usagef("/context: unknown subcommand %q", name)
}

// nearSub returns the subcommand a word looks like a misspelling of, or "".
func nearSub(w string) string {
	w = strings.ToLower(w)
	if len(w) < 3 {
		return ""
	}
	for _, n := range contextSubNames() {
		d := text.Distance(w, n)
		if strings.HasPrefix(n, w) || len(w) >= 4 && d <= 1 || len(w) >= 7 && d <= 2 {
			return n
		}
	}
	return ""
}

// splitWords splits a command line into words: blanks separate them, and
// single or double quotes keep blanks in one.
func splitWords(s string) ([]string, error) {
	var out []string
	var b strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			b.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("a %c quote is not closed", quote)
	}
	if in {
		out = append(out, b.String())
	}
	return out, nil
}

// absPath resolves a path the user typed against the working directory.
func (s *agentSession) absPath(p string) (string, error) {
	p = agentTilde(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	wd, err := s.o.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	return filepath.Join(wd, p), nil
}

// artifacts are the conversation's artifacts.
func (s *agentSession) artifacts() *tools.Artifacts {
	return &tools.Artifacts{Store: s.root, Scope: s.c.Conversation}
}

func (s *agentSession) ctxMessages(role string, last int) error {
	msgs, err := s.agent.Messages(role, last)
	if err != nil {
		return err
	}
	if !s.o.TextOutput(s.mode()) {
		for _, m := range msgs {
			if err := agentJSONLine(s.o, m); err != nil {
				return err
			}
		}
		return nil
	}
	if len(msgs) == 0 {
		fmt.Fprintln(s.o.Out, "No messages since the summary.")
		return nil
	}
	hidden := 0
	for _, m := range msgs {
		mark := " "
		if !m.Shown {
			mark, hidden = "-", hidden+1
		}
		who := m.Role
		if m.Tool != "" {
			who += " " + m.Tool
		}
		body := agentClip(strings.Join(strings.Fields(m.Text), " "), 90)
		fmt.Fprintf(s.o.Out, "%s %s  %-16s %6s tok  %s  %s\n", mark, m.Created.Local().Format("2006-01-02 15:04"), agentClip(who, 16), text.Thousands(m.Tokens), m.ID, body)
	}
	if hidden > 0 {
		fmt.Fprintf(s.o.Out, "(- marks the %d %s the model no longer sees; the store keeps them)\n", hidden, agentPlural(hidden, "turn", "turns"))
	}
	return nil
}

func (s *agentSession) ctxArtifacts() error {
	list, err := s.artifacts().List()
	if err != nil {
		return err
	}
	if !s.o.TextOutput(s.mode()) {
		for _, m := range list {
			if err := agentJSONLine(s.o, m); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list) == 0 {
		fmt.Fprintf(s.o.Out, "Conversation %s has no artifacts.\n", s.c.Conversation)
		return nil
	}
	for _, m := range list {
		lines := "?"
		if m.Lines >= 0 {
			lines = text.Thousands(m.Lines)
		}
		size := text.Size(m.Bytes)
		if m.Truncated {
			size += " of " + text.Size(m.TotalBytes)
		}
		fmt.Fprintf(s.o.Out, "%s  %-7s %9s lines  %-18s %s  %s\n", m.ID, m.Type, lines, size, m.Created.Local().Format("2006-01-02 15:04"), agentClip(strings.Join(strings.Fields(m.Source), " "), 60))
	}
	return nil
}

// ctxShow prints an artifact as stored, in every output mode: a script
// wants its text, not the text quoted in JSON.
func (s *agentSession) ctxShow(id string) error {
	id = strings.TrimPrefix(id, "artifact://")
	f, _, err := s.artifacts().Open(id)
	if err != nil {
		return &cli.UsageError{Err: err}
	}
	defer f.Close()
	if _, err := io.Copy(s.o.Out, f); err != nil {
		return fmt.Errorf("show artifact %s: %w", id, err)
	}
	return nil
}

func (s *agentSession) ctxStats() error {
	st, err := s.agent.Stats(s.artifacts())
	if err != nil {
		return err
	}
	if !s.o.TextOutput(s.mode()) {
		return agentJSONLine(s.o, st)
	}
	w := s.o.Out
	total := 0
	for _, n := range st.Messages {
		total += n
	}
	fmt.Fprintf(w, "conversation  %s\n", st.Conversation)
	fmt.Fprintf(w, "messages      %d (%d user, %d assistant, %d tool)", total, st.Messages["user"], st.Messages["assistant"], st.Messages["tool"])
	if st.Hidden > 0 {
		fmt.Fprintf(w, "; %d more the model no longer sees", st.Hidden)
	}
	fmt.Fprintln(w)
	arts := 0
	var kinds []string
	for _, k := range []string{tools.ArtifactCommand, tools.ArtifactOutput, tools.ArtifactFile, tools.ArtifactFolder, tools.ArtifactSearch} {
		if n := st.Artifacts[k]; n > 0 {
			arts += n
			kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		}
	}
	if arts > 0 {
		fmt.Fprintf(w, "artifacts     %d (%s), %s\n", arts, strings.Join(kinds, ", "), text.Size(st.ArtifactBytes))
	} else {
		fmt.Fprintln(w, "artifacts     none")
	}
	pct := 0.0
	if st.BufferLimit > 0 {
		pct = 100 * float64(st.BufferTokens) / float64(st.BufferLimit)
	}
	fmt.Fprintf(w, "tokens        %s / %s in the buffer (%.1f%%; summarized past it)\n", text.Thousands(st.BufferTokens), text.Thousands(st.BufferLimit), pct)
	agentStatsCost(w, st)
	if st.Summary != "" {
		fmt.Fprintf(w, "summary       %s\n", st.Summary)
	} else {
		fmt.Fprintln(w, "summary       none yet")
	}
	if !st.Created.IsZero() {
		fmt.Fprintf(w, "created       %s\n", st.Created.Local().Format(time.DateTime))
		fmt.Fprintf(w, "updated       %s\n", st.Updated.Local().Format(time.DateTime))
	}
	return nil
}

func (s *agentSession) ctxAdded(a *agentloop.Added) error {
	if !s.o.TextOutput(s.mode()) {
		return agentJSONLine(s.o, a)
	}
	m := a.Artifact
	fmt.Fprintf(s.o.Out, "Added %s as artifact://%s (%s %s, %s); the model is told in turn %s.\n",
		m.Source, m.ID, text.Thousands(m.Lines), agentPlural(m.Lines, "line", "lines"), text.Size(m.Bytes), a.Turn)
	if m.Truncated {
		fmt.Fprintf(s.o.Out, "Only its first %s were kept (of %s).\n", text.Size(m.Bytes), text.Size(m.TotalBytes))
	}
	return nil
}

func (s *agentSession) ctxPruned(res *agentloop.PruneResult) error {
	if !s.o.TextOutput(s.mode()) {
		return agentJSONLine(s.o, map[string]any{"pruned": res.Pruned, "kept_turns": res.KeptTurns,
			"tokens_before": res.TokensBefore, "tokens_after": res.TokensAfter, "max_tokens": res.MaxTokens})
	}
	n := len(res.Pruned)
	if n == 0 {
		fmt.Fprintf(s.o.Out, "Nothing pruned: the buffer holds %s tokens, within %s, or only recent turns.\n", text.Thousands(res.TokensBefore), text.Thousands(res.MaxTokens))
		return nil
	}
	fmt.Fprintf(s.o.Out, "Pruned %d %s (%s → %s tokens, %d %s kept); the store keeps them.\n", n, agentPlural(n, "turn", "turns"),
		text.Thousands(res.TokensBefore), text.Thousands(res.TokensAfter), res.KeptTurns, agentPlural(res.KeptTurns, "turn", "turns"))
	return nil
}

// runContext is mira-agent context SUBCOMMAND [ARGS]: args are the words
// after "context".
func (s *agentSession) runContext(ctx context.Context, args []string) error {
	err := s.contextCommand(ctx, args, strings.Join(args, " "))
	var ue *cli.UsageError
	if errors.As(err, &ue) {
		// The same words, as the command line spells them.
		msg := strings.ReplaceAll(ue.Error(), "type /context ", "run mira-agent context ")
		return &cli.UsageError{Err: errors.New(strings.ReplaceAll(msg, "/context", "context"))}
	}
	return err
}

// contextHelp lists /context's subcommands and the rule that tells them
// from a query.
func contextHelp(w io.Writer) {
	fmt.Fprintln(w, "/context subcommands (also mira-agent context SUBCOMMAND, for scripts):")
	for _, c := range contextSubs {
		fmt.Fprintf(w, "  %-28s %s\n", strings.TrimSpace(c.name+" "+c.args), c.help)
	}
	fmt.Fprintln(w, "Other text after /context is a query: the memories recalled for it are shown. A lone word close")
	fmt.Fprintln(w, "to a subcommand's name is refused as a likely typo; /context -- TEXT always takes TEXT as a query.")
}

// artifactBytes is --artifact-max in bytes.
func (c *Cmd) artifactBytes() int64 { return c.ArtifactMax << 20 }

// runContext runs mira-agent context SUBCOMMAND [ARGS]: no model is
// needed, except by compact with --summarizer model.
func (c *Cmd) runContext(ctx context.Context, o *cli.IO) error {
	if c.Args[0] != "context" {
		return cli.Usagef("unexpected argument %q: the one command mira-agent takes is context (mira-agent context SUBCOMMAND); a message goes with -p or on stdin", c.Args[0])
	}
	if c.Prompt != "" {
		return cli.Usagef("-p and context do not go together")
	}
	client, err := mira.NewChatModel(c.Model, o.Config(), o.Getenv)
	if err != nil {
		return err
	}
	s, err := c.open(ctx, o, client, false)
	if err != nil {
		return err
	}
	return s.runContext(ctx, c.Args[1:])
}

// contextComplete completes a subcommand's name after "/context ".
func contextComplete(sub string) []string {
	if strings.ContainsAny(sub, " \t") {
		return nil
	}
	var out []string
	for _, c := range contextSubs {
		if strings.HasPrefix(c.name, sub) {
			name := "/context " + c.name
			if c.args != "" {
				name += " "
			}
			out = append(out, name)
		}
	}
	return out
}
