package mira

import (
	"context"

	"github.com/miramem/mira/mem"
)

// Turns returns a scope's conversation turns in the order they were held,
// oldest first: all of them, or the last n when n > 0. Broken files are
// reported through Options.Warn and skipped.
func (m *Memory) Turns(ctx context.Context, scope string, n int) ([]*mem.Entry, error) {
	if err := mem.ValidScope(scope); err != nil {
		return nil, &InvalidError{Err: err}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	paths, err := m.st.TurnPaths(scope)
	if err != nil {
		return nil, err
	}
	if n > 0 && len(paths) > n {
		paths = paths[len(paths)-n:]
	}
	var out []*mem.Entry
	for _, e := range m.st.ReadAll(paths, func(err error) { m.warn("", err) }) {
		if e.Kind == mem.KindTurn && !e.Deleted() {
			out = append(out, e)
		}
	}
	return out, nil
}
