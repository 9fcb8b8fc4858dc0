package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/miramem/mira"
	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/mem"
)

// agentTasksShown is the most tasks /tasks lists, the newest.
const agentTasksShown = 50

// scopes are the scopes of the standing context: global, the project's
// and the conversation's.
func (s *agentSession) scopes() []string {
	scopes := []string{mem.DefaultScope}
	for _, sc := range []string{agentloop.ProjectScope(s.agent.Project()), s.agent.Conversation()} {
		if sc != "" && !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	return scopes
}

// tasks prints /tasks: the tasks of the standing context's scopes, open
// and closed, newest first, with their ids.
func (s *agentSession) tasks(ctx context.Context) error {
	out, err := s.lib.m.Tasks(ctx, s.scopes(), mem.KindTask, agentTasksShown)
	if err != nil {
		return err
	}
	if !s.o.TextOutput(s.mode()) {
		return s.records(out)
	}
	if len(out) == 0 {
		fmt.Fprintln(s.o.Out, "No tasks.")
		return nil
	}
	for _, r := range out {
		mark := "○"
		if mira.IsClosed(r.Status) {
			mark = "✓"
		}
		meta := []string{r.ID, "scope " + r.Scope}
		if r.Priority != "" {
			meta = append(meta, "priority "+r.Priority)
		}
		if r.Status != "" {
			meta = append(meta, r.Status)
		}
		fmt.Fprintf(s.o.Out, "%s %s  (%s)\n", mark, agentFirstLine(r.Text), strings.Join(meta, " · "))
	}
	return nil
}

// done runs /done ID [STATUS]: the goal or task gets the status (done by
// default) as mira-remember --done gives it, and so leaves the standing
// context when the status closes it.
func (s *agentSession) done(ctx context.Context, arg string) error {
	id, status, _ := strings.Cut(arg, " ")
	status = agentOr(status, "done")
	if id == "" {
		return cli.Usagef("/done needs the id of a goal or task (/tasks and /goals list them)")
	}
	res, err := s.lib.m.SetStatus(ctx, id, strings.TrimSpace(status), mira.RememberOptions{Source: "cli"})
	if inv := (*mira.InvalidError)(nil); errors.As(err, &inv) {
		return cli.Usagef("/done: %v", err)
	}
	if err != nil {
		return err
	}
	e := res.Items[0].Entry
	if !s.o.TextOutput(s.mode()) {
		return s.records([]mem.Record{e.Record()})
	}
	switch {
	case res.Commit == "":
		fmt.Fprintf(s.o.Out, "%s is already %s.\n", e.ID, e.Status)
	default:
		fmt.Fprintf(s.o.Out, "Marked %s %s: %s (now %s).\n", e.Kind, e.Status, agentFirstLine(e.Body), e.ID)
	}
	return nil
}

// SetStatus implements tools.TaskStatus for the task_done tool: the same
// use case, and so the same refusals, as /done and mira-mcp's task_done.
func (l *agentLibrary) SetStatus(ctx context.Context, id, status string) (string, error) {
	res, err := l.m.SetStatus(ctx, id, status, mira.RememberOptions{Source: "conversation " + l.conversation})
	if err != nil {
		return "", err
	}
	e := res.Items[0].Entry
	if res.Replaced == nil {
		return fmt.Sprintf("%s %s is already %s.", e.Kind, e.ID, e.Status), nil
	}
	return fmt.Sprintf("Marked %s %s %s; it is now %s.", e.Kind, res.Replaced.ID, e.Status, e.ID), nil
}

// Statuses implements tools.TaskStatus.
func (l *agentLibrary) Statuses() []string {
	return slices.Concat([]string{mira.StatusOpen}, mira.ClosedStatus)
}

// goals prints /goals: the goals of the standing context's scopes, open
// and closed, newest first, with their ids, status and the progress of
// the tasks that name them (tag goal:<id>).
func (s *agentSession) goals(ctx context.Context) error {
	out, err := s.lib.m.Goals(ctx, s.scopes(), agentTasksShown)
	if err != nil {
		return err
	}
	if !s.o.TextOutput(s.mode()) {
		for _, g := range out {
			line := map[string]any{"goal": g.Goal, "tasks_done": g.Done, "tasks_total": g.Total}
			if err := agentJSONLine(s.o, line); err != nil {
				return err
			}
		}
		return nil
	}
	if len(out) == 0 {
		fmt.Fprintln(s.o.Out, "No goals.")
		return nil
	}
	for _, g := range out {
		r := g.Goal
		mark := "○"
		if mira.IsClosed(r.Status) {
			mark = "✓"
		}
		meta := []string{r.ID, "scope " + r.Scope}
		if r.Priority != "" {
			meta = append(meta, "priority "+r.Priority)
		}
		meta = append(meta, agentOr(r.Status, mira.StatusOpen))
		if g.Total > 0 {
			meta = append(meta, fmt.Sprintf("%d/%d %s done", g.Done, g.Total, agentPlural(g.Total, "task", "tasks")))
		} else {
			meta = append(meta, "no tasks")
		}
		fmt.Fprintf(s.o.Out, "%s %s  (%s)\n", mark, agentFirstLine(r.Text), strings.Join(meta, " · "))
	}
	return nil
}
