package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/mem"
)

// RememberCmd is mira-remember.
type RememberCmd struct {
	Common
	Text        []string `arg:"" optional:"" help:"The memory's text. Without it, the whole of stdin is one memory (or one per line with --lines)."`
	Kind        string   `short:"K" help:"Kind of memory: fact, preference, decision, correction, goal, task, note (the default), turn, summary."`
	Scope       string   `short:"s" help:"Scope (bucket): global (the default), a project name or a conversation id."`
	Tag         []string `short:"t" help:"Tag to attach (repeatable, or comma-separated)." sep:","`
	Role        string   `help:"Role of a turn: user, assistant or tool."`
	Pin         string   `help:"Pin the memory into every context: sticky (until unpinned) or leased (until --until)."`
	Until       string   `help:"End of a leased pin: RFC 3339 time, a date, a duration from now such as 72h, or task:ID (until the goal or task ID is closed). Leases of turns (3turns) are mira-agent's: /pin ID leased --until 3turns." placeholder:"WHEN"`
	Unpin       string   `help:"Unpin the memory ID: it leaves the contexts it was pinned into (and stays in the store)." placeholder:"ID"`
	Lines       bool     `help:"Read stdin as one memory per non-empty line."`
	JSONL       bool     `name:"jsonl" help:"Read stdin as JSONL records; each may carry kind, scope, tags, created_at, role, project and other front-matter fields."`
	Replace     string   `help:"Replace the memory ID: write the new one and tombstone the old with replaced_by." placeholder:"ID"`
	Done        string   `help:"Close the goal or task ID: a new version with status done (or --status) replaces it, and it leaves the standing context." placeholder:"ID"`
	Status      string   `help:"With --done, the status to give: done (the default), cancelled, dropped, another closed status, or open to reopen." placeholder:"STATUS"`
	Source      string   `help:"Provenance recorded in the source field." default:"cli"`
	DryRun      bool     `name:"dry-run" short:"n" help:"Print the operations as JSONL and write nothing."`
	AllowSecret bool     `name:"allow-secret" help:"Store text, tags and other fields even when they look like a credential."`

	Extract  bool   `help:"Extract facts with the chat model from conversation turns (stdin: JSONL with role and text, or plain text as one user message; without input, the scope's user turns not read before) and reconcile them with the memories they touch: add, update, delete or leave alone."`
	Model    string `help:"Chat model for --extract (default: $MIRA_MODEL)." placeholder:"NAME"`
	MaxTurns int    `name:"max-turns" help:"With --extract and no input, the most stored user turns to read in one run, oldest first (default ${default})." default:"50" placeholder:"N"`
}

// Remember is the main of mira-remember.
func Remember(args []string, o *IO) int {
	return Main("mira-remember", "Store memories in the Mira store: one Markdown file each, one git commit per run. With the text in the arguments, a running mira-index watch serves it from its warm process.", &RememberCmd{}, args, o)
}

func (c *RememberCmd) run(ctx context.Context, o *IO) error {
	if o.served && (len(c.Text) == 0 || c.Lines || c.JSONL || c.Extract) {
		// stdin is the client's; extraction talks to a model for
		// seconds, with the server's other clients waiting.
		return errNotServed
	}
	if c.Done != "" {
		return c.runDone(ctx, o)
	}
	if c.Unpin != "" {
		return c.runUnpin(ctx, o)
	}
	if c.Status != "" {
		return usagef("--status goes with --done ID")
	}
	if c.Extract {
		return c.runExtract(ctx, o)
	}
	if c.JSONL || c.Lines {
		bulkGC(bulkMemoryLimit)
	}
	maxBytes := o.config().Remember.MaxBytes
	var lease mira.Lease
	if c.Until != "" {
		var err error
		if lease, err = mira.ParseLease(c.Until, time.Now()); err != nil {
			return usagef("--until: %v", err)
		}
		if lease.Turns > 0 {
			return usagef("--until %s: a lease of turns lasts in a mira-agent session (/pin ID leased --until %s there); here give a time, a duration or task:ID", c.Until, c.Until)
		}
	}
	opt := mira.RememberOptions{Replace: c.Replace, DryRun: c.DryRun, AllowSecret: c.AllowSecret, Source: c.Source, Until: lease.Until,
		UntilTask: lease.Task, MaxBytes: maxBytes}
	if c.JSONL && !c.DryRun && c.Replace == "" && mem.BulkAvailable() {
		return c.rememberStream(ctx, o, opt)
	}
	entries, err := c.collect(o, opt)
	if err != nil {
		return err
	}
	if c.JSONL || c.Lines {
		loadGC(len(entries), loadRecordBytes)
	}
	res, err := c.remember(ctx, o, entries, opt)
	if err != nil {
		return c.rememberError(err)
	}
	return c.print(o, res)
}

