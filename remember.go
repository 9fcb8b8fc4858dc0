package mira

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miramem/mira/mem"
)

// RememberOptions tune one Remember.
type RememberOptions struct {
	// Replace is the id of a memory the new one replaces: the new one is
	// written and the old one tombstoned with replaced_by. Entries with no
	// kind, scope or tags take the old one's.
	Replace string
	// DryRun computes the operations and writes nothing.
	DryRun bool
	// AllowSecret stores entries even when their text or another field
	// looks like a credential.
	AllowSecret bool
	// Source is the provenance of the commit (Mira-Source trailer); the
	// entries' own source field defaults to "api".
	Source string
	// Until is the end of a leased pin for entries that have none.
	Until time.Time
	// UntilTask is the goal or task whose closing ends a leased pin, for
	// entries that have no end (pin_task); it must be open.
	UntilTask string
	// MaxBytes is the largest text a memory may have; zero means the
	// configuration's remember.max_bytes, else DefaultMaxBytes.
	MaxBytes int
}

// DefaultMaxBytes is the largest memory text by default: 64 KiB, some
// 16,000 tokens. A memory is read whole into every prompt it is recalled
// for; a document belongs in a file of its own, with a memory that says
// where it is and what it holds.
const DefaultMaxBytes = 64 << 10

// Remembered is one entry of a Remember: stored, or found already there.
type Remembered struct {
	Entry *mem.Entry
	// Duplicate is set when the same text was already remembered in the
	// same scope and kind: Entry is that memory, and nothing was stored.
	Duplicate bool
}

// RememberResult is what a Remember did.
type RememberResult struct {
	Items []Remembered
	// Ops are the operations, as --dry-run prints them.
	Ops []mem.Op
	// Commit is the commit made ("" for a dry run or when nothing was new).
	Commit string
	// Replaced is the memory tombstoned by RememberOptions.Replace.
	Replaced *mem.Entry
}

// Entries returns the entries of the result, stored and duplicates.
func (r *RememberResult) Entries() []*mem.Entry {
	out := make([]*mem.Entry, len(r.Items))
	for i, it := range r.Items {
		out[i] = it.Entry
	}
	return out
}

