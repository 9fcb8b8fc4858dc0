package mira

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/mem"
)

// TestSetStatus: closing a task keeps it as a new version (the old one
// tombstoned, one commit), takes it out of the standing material, and
// lists it among the tasks; reopening brings it back. Ids that are not
// goals or tasks, or unknown, and unknown statuses are refused by name.
// Tasks lists newest first: the closed version is newer than the goal.
func TestSetStatus(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	res, err := m.Remember(ctx, []*mem.Entry{
		{Kind: mem.KindTask, Body: "write the migration", Priority: "high", Tags: []string{"db"}, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Kind: mem.KindGoal, Body: "ship the release", CreatedAt: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)},
		{Kind: mem.KindFact, Body: "the sky is blue"},
	}, RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	task, goal, fact := res.Items[0].Entry, res.Items[1].Entry, res.Items[2].Entry
	if _, err := m.Pin(ctx, task.ID, mem.PinSticky, time.Time{}); err != nil {
		t.Fatal(err)
	}
	standing := func() map[string]bool {
		t.Helper()
		recs, err := m.Standing(ctx, nil, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		bodies := map[string]bool{}
		for _, r := range recs {
			bodies[r.Text] = true
		}
		return bodies
	}
	if s := standing(); !s["write the migration"] || !s["ship the release"] {
		t.Fatalf("standing before: %v", s)
	}
	commits := gitOut(t, m.Root(), "rev-list", "--count", "HEAD")

	done, err := m.SetStatus(ctx, task.ID, "Done", RememberOptions{Source: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	nw := done.Items[0].Entry
	if nw.ID == task.ID || nw.Status != "done" || nw.Body != task.Body || nw.Kind != mem.KindTask ||
		nw.Priority != "high" || strings.Join(nw.Tags, ",") != "db" || nw.Pin != "" || done.Commit == "" {
		t.Errorf("closed task = %+v (commit %q)", nw, done.Commit)
	}
	if done.Replaced == nil || done.Replaced.ID != task.ID {
		t.Errorf("replaced = %+v", done.Replaced)
	}
	if after := gitOut(t, m.Root(), "rev-list", "--count", "HEAD"); after == commits {
		t.Errorf("no commit: %s", after)
	}
	if _, err := m.Get(ctx, task.ID); err == nil {
		t.Error("the old version is still live")
	}
	if s := standing(); s["write the migration"] || !s["ship the release"] {
		t.Errorf("standing after done: %v", s)
	}
	list, err := m.Tasks(ctx, nil, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != nw.ID || list[0].Status != "done" || list[1].ID != goal.ID || list[1].Status != "open" {
		t.Errorf("Tasks = %+v", list)
	}
	if goals, err := m.Tasks(ctx, nil, mem.KindGoal, 0); err != nil || len(goals) != 1 || goals[0].ID != goal.ID {
		t.Errorf("Tasks(goal) = %+v, %v", goals, err)
	}
	if newest, err := m.Tasks(ctx, []string{"global"}, "", 1); err != nil || len(newest) != 1 || newest[0].ID != nw.ID {
		t.Errorf("Tasks(n=1) = %+v, %v", newest, err)
	}
	if _, err := m.Tasks(ctx, nil, mem.KindFact, 0); err == nil {
		t.Error("Tasks(fact) succeeded")
	}
	if again, err := m.SetStatus(ctx, nw.ID, "done", RememberOptions{}); err != nil || again.Commit != "" || again.Items[0].Entry.ID != nw.ID {
		t.Errorf("done twice = %+v, %v", again, err)
	}
	re, err := m.SetStatus(ctx, nw.ID, "open", RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := standing(); !s["write the migration"] || re.Items[0].Entry.Status != "open" {
		t.Errorf("standing after reopening: %v", s)
	}

	for _, c := range []struct{ id, status, want string }{
		{fact.ID, "done", fact.ID + " is a fact, not a goal or task"},
		{"01JZZZZZZZZZZZZZZZZZZZZZZZ", "done", "01JZZZZZZZZZZZZZZZZZZZZZZZ"},
		{task.ID, "done", task.ID},
		{"not-an-id", "done", "not-an-id"},
		{goal.ID, "finished", `unknown status "finished"`},
	} {
		_, err := m.SetStatus(ctx, c.id, c.status, RememberOptions{})
		var ie *InvalidError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SetStatus(%s, %s) = %v, want an *InvalidError with %q", c.id, c.status, err, c.want)
		}
	}
}

// TestRecurringTask: a task remembered again after it was done is a new
// open task, not a duplicate of the closed one, and closing it again
// closes it even though a done task with the same text is live: the
// second is replaced by the first, so one done task is left.
func TestRecurringTask(t *testing.T) {
	m := open(t, false)
	ctx := t.Context()
	for round := range 2 {
		res, err := m.Remember(ctx, []*mem.Entry{{Kind: mem.KindTask, Body: "rotate the signing keys"}}, RememberOptions{})
		if err != nil {
			t.Fatal(err)
		}
		it := res.Items[0]
		if it.Duplicate || it.Entry.Status != "open" {
			t.Fatalf("round %d: remembering the task again gave %+v (duplicate %v)", round, it.Entry, it.Duplicate)
		}
		recs, err := m.Standing(ctx, nil, time.Now())
		if err != nil || len(recs) != 1 || recs[0].ID != it.Entry.ID {
			t.Fatalf("round %d: standing = %+v, %v", round, recs, err)
		}
		done, err := m.SetStatus(ctx, it.Entry.ID, "done", RememberOptions{})
		if err != nil || done.Replaced == nil || done.Replaced.ID != it.Entry.ID || done.Commit == "" || done.Items[0].Entry.Status != "done" {
			t.Fatalf("round %d: SetStatus = %+v, %v", round, done, err)
		}
		if recs, err := m.Standing(ctx, nil, time.Now()); err != nil || len(recs) != 0 {
			t.Fatalf("round %d: standing after done = %+v, %v", round, recs, err)
		}
		if subj := gitOut(t, m.Root(), "log", "-1", "--format=%s"); round == 1 && !strings.Contains(subj, it.Entry.ID+" by "+done.Items[0].Entry.ID+", the same text") {
			t.Errorf("round 1: commit %q", subj)
		}
	}
	list, err := m.Tasks(ctx, nil, "", 0)
	if err != nil || len(list) != 1 || list[0].Status != "done" {
		t.Errorf("Tasks = %+v, %v", list, err)
	}
}
