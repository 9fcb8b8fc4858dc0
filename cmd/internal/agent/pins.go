package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/agentloop/tools"
	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/mem"
)

// Pins in mira-agent: /pin ID [sticky|leased [--until WHEN]|ephemeral]
// and /unpin ID. A sticky pin and a lease of a time or a task are the
// store's (as mira-remember --pin sets them); an ephemeral pin and a
// lease of turns (--until 3turns) are the session's, never stored.

// agentPinKinds are what /pin takes after the id, as completion offers
// them.
var agentPinKinds = []string{mem.PinSticky, mem.PinLeased, agentloop.PinEphemeral}

// Get implements agentloop.PinLibrary.
func (l *agentLibrary) Get(ctx context.Context, id string) (mem.Record, error) {
	e, err := l.m.Get(ctx, id)
	if err != nil {
		return mem.Record{}, err
	}
	return e.Record(), nil
}

// TaskClosed implements agentloop.PinLibrary.
func (l *agentLibrary) TaskClosed(ctx context.Context, id string) (bool, error) {
	return l.m.TaskClosed(ctx, id)
}

// agentSuggester passes suggest_pin on to the session's agent, which the
// tools are built before.
type agentSuggester struct{ s *agentSession }

func (a agentSuggester) SuggestPin(ctx context.Context, id, reason string) (string, error) {
	if a.s.agent == nil {
		return "", errors.New("the session is not open yet")
	}
	return a.s.agent.SuggestPin(ctx, id, reason)
}

// registerSuggestPin offers the model suggest_pin.
func (s *agentSession) registerSuggestPin(reg *tools.Registry) error {
	return reg.Register(tools.NewSuggestPinTool(agentSuggester{s}))
}

// slashPin runs /pin ID [sticky|leased [--until WHEN]|ephemeral].
func (s *agentSession) slashPin(ctx context.Context, arg string) error {
	words := strings.Fields(arg)
	if len(words) == 0 {
		return cli.Usagef("/pin needs a memory id: /pin ID [sticky|leased --until WHEN|ephemeral]")
	}
	id, kind, rest := words[0], mem.PinSticky, words[1:]
	if len(rest) > 0 {
		kind, rest = strings.ToLower(rest[0]), rest[1:]
	}
	until := ""
	if len(rest) > 0 {
		v, ok := strings.CutPrefix(rest[0], "--until=")
		switch {
		case ok:
			until, rest = v, rest[1:]
		case rest[0] == "--until" && len(rest) > 1:
			until, rest = rest[1], rest[2:]
		case rest[0] == "--until":
			return cli.Usagef("/pin %s leased --until needs a value: a time, a duration such as 2h, task:ID, or a number of turns such as 3turns", id)
		}
	}
	if len(rest) > 0 {
		return cli.Usagef("/pin: unexpected %q; the form is /pin ID [sticky|leased --until WHEN|ephemeral]", strings.Join(rest, " "))
	}
	if _, err := s.lib.m.Get(ctx, id); err != nil {
		return pinIDError("/pin", id, err)
	}
	var lease mira.Lease
	switch kind {
	case mem.PinSticky, agentloop.PinEphemeral:
		if until != "" {
			return cli.Usagef("/pin %s %s: --until applies only to a leased pin", id, kind)
		}
	case mem.PinLeased:
		if until == "" {
			return cli.Usagef("/pin %s leased needs --until: a time, a duration such as 2h, task:ID, or a number of turns such as 3turns", id)
		}
		var err error
		if lease, err = mira.ParseLease(until, time.Now()); err != nil {
			return cli.Usagef("/pin %s leased --until: %v", id, err)
		}
	default:
		return cli.Usagef("/pin %s: unknown pin %q (want sticky, leased or ephemeral)", id, kind)
	}
	what := kind
	switch {
	case kind == agentloop.PinEphemeral:
		if err := s.agent.Pin(ctx, id, kind, 0); err != nil {
			return cli.Usagef("/pin: %v", err)
		}
		what = "ephemeral, for the next message"
	case lease.Turns > 0:
		if err := s.agent.Pin(ctx, id, kind, lease.Turns); err != nil {
			return cli.Usagef("/pin: %v", err)
		}
		what = fmt.Sprintf("leased for the next %d %s, in this session", lease.Turns, agentPlural(lease.Turns, "message", "messages"))
	default:
		e, err := s.lib.m.PinLease(ctx, id, kind, lease)
		if err != nil {
			var inv *mira.InvalidError
			if errors.As(err, &inv) {
				return cli.Usagef("/pin %s: %v", id, inv.Err)
			}
			return err
		}
		// The store's pin takes the place of the session's.
		s.agent.Unpin(e.ID)
		switch {
		case kind == mem.PinSticky:
			what = "sticky, in every context until /unpin"
		case lease.Task != "":
			what = "leased until task " + lease.Task + " is closed"
		default:
			what = "leased until " + e.PinUntil.Local().Format("2006-01-02 15:04")
		}
	}
	if !s.o.TextOutput(s.mode()) {
		return agentJSONLine(s.o, map[string]any{"pinned": id, "pin": kind, "until": until, "session": kind == agentloop.PinEphemeral || lease.Turns > 0})
	}
	fmt.Fprintf(s.o.Out, "Pinned %s (%s).\n", id, what)
	return nil
}