// Remember stores entries in one commit: each is checked (kind, scope,
// fields, the secret scan over every field that reaches a file, a commit
// message or a prompt), exact duplicates of a live memory in the same scope
// and kind are not stored twice, and the whole batch is all or nothing.
// Entries without a kind are notes; without a scope, global; without a
// project, the Memory's; a goal or task without a status is open. A refused entry makes an *InvalidError (a
// *SecretError for a credential) and nothing is written. Remember fills
// in the entries' defaults, many at once: each entry must appear once.
func (m *Memory) Remember(ctx context.Context, entries []*mem.Entry, opt RememberOptions) (*RememberResult, error) {
	if len(entries) == 0 {
		return nil, invalidf("nothing to remember")
	}
	opt.MaxBytes = cmp.Or(opt.MaxBytes, m.cfg.Remember.MaxBytes)
	if err := eachEntry(entries, func(e *mem.Entry) error { return prepare(e, opt, m.opt.Project) }); err != nil {
		return nil, err
	}
	if opt.UntilTask != "" {
		if err := m.checkLeaseTask(ctx, opt.UntilTask); err != nil {
			return nil, err
		}
	}
	lk, done, err := m.lockLookup(ctx, opt.DryRun)
	if err != nil {
		return nil, err
	}
	defer done()

	res := &RememberResult{}
	var old *mem.Entry
	if opt.Replace != "" {
		var err error
		old, err = m.st.FindID(opt.Replace, lk.pathOf(opt.Replace))
		if err != nil {
			return nil, invalidField("replace", err)
		}
		if old.Deleted() {
			return nil, invalidField("replace", fmt.Errorf("memory %s is already deleted", old.ID))
		}
	}
	for _, e := range entries {
		if old != nil {
			e.Kind = cmp.Or(e.Kind, old.Kind)
			e.Scope = cmp.Or(e.Scope, old.Scope)
			if len(e.Tags) == 0 {
				e.Tags = old.Tags
			}
		}
		fillKind(e)
		if old == nil {
			continue // prepare checked it with these very fields
		}
		if err := check(e, opt.AllowSecret); err != nil {
			return nil, err
		}
	}

	tx := m.st.Begin(opt.DryRun)
	tx.Grow(len(entries))
	seen := make(map[string]bool, len(entries))
	added := 0
	for _, e := range entries {
		key := e.Scope + "\x00" + e.Kind + "\x00" + mem.ContentHash(e.Body)
		if seen[key] {
			continue // the same text twice in one input
		}
		seen[key] = true
		if dup := lk.duplicate(e); dup != nil && (old == nil || dup.ID != old.ID) {
			tx.Ops = append(tx.Ops, mem.Op{Op: "none", ID: dup.ID, Kind: dup.Kind, Scope: dup.Scope, Path: dup.Path, Text: dup.Body, Duplicate: dup.ID})
			res.Items = append(res.Items, Remembered{Entry: dup, Duplicate: true})
			continue
		}
		if err := tx.AddOwned(e); err != nil {
			tx.Rollback()
			return nil, err
		}
		res.Items = append(res.Items, Remembered{Entry: e})
		added++
	}
	// The old memory is replaced by the last one stored or, when all were
	// already there, by the live memory with the same text: either way it
	// leaves, as the caller asked.
	if old != nil && len(res.Items) > 0 && (added > 0 || res.Items[len(res.Items)-1].Entry.ID != old.ID) {
		if err := tx.Tombstone(old, "replaced", res.Items[len(res.Items)-1].Entry.ID); err != nil {
			tx.Rollback()
			return nil, err
		}
		res.Replaced = old
	}
	res.Ops = tx.Ops
	if opt.DryRun || tx.Empty() {
		return res, nil
	}
	verb := "remember"
	if old != nil {
		verb = "replace"
	}
	// A bulk load's operations are all additions: a million of them are
	// not copied to say so.
	addOps := tx.Ops
	for i := range tx.Ops {
		if tx.Ops[i].Op != "add" {
			addOps = nil
			for _, op := range tx.Ops {
				if op.Op == "add" {
					addOps = append(addOps, op)
				}
			}
			break
		}
	}
	subject := mem.Subject(verb, addOps)
	switch {
	case old != nil && len(addOps) == 0:
		subject = fmt.Sprintf("replace: %s %s by %s, the same text", old.Kind, old.ID, res.Items[len(res.Items)-1].Entry.ID)
	case old != nil:
		subject += " (replaces " + old.ID + ")"
	}
	hash, err := tx.Commit(subject, mem.Trailer{Key: "Mira-Source", Value: cmp.Or(opt.Source, "api")})
	if err != nil {
		return nil, err
	}
	res.Commit = hash
	return res, nil
}

// fillKind gives an entry the kind, scope and status it has when they are
// not given: a note, global, and a new goal or task open until it says
// otherwise.
func fillKind(e *mem.Entry) {
	e.Kind = cmp.Or(e.Kind, mem.KindNote)
	e.Scope = cmp.Or(e.Scope, mem.DefaultScope)
	if e.Status == "" && (e.Kind == mem.KindGoal || e.Kind == mem.KindTask) {
		e.Status = "open"
	}
}

// Check validates entries as Remember does before it takes the lock, on
// copies, without a store: a front end calls it before it opens (and
// perhaps creates) a store, so that refused input leaves nothing behind.
func Check(entries []*mem.Entry, opt RememberOptions) error {
	if len(entries) == 0 {
		return invalidf("nothing to remember")
	}
	return eachEntry(entries, func(e *mem.Entry) error {
		c := *e
		return prepare(&c, opt, "")
	})
}