// rememberError is the error of a refused Remember, in the command's terms.
func (c *RememberCmd) rememberError(err error) error {
	if se := (*mira.SecretError)(nil); errors.As(err, &se) {
		return usagef("%s", se.Explain("use --allow-secret if you are sure"))
	}
	if c.JSONL {
		// A record's own kind, role or pin may be at fault.
		return asFlag(err, map[string]string{"replace": "--replace", "until": "--until"})
	}
	return asFlag(err, rememberFlags)
}

// loadRecordBytes is what a bulk load keeps live for each record, about
// 1.2 KB (the entry, its operation, its path in the change and in git's
// index, its pack entry; never its file's bytes, see mem.Tx.AddOwned),
// with a third more for the garbage made between two collections.
const loadRecordBytes = 1600

// streamRecordBytes is what a load in parts (rememberStream) keeps live for
// each record: its path, blob and stat data in the change and then in
// git's index, its pack entry and its key among those seen, with a third
// more for the garbage made between two collections.
const streamRecordBytes = 600

// loadGC raises the soft memory limit of a bulk load of n records above
// what it keeps live (n × perRecord; 1.6 GB at a million for a load held
// whole): below that the collector would run without pause from the
// start of the commit on. Under bulkMemoryLimit's records it changes
// nothing. A GOMEMLIMIT of the user's stands.
func loadGC(n, perRecord int) {
	setFloor(max(int64(bulkMemoryLimit), int64(n)*int64(perRecord)))
}

// rememberFlags are mira-remember's flags by the names the library gives
// the fields of a memory.
var rememberFlags = map[string]string{"replace": "--replace", "kind": "--kind", "role": "--role", "pin": "--pin", "until": "--until"}

// remember checks the entries, then opens the store and stores them:
// refused input must not create the store.
func (c *RememberCmd) remember(ctx context.Context, o *IO, entries []*mem.Entry, opt mira.RememberOptions) (*mira.RememberResult, error) {
	// Records read with --jsonl were checked one by one as they were read,
	// each named by its line.
	if !c.JSONL {
		if err := mira.Check(entries, opt); err != nil {
			return nil, err
		}
	}
	// A dry run writes nothing, a new store included.
	m, err := c.openWith(ctx, o, "mira-remember", project(o, ""), openOptions{existing: opt.DryRun, absent: opt.DryRun})
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return m.Remember(ctx, entries, opt)
}

// print writes what Remember did: the operations of a dry run, else the
// records, with a note on stderr for each memory already there.
func (c *RememberCmd) print(o *IO, res *mira.RememberResult) error {
	if c.DryRun {
		return writeOps(o, res.Ops)
	}
	for _, it := range res.Items {
		if it.Duplicate {
			o.Warnf("already remembered as %s (%s); not stored twice", it.Entry.ID, it.Entry.Path)
		}
	}
	return writeEntries(o, c.Output, res.Entries())
}