// slashUnpin runs /unpin ID: the session's pin and the store's go.
func (s *agentSession) slashUnpin(ctx context.Context, arg string) error {
	words := strings.Fields(arg)
	if len(words) != 1 {
		return cli.Usagef("/unpin needs one memory id")
	}
	id := words[0]
	e, err := s.lib.m.Get(ctx, id)
	if err != nil {
		return pinIDError("/unpin", id, err)
	}
	session := s.agent.Unpin(id)
	stored := e.Pin != ""
	if stored {
		if _, err := s.lib.m.Unpin(ctx, id); err != nil {
			return err
		}
	}
	if !session && !stored {
		return cli.Usagef("/unpin %s: it is not pinned", id)
	}
	if !s.o.TextOutput(s.mode()) {
		return agentJSONLine(s.o, map[string]any{"unpinned": id, "session": session, "store": stored})
	}
	fmt.Fprintf(s.o.Out, "Unpinned %s.\n", id)
	return nil
}

// pinIDError names the id a /pin or /unpin could not find.
func pinIDError(cmd, id string, err error) error {
	var inv *mira.InvalidError
	if errors.Is(err, fs.ErrNotExist) || errors.As(err, &inv) {
		return cli.Usagef("%s %s: no memory with id %s (/recall finds ids)", cmd, id, id)
	}
	return err
}

// pinComplete completes the kind after "/pin ID ".
func pinComplete(line string) []string {
	rest, ok := strings.CutPrefix(line, "/pin ")
	if !ok {
		return nil
	}
	id, kind, ok := strings.Cut(rest, " ")
	if !ok || id == "" || strings.ContainsAny(kind, " \t") {
		return nil
	}
	var out []string
	for _, k := range agentPinKinds {
		if strings.HasPrefix(k, strings.ToLower(kind)) {
			c := "/pin " + id + " " + k
			if k == mem.PinLeased {
				c += " --until "
			}
			out = append(out, c)
		}
	}
	return out
}

// ctxPins prints /context pins: the pins of the next message's standing
// context, the activation of what the session has seen, and the model's
// suggestions.
func (s *agentSession) ctxPins(ctx context.Context) error {
	v, err := s.agent.Pins(ctx)
	if err != nil {
		return err
	}
	if !s.o.TextOutput(s.mode()) {
		for _, it := range v.Items {
			if err := agentJSONLine(s.o, map[string]any{"type": "item", "item": it}); err != nil {
				return err
			}
		}
		for _, sg := range v.Suggestions {
			if err := agentJSONLine(s.o, map[string]any{"type": "suggestion", "suggestion": sg}); err != nil {
				return err
			}
		}
		return nil
	}
	w := s.o.Out
	if len(v.Items) == 0 {
		fmt.Fprintln(w, "No pins, and nothing in use yet.")
	}
	for _, it := range v.Items {
		kind := agentOr(it.Kind, "-")
		var where []string
		switch {
		case it.Kind != "" && it.Session:
			where = append(where, "session")
		case it.Kind != "":
			where = append(where, "store")
		}
		if it.Promoted {
			where = append(where, "promoted")
		}
		if it.Until != "" {
			where = append(where, "until "+it.Until)
		}
		if it.Reason != "" && it.Reason != "pinned" {
			where = append(where, it.Reason)
		}
		fmt.Fprintf(w, "%-9s %-28s act %5.2f  %s", kind, it.ID, it.Activation, agentClip(it.Text, 60))
		if len(where) > 0 {
			fmt.Fprintf(w, "  (%s)", strings.Join(where, ", "))
		}
		fmt.Fprintln(w)
	}
	for _, sg := range v.Suggestions {
		fmt.Fprintf(w, "suggested pin: %s %s — %s (/pin %s to accept)\n", sg.ID, agentClip(sg.Text, 50), sg.Reason, sg.ID)
	}
	fmt.Fprintf(w, "Activation halves every %g messages; an item gains %g when shown, %g when the user's message or %g when the reply quotes it.\n",
		agentloop.ActivationHalfLife, agentloop.GainIncluded, agentloop.GainUser, agentloop.GainReply)
	return nil
}

// showSuggestions writes the model's new pin suggestions on stderr,
// dimmed on a colour terminal: the user accepts one with /pin.
func (s *agentSession) showSuggestions() {
	for _, sg := range s.agent.NewSuggestions() {
		line := fmt.Sprintf("  suggested pin: %s %q — %s (/pin %s to accept)", sg.ID, agentClip(sg.Text, 50), sg.Reason, sg.ID)
		if agentColor(s.o) {
			line = "\x1b[2m" + line + "\x1b[0m"
		}
		fmt.Fprintln(s.o.Err, line)
	}
}
