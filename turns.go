package mira

import (
	"context"

	"github.com/miramem/mira/mem"
	"github.com/miramem/mira/summarize"
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

// Conversation is the state of a conversation's scope as an agent reads
// it: the top-level summaries, then the turns they do not cover, and how
// far the summaries reach. Broken files go to warn, if not nil.
func (m *Memory) Conversation(scope string, warn func(error)) (*summarize.State, error) {
	if err := mem.ValidScope(scope); err != nil {
		return nil, &InvalidError{Err: err}
	}
	return summarize.Load(m.st, scope, []string{mem.KindTurn}, warn)
}

// TurnPaths lists the files of a scope's turns, by their paths in the
// store, without reading them.
func (m *Memory) TurnPaths(scope string) ([]string, error) {
	if err := mem.ValidScope(scope); err != nil {
		return nil, &InvalidError{Err: err}
	}
	return m.st.TurnPaths(scope)
}

// ReadPath reads the entry at a path in the store, as TurnPaths or an
// entry's Path gives it.
func (m *Memory) ReadPath(path string) (*mem.Entry, error) { return m.st.Read(path) }

// Head is the store's current commit ("" before the first).
func (m *Memory) Head() (string, error) { return m.st.Head() }

// Changed lists the paths in the store that differ between two commits.
func (m *Memory) Changed(from, to string) ([]string, error) { return m.st.Diff(from, to) }