// collect builds the entries to store from arguments or stdin. Each JSONL
// record is checked as Remember checks it with opt (the limits of a
// memory, credentials, the fields' values) as it is read, so that an
// error names its line.
func (c *RememberCmd) collect(o *IO, opt mira.RememberOptions) ([]*mem.Entry, error) {
	if c.Lines && c.JSONL {
		return nil, usagef("--lines and --jsonl cannot be used together")
	}
	base := func(text string) *mem.Entry {
		return &mem.Entry{Kind: c.Kind, Scope: c.Scope, Tags: c.Tag, Body: strings.TrimSpace(text), Role: c.Role, Pin: c.Pin, Source: c.Source}
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
		out, err := readRecordsEach(o.In, "<stdin>", mira.MaxRecordBytes(opt.MaxBytes), func() func(int, mem.Record) (*mem.Entry, error) {
			var kept mem.Slab // one for each goroutine
			entry := c.jsonlEntry(opt, true)
			return func(line int, r mem.Record) (*mem.Entry, error) {
				e, err := entry(r)
				if err != nil {
					return nil, err
				}
				return kept.Keep(e), nil
			}
		})
		if err != nil {
			return nil, err
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

// jsonlEntry returns the entry of a --jsonl record: the record's fields,
// the flags' for those it leaves out. With check, the entry is checked as
// Remember will check it, so that the caller can name the record's line:
// Remember's own refusal could not say which record.
func (c *RememberCmd) jsonlEntry(opt mira.RememberOptions, check bool) func(r mem.Record) (*mem.Entry, error) {
	return func(r mem.Record) (*mem.Entry, error) {
		if strings.TrimSpace(r.Text) == "" {
			return nil, errors.New(`field "text" is missing or empty`)
		}
		e := r.Entry()
		e.Body = strings.TrimSpace(e.Body)
		if e.Kind == "" {
			e.Kind = c.Kind
		}
		if e.Scope == "" {
			e.Scope = c.Scope
		}
		e.Tags = append(append([]string{}, e.Tags...), c.Tag...)
		if e.Source == "" {
			e.Source = c.Source
		}
		if e.Pin == "" {
			e.Pin = c.Pin
		}
		if e.Role == "" {
			e.Role = c.Role
		}
		if check {
			if err := mira.Check([]*mem.Entry{e}, opt); err != nil {
				if se := (*mira.SecretError)(nil); errors.As(err, &se) {
					return nil, errors.New(se.Explain("use --allow-secret if you are sure"))
				}
				return nil, err
			}
		}
		return e, nil
	}
}

// runUnpin takes the pin of the memory --unpin away.
func (c *RememberCmd) runUnpin(ctx context.Context, o *IO) error {
	if len(c.Text) > 0 || c.Lines || c.JSONL || c.Extract || c.Replace != "" || c.Kind != "" || c.Pin != "" || c.Until != "" || c.DryRun {
		return usagef("--unpin ID takes no text and none of --lines, --jsonl, --extract, --replace, --kind, --pin, --until, --dry-run")
	}
	m, err := c.openWith(ctx, o, "mira-remember", project(o, ""), openOptions{existing: true})
	if errors.Is(err, mira.ErrNoStore) {
		return usagef("--unpin %s: %v", c.Unpin, err)
	}
	if err != nil {
		return err
	}
	defer m.Close()
	before, err := m.Get(ctx, c.Unpin)
	if err != nil {
		return usagef("--unpin %s: %v", c.Unpin, err)
	}
	e, err := m.Unpin(ctx, c.Unpin)
	if err != nil {
		return asFlag(err, map[string]string{"": "--unpin " + c.Unpin})
	}
	if before.Pin == "" {
		o.Warnf("%s was not pinned; nothing changed", c.Unpin)
	}
	return writeEntries(o, c.Output, []*mem.Entry{e})
}

// runDone gives the goal or task --done a new status, done by default.
func (c *RememberCmd) runDone(ctx context.Context, o *IO) error {
	if len(c.Text) > 0 || c.Lines || c.JSONL || c.Extract || c.Replace != "" || c.Kind != "" || c.Pin != "" || c.Until != "" || c.Unpin != "" {
		return usagef("--done ID takes no text and none of --lines, --jsonl, --extract, --replace, --kind, --pin, --until, --unpin")
	}
	m, err := c.openWith(ctx, o, "mira-remember", project(o, ""), openOptions{existing: true})
	if errors.Is(err, mira.ErrNoStore) {
		return usagef("--done %s: %v", c.Done, err)
	}
	if err != nil {
		return err
	}
	defer m.Close()
	res, err := m.SetStatus(ctx, c.Done, cmp.Or(c.Status, "done"), mira.RememberOptions{DryRun: c.DryRun, Source: c.Source})
	if err != nil {
		return asFlag(err, map[string]string{"status": "--status", "replace": "--done"})
	}
	if c.DryRun {
		return writeOps(o, res.Ops)
	}
	if res.Commit == "" {
		o.Warnf("%s is already %s; nothing changed", c.Done, res.Items[0].Entry.Status)
	}
	return writeEntries(o, c.Output, res.Entries())
}
