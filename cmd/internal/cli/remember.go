package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/miramem/mira/internal/secret"
	"github.com/miramem/mira/mem"
)

// RememberCmd is mira-remember.
type RememberCmd struct {
	Common
	Text        []string `arg:"" optional:"" help:"The memory's text. Without it, the whole of stdin is one memory (or one per line with --lines)."`
	Kind        string   `short:"K" help:"Kind of memory: fact, preference, decision, correction, goal, task, note (the default), turn, summary." enum:"fact,preference,decision,correction,goal,task,note,turn,summary," default:""`
	Scope       string   `short:"s" help:"Scope (bucket): global (the default), a project name or a conversation id."`
	Tag         []string `short:"t" help:"Tag to attach (repeatable, or comma-separated)." sep:","`
	Role        string   `help:"Role of a turn: user, assistant or tool." enum:"user,assistant,tool," default:""`
	Pin         string   `help:"Pin the memory into every context: sticky (until unpinned) or leased (until --until)." enum:"sticky,leased," default:""`
	Until       string   `help:"End of a leased pin: RFC 3339 time, a date, or a duration from now such as 72h." placeholder:"WHEN"`
	Lines       bool     `help:"Read stdin as one memory per non-empty line."`
	JSONL       bool     `name:"jsonl" help:"Read stdin as JSONL records; each may carry kind, scope, tags, created_at, role, project and other front-matter fields."`
	Replace     string   `help:"Replace the memory ID: write the new one and tombstone the old with replaced_by." placeholder:"ID"`
	Source      string   `help:"Provenance recorded in the source field." default:"cli"`
	DryRun      bool     `name:"dry-run" short:"n" help:"Print the operations as JSONL and write nothing."`
	AllowSecret bool     `name:"allow-secret" help:"Store text even when it looks like a credential."`

	Extract  bool   `help:"Extract facts with the chat model from conversation turns (stdin: JSONL with role and text, or plain text as one user message; without input, the scope's user turns not read before) and reconcile them with the memories they touch: add, update, delete or leave alone."`
	Model    string `help:"Chat model for --extract (default: $MIRA_MODEL)." placeholder:"NAME"`
	MaxTurns int    `name:"max-turns" help:"With --extract and no input, the most stored user turns to read in one run, oldest first (default ${default})." default:"50" placeholder:"N"`
}

// Remember is the main of mira-remember.
func Remember(args []string, o *IO) int {
	return Main("mira-remember", "Store memories in the Mira store: one Markdown file each, one git commit per run.", &RememberCmd{}, args, o)
}

func (c *RememberCmd) run(ctx context.Context, o *IO) error {
	if c.Extract {
		return c.runExtract(ctx, o)
	}
	// Kind and scope default here rather than in the grammar, so that
	// --replace can tell a kind or scope given from one left out.
	kindGiven, scopeGiven := c.Kind != "", c.Scope != ""
	c.Kind = cmp.Or(c.Kind, mem.KindNote)
	c.Scope = cmp.Or(c.Scope, mem.DefaultScope)
	entries, err := c.collect(o)
	if err != nil {
		return err
	}
	now := time.Now()
	for _, e := range entries {
		if err := c.check(e, now, o); err != nil {
			return err
		}
	}
	st, err := c.openStore(ctx, "mira-remember")
	if err != nil {
		return err
	}
	var lock *mem.Lock
	if !c.DryRun {
		lock, err = st.Lock(ctx, c.LockTimeout)
		if err != nil {
			return err
		}
		defer lock.Unlock()
	}
	ix := openIndexQuiet(st, o, &c.Common)
	defer ix.close()

	var old *mem.Entry
	if c.Replace != "" {
		old, err = st.FindID(c.Replace, ix.pathOf(c.Replace))
		if err != nil {
			return usagef("--replace: %v", err)
		}
		if old.Deleted() {
			return usagef("--replace: memory %s is already deleted", old.ID)
		}
	}

	tx := st.Begin(c.DryRun)
	var out []*mem.Entry
	seen := map[string]*mem.Entry{}
	added := 0
	for _, e := range entries {
		if old != nil {
			if !kindGiven {
				e.Kind = old.Kind
			}
			if !scopeGiven {
				e.Scope = old.Scope
			}
			if len(e.Tags) == 0 {
				e.Tags = old.Tags
			}
		}
		key := e.Scope + "\x00" + e.Kind + "\x00" + mem.ContentHash(e.Body)
		if prev := seen[key]; prev != nil {
			continue // the same text twice in one input
		}
		if dup := ix.duplicate(st, e); dup != nil && (old == nil || dup.ID != old.ID) {
			seen[key] = dup
			tx.Ops = append(tx.Ops, mem.Op{Op: "none", ID: dup.ID, Kind: dup.Kind, Scope: dup.Scope, Path: dup.Path, Text: dup.Body, Duplicate: dup.ID})
			if !c.DryRun {
				o.Warnf("already remembered as %s (%s); not stored twice", dup.ID, dup.Path)
			}
			out = append(out, dup)
			continue
		}
		if err := tx.Add(e); err != nil {
			tx.Rollback()
			return err
		}
		seen[key] = e
		out = append(out, e)
		added++
	}
	if old != nil && added > 0 {
		if err := tx.Tombstone(old, "replaced", out[len(out)-1].ID); err != nil {
			tx.Rollback()
			return err
		}
	}
	if c.DryRun {
		return writeOps(o, tx.Ops)
	}
	if !tx.Empty() {
		verb := "remember"
		if old != nil {
			verb = "replace"
		}
		var addOps []mem.Op
		for _, op := range tx.Ops {
			if op.Op == "add" {
				addOps = append(addOps, op)
			}
		}
		subject := mem.Subject(verb, addOps)
		if old != nil {
			subject += " (replaces " + old.ID + ")"
		}
		if _, err := tx.Commit(subject, mem.Trailer{Key: "Mira-Source", Value: c.Source}); err != nil {
			return err
		}
	}
	lock.Unlock()
	return writeEntries(o, c.Output, out)
}

