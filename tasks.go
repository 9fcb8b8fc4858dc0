package mira

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/mem"
)

// SetStatus gives the goal or task id a new status: StatusOpen, or one of
// ClosedStatus ("done", "cancelled", ...), which takes it out of the
// standing material of every context. The memory is kept: a new version
// with the status replaces it (the old one tombstoned with replaced_by, as
// RememberOptions.Replace does), in one commit. opt.Replace is ignored.
// An id that is unknown, deleted, or not a goal or task, and a status
// that is neither, make an *InvalidError naming the id or the status.
// Giving a memory the status it has changes nothing (Commit is "").
func (m *Memory) SetStatus(ctx context.Context, id, status string, opt RememberOptions) (*RememberResult, error) {
	status = strings.ToLower(strings.TrimSpace(status))
	if status != StatusOpen && !slices.Contains(ClosedStatus, status) {
		return nil, invalidField("status", fmt.Errorf("unknown status %q (want open or one of %s)", status, strings.Join(ClosedStatus, ", ")))
	}
	old, err := m.Get(ctx, id)
	if err != nil {
		return nil, invalidf("memory %s: %w", id, err)
	}
	if old.Deleted() {
		return nil, invalidf("memory %s is deleted", id)
	}
	if old.Kind != mem.KindGoal && old.Kind != mem.KindTask {
		return nil, invalidf("memory %s is a %s, not a goal or task", id, old.Kind)
	}
	if strings.ToLower(strings.TrimSpace(old.Status)) == status {
		return &RememberResult{Items: []Remembered{{Entry: old}}}, nil
	}
	e := &mem.Entry{Kind: old.Kind, Scope: old.Scope, Tags: old.Tags, Project: old.Project, Status: status,
		Priority: old.Priority, Body: old.Body, Source: cmp.Or(opt.Source, old.Source)}
	// A pin would keep a closed goal or task in every context: closing
	// unpins it. Reopening keeps a pin that still holds.
	if status == StatusOpen && (old.Pin == mem.PinSticky || old.Pin == mem.PinLeased && (old.PinUntil.After(m.st.Now()) || old.PinUntil.IsZero() && old.PinTask != "")) {
		e.Pin, e.PinUntil, e.PinTask = old.Pin, old.PinUntil, old.PinTask
	}
	opt.Replace, opt.Until = id, time.Time{}
	return m.Remember(ctx, []*mem.Entry{e}, opt)
}

// Tasks returns the live goals and tasks of the given scopes (every scope
// when none is given), open and closed, newest first, at most n of them
// (all when n <= 0); kind, when given, is mem.KindGoal or mem.KindTask
// alone. They are found through the index, so the store is never walked,
// and with n only the newest n files of each directory are read.
func (m *Memory) Tasks(ctx context.Context, scopes []string, kind string, n int) ([]mem.Record, error) {
	if kind != "" && kind != mem.KindGoal && kind != mem.KindTask {
		return nil, invalidField("kind", fmt.Errorf("%q is neither goal nor task", kind))
	}
	var paths []string
	err := m.readIndex(ctx, func(ix *index.Index) error {
		var err error
		paths, err = ix.Standing(scopes, 1<<30)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n > 0 {
		// File names start with the creation time: the newest n of each
		// directory hold the newest n of all.
		paths = newestPerDir(paths, n)
	}
	var es []*mem.Entry
	for _, p := range paths {
		e, err := m.st.Read(p)
		if err != nil {
			m.warn(p, err)
			continue
		}
		if e.Deleted() || e.Kind != mem.KindGoal && e.Kind != mem.KindTask || kind != "" && e.Kind != kind {
			continue
		}
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b *mem.Entry) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
	})
	if n > 0 && len(es) > n {
		es = es[:n]
	}
	out := make([]mem.Record, len(es))
	for i, e := range es {
		out[i] = e.Record()
	}
	return out, nil
}
