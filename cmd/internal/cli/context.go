package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/miramem/mira"
	"github.com/miramem/mira/agentloop"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/internal/paths"
	"github.com/miramem/mira/mem"
)

// ContextCmd is mira-context.
type ContextCmd struct {
	Common
	Mode     string   `short:"m" help:"off (stdin items and sticky pins only), light (compact cards, small budget) or heavy (full bodies, larger budget)." enum:"off,light,heavy" default:"${context_mode}"`
	Budget   int      `short:"b" help:"Token budget for the whole block (default: the mode's, from the config or built in: off 2000, light 4000, heavy 16000)."`
	Query    string   `short:"q" help:"The question the context is for; shown in the block and part of the plan id."`
	Format   string   `short:"f" help:"prompt (the context block), plan (every candidate, in or out, with its reason and token cost, as JSON) or meter (one summary line)." enum:"prompt,plan,meter" default:"prompt"`
	Meter    bool     `help:"Also print the meter line to stderr."`
	Log      bool     `help:"Write the plan and the block to $MIRA_HOME/plans/<plan_id>.json, to reproduce or audit a model call later." default:"${context_log}" negatable:""`
	Encoding string   `short:"e" help:"Tokenizer encoding: o200k_base (GPT-4o and later) or cl100k_base (GPT-4, GPT-3.5)." default:"${encoding}"`
	Scope    []string `short:"s" help:"Take standing material (pins, open corrections, active goals and tasks, the latest summary) from these scopes as well as global (default: global and the current project's scope)." sep:","`
	Project  string   `help:"The current project (default: detected from the working directory, or $MIRA_PROJECT)."`
	NoStore  bool     `name:"no-store" help:"Use only what is on stdin: take nothing from the store, nor from the code index."`
	ShowPlan string   `name:"show-plan" help:"Print the record mira-agent kept of one model call, by the plan id its assistant turn names (plan: in the front matter): the plans, what was in and out and why, tokens estimated and reported, the tool calls' outcomes. JSON when piped, readable on a terminal; reads no stdin." placeholder:"ID"`
	NoCode   bool     `name:"no-code" help:"Take no code from the project's code index (by default, with --query and an index built by mira-code, the code map and the query's touchpoints, as the mode says). Code cards on stdin are still planned."`
}

// Context is the main of mira-context.
func Context(args []string, o *IO) int {
	return Main("mira-context", "Plan the context block for a prompt: candidate records on stdin plus the store's pins, corrections, goals, tasks and latest summary, under a token budget.", &ContextCmd{}, args, o)
}

// partialError reports input lines that were skipped (and already
// reported one by one).
type partialError struct{ n int }

func (e *partialError) Error() string {
	if e.n == 1 {
		return "skipped 1 bad input line"
	}
	return fmt.Sprintf("skipped %d bad input lines", e.n)
}
func (e *partialError) ExitCode() int { return ExitPartial }

func (c *ContextCmd) run(ctx context.Context, o *IO) error {
	if c.ShowPlan != "" {
		return c.showPlan(ctx, o)
	}
	req := mira.ContextRequest{Mode: c.Mode, Budget: c.Budget, Query: c.Query, Encoding: c.Encoding,
		Scopes: c.Scope, NoStore: c.NoStore, Log: c.Log}
	if err := req.Check(); err != nil {
		return asFlag(err, map[string]string{"mode": "--mode", "budget": "--budget", "encoding": "--encoding", "scope": "--scope"})
	}
	bad := 0
	if !o.InTTY {
		bad = readContextInput(o, func(it plan.Item) { req.Items = append(req.Items, it) })
	}
	var m *mira.Memory
	var err error
	if c.NoStore {
		// Nothing is read from the store, and none is created.
		var home string
		if c.Log && c.Home != "" {
			if home, err = paths.ExpandHome(c.Home); err != nil {
				return err
			}
		}
		m = mira.Detached(o.config(), home)
	} else {
		m, err = c.openWith(ctx, o, "mira-context", project(o, c.Project), openOptions{existing: true})
		if errors.Is(err, mira.ErrNoStore) {
			o.Warnf("%v yet: planning the input alone", err)
			req.NoStore = true
			m, err = mira.Detached(o.config(), ""), nil
		}
	}
	if err != nil {
		return err
	}
	defer m.Close()
	if !c.NoCode && !req.NoStore && c.Query != "" && c.Mode != string(plan.ModeOff) {
		code, err := openContextCode(ctx, o, m)
		if err != nil {
			return err
		}
		if code != nil {
			defer code.Close()
			req.Code = code
		}
	}
	p, err := m.Context(ctx, req)
	if err != nil {
		return err
	}
	for _, w := range p.Warnings {
		o.Warnf("warning: %s", w)
	}
	out := bufio.NewWriter(o.Out)
	switch c.Format {
	case "plan":
		js, err := p.JSON()
		if err != nil {
			return err
		}
		out.Write(js)
		out.WriteByte('\n')
	case "meter":
		fmt.Fprintln(out, p.Meter())
	default:
		out.WriteString(p.Prompt())
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if c.Meter {
		fmt.Fprintln(o.Err, p.Meter())
	}
	if bad > 0 {
		return &partialError{bad}
	}
	return nil
}

// readContextInput reads stdin: JSONL records (memories, and code cards
// or a code map as mira-code prints them), and plain text lines as
// ad-hoc items. A line that starts like JSON but does not parse, or a
// record without text, is reported with its line number and skipped; the
// count of such lines is returned.
func readContextInput(o *IO, add func(plan.Item)) int {
	bad := readLines(o.In, "<stdin>", false, func(_ int, b []byte) error {
		b = bytes.TrimSpace(b)
		if b[0] != '{' {
			add(plan.AdHoc(string(b)))
			return nil
		}
		if it, ok, err := plan.ParseCode(b); ok {
			if err != nil {
				return err
			}
			add(it)
			return nil
		}
		var rec mem.Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("invalid JSON: %w", jsonReason(err))
		}
		if strings.TrimSpace(rec.Text) == "" {
			return errors.New(`record has no "text"`)
		}
		add(plan.FromRecord(rec))
		return nil
	})
	for _, err := range bad {
		o.Warnf("%v", err)
	}
	return len(bad)
}

// showPlan prints the call record named by --show-plan.
func (c *ContextCmd) showPlan(ctx context.Context, o *IO) error {
	m, err := c.openWith(ctx, o, "mira-context", project(o, c.Project), openOptions{existing: true})
	if err != nil {
		return err
	}
	defer m.Close()
	line, err := m.FindCall(c.ShowPlan, func(err error) { o.Warnf("warning: %v", err) })
	if err != nil {
		return asFlag(err, map[string]string{"id": "--show-plan"})
	}
	if !o.TextOutput(c.Output) {
		out := append(line[:len(line):len(line)], '\n')
		_, err := o.Out.Write(out)
		return err
	}
	var rec agentloop.CallRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return fmt.Errorf("call record %s: %w", c.ShowPlan, err)
	}
	out := bufio.NewWriter(o.Out)
	WriteCallRecord(out, &rec)
	return out.Flush()
}