// collect builds the entries to store from arguments or stdin.
func (c *RememberCmd) collect(o *IO) ([]*mem.Entry, error) {
	if c.Lines && c.JSONL {
		return nil, usagef("--lines and --jsonl cannot be used together")
	}
	base := func(text string) *mem.Entry {
		return &mem.Entry{Kind: c.Kind, Scope: c.Scope, Tags: cleanTags(c.Tag), Body: strings.TrimSpace(text), Role: c.Role, Pin: c.Pin, Source: c.Source}
	}
	if len(c.Text) > 0 {
		if c.Lines || c.JSONL {
			return nil, usagef("give the text as arguments or on stdin with --lines/--jsonl, not both")
		}
		return []*mem.Entry{base(strings.Join(c.Text, " "))}, nil
	}
	if o.InTTY {
		return nil, usagef("nothing to remember: give TEXT as arguments or pipe it on stdin")
	}
	if c.JSONL {
		var out []*mem.Entry
		bad := readRecords(o.In, "<stdin>", true, func(line int, r mem.Record) error {
			if strings.TrimSpace(r.Text) == "" {
				return errors.New(`field "text" is missing or empty`)
			}
			e := r.Entry()
			e.Body = strings.TrimSpace(e.Body)
			if e.Kind == "" {
				e.Kind = c.Kind
			}
			if e.Scope == "" {
				e.Scope = c.Scope
			}
			e.Tags = cleanTags(append(append([]string{}, e.Tags...), c.Tag...))
			if e.Source == "" {
				e.Source = c.Source
			}
			if e.Pin == "" {
				e.Pin = c.Pin
			}
			if e.Role == "" {
				e.Role = c.Role
			}
			if err := mem.Validate(e); err != nil {
				return err
			}
			out = append(out, e)
			return nil
		})
		if len(bad) > 0 {
			return nil, bad[0]
		}
		if len(out) == 0 {
			return nil, usagef("nothing to remember: no records on stdin")
		}
		return out, nil
	}
	data, err := io.ReadAll(o.In)
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if c.Lines {
		var out []*mem.Entry
		for _, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) != "" {
				out = append(out, base(l))
			}
		}
		if len(out) == 0 {
			return nil, usagef("nothing to remember: stdin has no non-empty lines")
		}
		return out, nil
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, usagef("nothing to remember: stdin is empty")
	}
	return []*mem.Entry{base(string(data))}, nil
}

// check validates one entry, fills the project and pin end, and refuses
// secrets.
func (c *RememberCmd) check(e *mem.Entry, now time.Time, o *IO) error {
	if e.Project == "" {
		if wd, err := o.Getwd(); err == nil {
			e.Project = mem.DetectProject(wd, o.Getenv("MIRA_PROJECT")).Name
		}
	}
	if e.Pin == mem.PinLeased && e.PinUntil.IsZero() {
		if c.Until == "" {
			return usagef("--pin leased needs --until")
		}
		t, err := parseWhen(c.Until, now)
		if err != nil {
			return usagef("--until: %v", err)
		}
		e.PinUntil = t
	} else if c.Until != "" && e.Pin != mem.PinLeased {
		return usagef("--until applies only to --pin leased")
	}
	if err := mem.Validate(e); err != nil {
		return &UsageError{err}
	}
	if !c.AllowSecret {
		if f := secret.Scan(e.Body); len(f) > 0 {
			var b strings.Builder
			for i, x := range f {
				if i > 0 {
					b.WriteString("; ")
				}
				fmt.Fprintf(&b, "line %d, column %d: %s (%s): %s", x.Line, x.Column, x.Desc, x.Rule, x.Redacted)
			}
			return &UsageError{fmt.Errorf("refusing to store what looks like a secret: %s (the store is committed to git and pasted into prompts; use --allow-secret if you are sure)", b.String())}
		}
	}
	return nil
}

// parseWhen reads an absolute time or a duration from now.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(d).UTC().Truncate(time.Second), nil
	}
	if strings.HasSuffix(s, "d") {
		var n int
		if _, err := fmt.Sscanf(s, "%dd", &n); err == nil {
			return now.AddDate(0, 0, n).UTC().Truncate(time.Second), nil
		}
	}
	return mem.ParseTime(s)
}

func cleanTags(tags []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
