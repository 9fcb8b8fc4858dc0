package mira

import (
	"context"
	"path"
	"slices"
	"strings"

	"github.com/miramem/mira/mem"
)

// GoalTagPrefix starts the tag by which a task names the goal it serves:
// "goal:<goal id>". The id may be that of an earlier version of the goal
// (before its status changed): the tag follows the goal's replaced_by
// chain.
const GoalTagPrefix = "goal:"

// goalChainMax bounds how many replaced_by links a task's goal tag is
// followed through.
const goalChainMax = 16

// GoalProgress is a goal with the tasks that name it by a goal tag.
type GoalProgress struct {
	Goal mem.Record
	// Done and Total count the live tasks that name the goal, Done those
	// with a closed status.
	Done, Total int
}

// Goals returns the live goals of the given scopes (every scope when none
// is given), open and closed, newest first, at most n (all when n <= 0),
// each with the progress of the tasks of those scopes that name it with
// a tag "goal:<id>".
func (m *Memory) Goals(ctx context.Context, scopes []string, n int) ([]GoalProgress, error) {
	goals, err := m.Tasks(ctx, scopes, mem.KindGoal, n)
	if err != nil || len(goals) == 0 {
		return nil, err
	}
	tasks, err := m.Tasks(ctx, scopes, mem.KindTask, 0)
	if err != nil {
		return nil, err
	}
	out := make([]GoalProgress, len(goals))
	at := make(map[string]int, len(goals))
	for i, g := range goals {
		out[i].Goal = g
		at[g.ID] = i
	}
	// resolved maps a tag's id to the index of the live goal it leads to,
	// -1 when it leads to none listed. An earlier version of a goal is a
	// tombstone under deleted/goals of its scope, with replaced_by.
	resolved := map[string]int{}
	var tombs map[string]string // id -> path, read at the first need
	resolve := func(id string) int {
		if i, ok := at[id]; ok {
			return i
		}
		if i, ok := resolved[id]; ok {
			return i
		}
		if tombs == nil {
			tombs = m.goalTombstones(scopes, goals)
		}
		i, cur := -1, id
		for range goalChainMax {
			p, ok := tombs[cur]
			if !ok {
				break
			}
			e, err := m.st.Read(p)
			if err != nil || e.ReplacedBy == "" {
				break
			}
			cur = e.ReplacedBy
			if j, ok := at[cur]; ok {
				i = j
				break
			}
		}
		resolved[id] = i
		return i
	}
	for _, t := range tasks {
		var seen []int
		for _, tag := range t.Tags {
			id, ok := strings.CutPrefix(strings.TrimSpace(tag), GoalTagPrefix)
			if !ok || id == "" {
				continue
			}
			i := resolve(strings.TrimSpace(id))
			if i < 0 || slices.Contains(seen, i) {
				continue
			}
			seen = append(seen, i)
			out[i].Total++
			if IsClosed(t.Status) {
				out[i].Done++
			}
		}
	}
	return out, ctx.Err()
}

// goalTombstones maps the ids of the goal tombstones of the scopes (those
// of the goals listed when no scope is given) to their paths.
func (m *Memory) goalTombstones(scopes []string, goals []mem.Record) map[string]string {
	if len(scopes) == 0 {
		for _, g := range goals {
			if !slices.Contains(scopes, g.Scope) {
				scopes = append(scopes, g.Scope)
			}
		}
	}
	out := map[string]string{}
	for _, sc := range scopes {
		paths, err := m.st.Tombstones(sc, mem.KindGoal)
		if err != nil {
			continue
		}
		for _, p := range paths {
			name := path.Base(p)
			if _, id, ok := strings.Cut(strings.TrimSuffix(name, ".md"), "__"); ok {
				out[id] = p
			}
		}
	}
	return out
}
