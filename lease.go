package mira

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/miramem/mira/mem"
)

// Lease is where a leased pin ends: at a time (front matter pin_until),
// when a task is closed (pin_task), whichever comes first; or after a
// number of turns of an agent's session, which only the agent keeps (the
// store refuses it).
type Lease struct {
	Until time.Time
	// Task is the id of a goal or task: the pin ends when it is closed,
	// forgotten or replaced (closing a task replaces it by a closed
	// version).
	Task string
	// Turns is a number of turns of a conversation.
	Turns int
}

// IsZero reports a lease that ends nowhere.
func (l Lease) IsZero() bool { return l.Until.IsZero() && l.Task == "" && l.Turns == 0 }

// LeaseTaskPrefix starts the --until of a lease that lasts as long as a
// task: task:ID.
const LeaseTaskPrefix = "task:"

// The errors of an end of a pin (until) without a leased pin, or of a
// leased pin without one: a front end names its own option for the field.
var (
	errUntilMissing = invalidField("until", errors.New("must be given for a leased pin"))
	errUntilUnused  = invalidField("until", errors.New("applies only to a leased pin"))
)

// errTurnLease refuses a lease of turns where there are no turns.
var errTurnLease = invalidField("until", errors.New("a lease of turns lasts in a mira-agent session (/pin ID leased --until 3turns); give a time, a duration or task:ID"))

// ParseLease reads the end of a leased pin: what ParseUntil reads,
// task:ID (until the goal or task ID is closed), or a number of turns
// such as 3turns (1turn for one).
func ParseLease(s string, now time.Time) (Lease, error) {
	s = strings.TrimSpace(s)
	if id, ok := strings.CutPrefix(s, LeaseTaskPrefix); ok {
		if !mem.ValidID(id) {
			return Lease{}, fmt.Errorf("%q is not a memory id", id)
		}
		return Lease{Task: id}, nil
	}
	if n, ok := strings.CutSuffix(s, "turns"); ok || strings.HasSuffix(s, "turn") {
		if !ok {
			n = strings.TrimSuffix(s, "turn")
		}
		k, err := strconv.Atoi(n)
		if err != nil || k < 1 {
			return Lease{}, fmt.Errorf("%q: want a number of turns of at least 1, such as 3turns", s)
		}
		return Lease{Turns: k}, nil
	}
	t, err := ParseUntil(s, now)
	if err != nil {
		return Lease{}, err
	}
	return Lease{Until: t}, nil
}

// ParseUntil reads the end of a leased pin: an RFC 3339 time, a date, or a
// duration from now such as 72h or 3d.
func ParseUntil(s string, now time.Time) (time.Time, error) {
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

// checkLeaseTask refuses a lease for a task that is not an open goal or
// task.
func (m *Memory) checkLeaseTask(ctx context.Context, id string) error {
	e, err := m.Get(ctx, id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return invalidField("until", fmt.Errorf("task %s: no such memory", id))
	case err != nil:
		return invalidField("until", fmt.Errorf("task %s: %w", id, err))
	case e.Kind != mem.KindGoal && e.Kind != mem.KindTask:
		return invalidField("until", fmt.Errorf("memory %s is a %s, not a goal or task", id, e.Kind))
	case IsClosed(e.Status):
		return invalidField("until", fmt.Errorf("task %s is already %s", id, e.Status))
	}
	return nil
}

// TaskClosed reports whether a pin leased for the task id has ended: the
// task is closed, or no live memory has that id any more (it was
// forgotten, or replaced by a new version, as closing it does).
func (m *Memory) TaskClosed(ctx context.Context, id string) (bool, error) {
	e, err := m.Get(ctx, id)
	if err != nil {
		var inv *InvalidError
		if errors.Is(err, fs.ErrNotExist) || errors.As(err, &inv) {
			return true, nil
		}
		return false, err
	}
	return e.Deleted() || e.ReplacedBy != "" || IsClosed(e.Status), nil
}

// closedTasks is TaskClosed for the planner (ctx.Options.Closed), each id
// looked up once; an error keeps the lease and goes to warn.
func (m *Memory) closedTasks(ctx context.Context) func(string) bool {
	seen := map[string]bool{}
	return func(id string) bool {
		c, ok := seen[id]
		if !ok {
			var err error
			if c, err = m.TaskClosed(ctx, id); err != nil {
				m.warn("", fmt.Errorf("task %s of a leased pin: %w", id, err))
			}
			seen[id] = c
		}
		return c
	}
}
