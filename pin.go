package mira

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/miramem/mira/mem"
)

// Pin sets how a memory is pinned into every context: mem.PinSticky
// (until unpinned), mem.PinLeased (until the given time), or "" to unpin.
// The entry's file is rewritten in place (its other fields kept as they
// are), in one commit. Pinning a memory as it already is changes nothing.
func (m *Memory) Pin(ctx context.Context, id, pin string, until time.Time) (*mem.Entry, error) {
	return m.PinLease(ctx, id, pin, Lease{Until: until})
}

// Unpin takes a memory's pin away, as Pin with "" does. A memory that is
// not pinned is left as it is; an unknown id is an *InvalidError naming
// it.
func (m *Memory) Unpin(ctx context.Context, id string) (*mem.Entry, error) {
	return m.PinLease(ctx, id, "", Lease{})
}

// PinLease is Pin with the end of a leased pin given as a Lease: a time,
// a task, or both (the first to come ends it). A task must be a live goal
// or task that is still open.
func (m *Memory) PinLease(ctx context.Context, id, pin string, l Lease) (*mem.Entry, error) {
	if l.Turns != 0 {
		return nil, errTurnLease
	}
	switch pin {
	case mem.PinSticky, "":
		if !l.Until.IsZero() || l.Task != "" {
			return nil, errUntilUnused
		}
	case mem.PinLeased:
		if l.Until.IsZero() && l.Task == "" {
			return nil, errUntilMissing
		}
	default:
		return nil, invalidf("unknown pin %q (want sticky, leased, or none)", pin)
	}
	if l.Task != "" {
		if err := m.checkLeaseTask(ctx, l.Task); err != nil {
			return nil, err
		}
	}
	lk, done, err := m.lockLookup(ctx, false)
	if err != nil {
		return nil, err
	}
	defer done()
	e, err := m.st.FindID(id, lk.pathOf(id))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, invalidf("memory %s: no such memory", id)
		}
		return nil, &InvalidError{Err: err}
	}
	if e.Deleted() {
		return nil, invalidf("memory %s is deleted", id)
	}
	until := l.Until.UTC().Truncate(time.Second)
	if l.Until.IsZero() {
		until = time.Time{}
	}
	if e.Pin == pin && e.PinUntil.Equal(until) && e.PinTask == l.Task {
		return e, nil
	}
	e.Pin, e.PinUntil, e.PinTask = pin, until, l.Task
	if pin != mem.PinLeased {
		e.PinUntil, e.PinTask = time.Time{}, ""
	}
	e.UpdatedAt = m.st.Now().UTC().Truncate(time.Second)
	tx := m.st.Begin(false)
	if err := tx.Rewrite(e); err != nil {
		tx.Rollback()
		return nil, &InvalidError{Err: err}
	}
	verb := "pin"
	if pin == "" {
		verb = "unpin"
	}
	if _, err := tx.Commit(fmt.Sprintf("%s: %s %s %q", verb, e.Kind, e.ID, firstWords(e.Body, 50))); err != nil {
		return nil, err
	}
	return e, nil
}

func firstWords(s string, n int) string {
	r := []rune(s)
	for i, c := range r {
		if c == '\n' {
			r = r[:i]
			break
		}
	}
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return string(r)
}