// eachEntry calls fn with each entry, on every core when they are many
// (a bulk load's million: scanning each for credentials is seconds of
// CPU), and returns the error of the first entry in order that failed.
func eachEntry(entries []*mem.Entry, fn func(*mem.Entry) error) error {
	const chunk = 4096
	if len(entries) <= chunk {
		for _, e := range entries {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, (len(entries)+chunk-1)/chunk)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), len(errs)) {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(errs) {
					return
				}
				for _, e := range entries[k*chunk : min(len(entries), (k+1)*chunk)] {
					if errs[k] = fn(e); errs[k] != nil {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// prepare fills an entry's defaults (trimmed text, clean tags, source,
// project, the end of a leased pin) and checks it with the defaults it
// gets when it replaces none: bad input is refused at once, before the
// lock, even while another writer holds the store.
func prepare(e *mem.Entry, opt RememberOptions, project string) error {
	e.Body = strings.TrimSpace(e.Body)
	e.Tags = cleanTags(e.Tags)
	e.Source = cmp.Or(e.Source, "api")
	e.Project = cmp.Or(e.Project, project)
	if e.Pin == mem.PinLeased && e.PinUntil.IsZero() && e.PinTask == "" {
		if opt.Until.IsZero() && opt.UntilTask == "" {
			return errUntilMissing
		}
		e.PinUntil, e.PinTask = opt.Until, opt.UntilTask
	} else if (!opt.Until.IsZero() || opt.UntilTask != "") && e.Pin != mem.PinLeased {
		return errUntilUnused
	}
	if err := CheckSize(e, opt.MaxBytes); err != nil {
		// A credential is refused as one, masked, even in a field too
		// long: the user must learn that it was about to be stored.
		if f := scanEntry(e); !opt.AllowSecret && len(f) > 0 {
			return &InvalidError{Err: &SecretError{Findings: f}}
		}
		return err
	}
	c := *e
	c.Kind = cmp.Or(c.Kind, mem.KindNote)
	c.Scope = cmp.Or(c.Scope, mem.DefaultScope)
	return check(&c, opt.AllowSecret)
}

// CheckSize refuses an entry beyond what a memory may hold: a text of
// more than maxBytes (zero: DefaultMaxBytes), or another field beyond
// the limits of mem.CheckLimits (the tags, their number and length, the
// one-word fields, the other fields of the front matter and how deeply
// they nest). The error is an *InvalidError naming the field and the
// limit. Remember checks this first, before anything costs more than the
// input's size; a front end reading many records calls it on each to
// name the record at fault.
func CheckSize(e *mem.Entry, maxBytes int) error {
	if max := min(cmp.Or(maxBytes, DefaultMaxBytes), MaxTextBytes); len(e.Body) > max {
		return invalidField("text", fmt.Errorf("%s is more than a memory may hold (%s, remember.max_bytes in the configuration): keep a document in a file of its own and remember what it holds and where it is, or split it into memories", mem.ByteSize(len(e.Body)), mem.ByteSize(max)))
	}
	if err := mem.CheckLimits(e); err != nil {
		return &InvalidError{Err: err}
	}
	return nil
}

// MaxRecordBytes bounds one JSONL record read to be remembered, given the
// text's limit (zero: DefaultMaxBytes): JSON may escape each byte of a
// text as six ("\u0001"), and the other fields' alike, and the known
// fields take a few kilobytes more.
func MaxRecordBytes(maxBytes int) int {
	return 6*(cmp.Or(maxBytes, DefaultMaxBytes)+mem.MaxExtraBytes) + 64<<10
}

// check refuses secrets in any field of one entry (see scanEntry), then
// validates it. The scan comes first so that a secret in a field with few
// allowed values (a kind, a role) is refused as a secret, masked, rather
// than quoted whole in the message about the value.
func check(e *mem.Entry, allowSecret bool) error {
	if !allowSecret {
		if f := scanEntry(e); len(f) > 0 {
			return &InvalidError{Err: &SecretError{Findings: f}}
		}
	}
	if err := checkChoices(e); err != nil {
		return err
	}
	if err := mem.Validate(e); err != nil {
		return &InvalidError{Err: err}
	}
	return nil
}

// checkChoices refuses a kind, role or pin that is not one of its values,
// naming the field so that a front end can name its own option for it. A
// role is checked on every kind of memory: a role that is given must mean
// something.
func checkChoices(e *mem.Entry) error {
	for _, f := range []struct {
		field, value string
		valid        []string
	}{
		{"kind", e.Kind, mem.Kinds},
		{"role", e.Role, mem.Roles},
		{"pin", e.Pin, []string{mem.PinSticky, mem.PinLeased}},
	} {
		if f.value == "" || slices.Contains(f.valid, f.value) {
			continue
		}
		q := make([]string, len(f.valid))
		for i, v := range f.valid {
			q[i] = strconv.Quote(v)
		}
		return invalidField(f.field, fmt.Errorf("must be one of %s but got %q", strings.Join(q, ","), f.value))
	}
	return nil
}

// ParseSince reads the start of a time window: an RFC 3339 time, a date,
// or a duration ago such as 72h or 30d.
func ParseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	var n int
	if _, err := fmt.Sscanf(s, "%dd", &n); err == nil && strings.HasSuffix(s, "d") {
		return now.AddDate(0, 0, -n), nil
	}
	return mem.ParseTime(s)
}
