package mira

import (
	"errors"
	"strings"
	"testing"
	"time"

	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/mem"
)

func planReason(t *testing.T, m *Memory, id string) string {
	t.Helper()
	p, err := m.Context(t.Context(), ContextRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range append(p.Included, p.Excluded...) {
		if e.ID == id {
			return e.Reason
		}
	}
	return "(absent)"
}

func TestTaskLeaseEndsWhenTaskIsDone(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	res, err := m.Remember(ctx, []*mem.Entry{{Kind: mem.KindTask, Body: "ship the billing migration"}}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	task := res.Items[0].Entry
	note := remember(t, m, "billing runs against the staging database until the migration ships")
	p, err := m.PinLease(ctx, note.ID, mem.PinLeased, Lease{Task: task.ID})
	if err != nil || p.Pin != mem.PinLeased || p.PinTask != task.ID || !p.PinUntil.IsZero() {
		t.Fatalf("PinLease = %+v, %v", p, err)
	}
	got, err := m.Get(ctx, note.ID)
	if err != nil || got.PinTask != task.ID {
		t.Fatalf("after reading it back: %+v, %v", got, err)
	}
	if r := planReason(t, m, note.ID); r != plan.ReasonPinned {
		t.Fatalf("while the task is open: %q", r)
	}
	if _, err := m.SetStatus(ctx, task.ID, "done", RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := planReason(t, m, note.ID); r != plan.ReasonExpiredPin {
		t.Fatalf("once the task is done: %q, want %q", r, plan.ReasonExpiredPin)
	}
	// Pinned for a task that is closed, or no task: refused, naming it.
	if _, err := m.PinLease(ctx, note.ID, mem.PinLeased, Lease{Task: task.ID}); err == nil || !strings.Contains(err.Error(), task.ID) {
		t.Errorf("lease for a closed task: %v", err)
	}
	if _, err := m.PinLease(ctx, note.ID, mem.PinLeased, Lease{Task: note.ID}); err == nil || !strings.Contains(err.Error(), "not a goal or task") {
		t.Errorf("lease for a note: %v", err)
	}
	if _, err := m.PinLease(ctx, note.ID, mem.PinLeased, Lease{Turns: 3}); err == nil || !strings.Contains(err.Error(), "mira-agent") {
		t.Errorf("lease of turns in the store: %v", err)
	}
}

func TestRememberLeasedForTask(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	res, err := m.Remember(ctx, []*mem.Entry{{Kind: mem.KindTask, Body: "port the parser"}}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	task := res.Items[0].Entry
	res, err = m.Remember(ctx, []*mem.Entry{{Body: "the parser keeps its old API", Pin: mem.PinLeased}}, RememberOptions{UntilTask: task.ID})
	if err != nil || res.Items[0].Entry.PinTask != task.ID {
		t.Fatalf("Remember = %+v, %v", res, err)
	}
	_, err = m.Remember(ctx, []*mem.Entry{{Body: "other", Pin: mem.PinLeased}}, RememberOptions{UntilTask: "01NOSUCHTASK"})
	if err == nil || !strings.Contains(err.Error(), "01NOSUCHTASK") {
		t.Errorf("a lease for an unknown task: %v", err)
	}
}

func TestUnpin(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	e := remember(t, m, "always answer in English")
	if _, err := m.Pin(ctx, e.ID, mem.PinSticky, time.Time{}); err != nil {
		t.Fatal(err)
	}
	u, err := m.Unpin(ctx, e.ID)
	if err != nil || u.Pin != "" {
		t.Fatalf("Unpin = %+v, %v", u, err)
	}
	if got, _ := m.Get(ctx, e.ID); got.Pin != "" {
		t.Errorf("still pinned after Unpin: %q", got.Pin)
	}
	_, err = m.Unpin(ctx, "01NOSUCHMEMORY")
	var inv *InvalidError
	if err == nil || !strings.Contains(err.Error(), "01NOSUCHMEMORY") || !errors.As(err, &inv) {
		t.Errorf("Unpin of an unknown id: %v", err)
	}
}

func TestParseLease(t *testing.T) {
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]Lease{
		"3turns":     {Turns: 3},
		"1turn":      {Turns: 1},
		"task:01ABC": {Task: "01ABC"},
		"2h":         {Until: now.Add(2 * time.Hour)},
	} {
		got, err := ParseLease(in, now)
		if err != nil || got != want {
			t.Errorf("ParseLease(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"0turns", "xturns", "task:", "task:a/b", "soon"} {
		if _, err := ParseLease(in, now); err == nil {
			t.Errorf("ParseLease(%q) succeeded", in)
		}
	}
}
