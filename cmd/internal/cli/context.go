package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/cmd/internal/paths"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/mem"
	"github.com/miramem/mira/summarize"
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
	NoStore  bool     `name:"no-store" help:"Use only what is on stdin: take nothing from the store."`
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

// closedStatus are the statuses that take a correction, goal or task out of
// the standing material.
var closedStatus = []string{"done", "completed", "closed", "resolved", "cancelled", "canceled", "abandoned", "obsolete", "dropped", "wontfix"}

func (c *ContextCmd) run(ctx context.Context, o *IO) error {
	mode, err := plan.ParseMode(c.Mode)
	if err != nil {
		return usagef("--mode: %v", err)
	}
	if c.Budget < 0 {
		return usagef("--budget must not be negative")
	}
	lim := mode.Defaults()
	b := o.config().Context.Budget
	lim.Budget = cmpOrInt(map[plan.Mode]int{plan.ModeOff: b.Off, plan.ModeLight: b.Light, plan.ModeHeavy: b.Heavy}[mode], lim.Budget)
	if c.Budget > 0 {
		lim.Budget = c.Budget
	}
	tok, err := plan.NewTokenizer(c.Encoding)
	if err != nil {
		return usagef("--encoding: %v", err)
	}
	for _, s := range c.Scope {
		if err := mem.ValidScope(s); err != nil {
			return usagef("--scope: %v", err)
		}
	}

	var items []plan.Item
	bad := 0
	if !o.InTTY {
		bad = readContextInput(o, func(it plan.Item) { items = append(items, it) })
	}
	now := time.Now()
	if !c.NoStore {
		recs, err := c.standing(ctx, o, now)
		if err != nil {
			return err
		}
		for _, r := range recs {
			it := plan.FromRecord(r)
			it.Auto = true
			items = append(items, it)
		}
	}

	p, err := plan.Build(items, plan.Options{Mode: mode, Limits: lim, Encoding: tok.Name(), Query: c.Query, Now: now})
	if err != nil {
		return err
	}
	for _, w := range p.Warnings {
		o.Warnf("warning: %s", w)
	}
	prompt := p.Prompt()
	js, err := p.JSON()
	if err != nil {
		return err
	}
	if c.Log {
		if err := c.logPlan(p.ID, js, prompt); err != nil {
			return fmt.Errorf("cannot log the plan: %w", err)
		}
	}
	out := bufio.NewWriter(o.Out)
	switch c.Format {
	case "plan":
		out.Write(js)
		out.WriteByte('\n')
	case "meter":
		fmt.Fprintln(out, p.Meter())
	default:
		out.WriteString(prompt)
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

// readContextInput reads stdin: JSONL records, and plain text lines as
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

// standing gathers what the store contributes to every context: pinned
// memories, open corrections, active goals and tasks (found through the
// index, so the store is never walked) and each scope's latest summaries
// (read from the summaries directories).
func (c *ContextCmd) standing(ctx context.Context, o *IO, now time.Time) ([]mem.Record, error) {
	r, err := c.openReader(ctx, o, "mira-context")
	if err != nil {
		return nil, err
	}
	scopes := c.scopes(o, r.st)
	ix, err := index.Open(r.src, r.opt)
	if err != nil {
		return nil, fmt.Errorf("cannot open index: %w", err)
	}
	paths, err := ix.Standing(scopes, 10000)
	ix.Close()
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	var out []mem.Record
	for _, p := range newestPerDir(paths, maxStandingPerDir) {
		e, err := r.st.Read(p)
		if err != nil {
			r.w.warn(p, err)
			continue
		}
		if e.Deleted() || !standingEntry(e, now) {
			continue
		}
		out = append(out, e.Record())
	}
	for _, s := range scopes {
		sums, err := summarize.Summaries(r.st, s, func(err error) { r.w.warn("", err) })
		if err != nil {
			return nil, err
		}
		for _, e := range sums {
			out = append(out, e.Record())
		}
	}
	return out, nil
}

// maxStandingPerDir bounds the standing entries read from one directory
// (say, a scope's tasks): no mode shows more than a few dozen items, and a
// store with thousands of tasks never closed must not make every context
// read them all.
const maxStandingPerDir = 100

// newestPerDir keeps the last n paths of each directory. Paths come sorted,
// and file names start with the creation time, so those are the newest.
func newestPerDir(paths []string, n int) []string {
	var out []string
	start := 0
	for i := 1; i <= len(paths); i++ {
		if i < len(paths) && path.Dir(paths[i]) == path.Dir(paths[start]) {
			continue
		}
		group := paths[start:i]
		out = append(out, group[max(0, len(group)-n):]...)
		start = i
	}
	return out
}

// standingEntry reports whether an entry found by Standing still belongs in
// a context: a pin that has not expired, or an open correction, goal or task.
func standingEntry(e *mem.Entry, now time.Time) bool {
	switch e.Pin {
	case mem.PinSticky:
		return true
	case mem.PinLeased:
		if e.PinUntil.IsZero() || e.PinUntil.After(now) {
			return true
		}
	}
	if !slices.Contains(index.StandingKinds, e.Kind) {
		return false
	}
	return !slices.Contains(closedStatus, strings.ToLower(strings.TrimSpace(e.Status)))
}

// scopes returns the scopes standing material comes from: global, the
// --scope ones, and by default the current project's scope when the store
// has one.
func (c *ContextCmd) scopes(o *IO, st *mem.Store) []string {
	out := []string{mem.DefaultScope}
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, s := range c.Scope {
		add(s)
	}
	if len(c.Scope) == 0 {
		project := c.Project
		if project == "" {
			if wd, err := o.Getwd(); err == nil {
				project = mem.DetectProject(wd, o.Getenv("MIRA_PROJECT")).Name
			}
		}
		if project != "" && mem.ValidScope(project) == nil {
			if _, err := os.Stat(filepath.Join(st.Root, "entries", project)); err == nil {
				add(project)
			}
		}
	}
	return out
}

// planLog is what --log writes: the plan and the exact block it produced.
type planLog struct {
	Plan   json.RawMessage `json:"plan"`
	Prompt string          `json:"prompt"`
}

// logPlan writes plans/<id>.json under the store. The file's content depends
// only on the plan, so writing it again changes nothing.
func (c *ContextCmd) logPlan(id string, js []byte, prompt string) error {
	home, err := paths.ExpandHome(c.Home)
	if err != nil {
		return err
	}
	dir := filepath.Join(home, "plans")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	file := filepath.Join(dir, id+".json")
	if _, err := os.Stat(file); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(planLog{Plan: js, Prompt: prompt}); err != nil {
		return err
	}
	return atomicfile.Write(file, buf.Bytes(), 0o644, false)
}
