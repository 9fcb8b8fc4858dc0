package agentloop

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/mem"
)

// The tail: /summarize folds the whole buffer into the summary, and a
// bounded summary can end just before a short exchange, so right after a
// summary the model could lose the exchange it was in the middle of. The
// agent therefore also sends the newest turns the summary covers,
// verbatim, up to half of Config.BufferTokens: coverage overlaps rather
// than leaving a gap. The tail is chosen from the store
// alone, within a fixed budget, so a restarted agent sends the same turns,
// and it changes only when the summaries do, so the prompt's beginning
// stays stable in between.

// turnFile is a turn's file, known by its name before it is read.
type turnFile struct {
	rel     string
	created time.Time
	id      string
}

// loadTail picks the newest turns not in the buffer (so covered by the
// summaries) whose tokens fit in budget, starting at a user message so
// that no tool result is parted from its call.
func (a *Agent) loadTail(budget int) ([]*mem.Entry, error) {
	if budget <= 0 || len(a.summaries) == 0 {
		return nil, nil
	}
	st := a.cfg.Store
	inBuffer := make(map[string]bool, len(a.buffer))
	for _, e := range a.buffer {
		inBuffer[e.ID] = true
	}
	paths, err := st.TurnPaths(a.cfg.Conversation)
	if err != nil {
		return nil, fmt.Errorf("list the conversation's turns: %w", err)
	}
	files := make([]turnFile, 0, len(paths))
	for _, p := range paths {
		f := turnFile{rel: p}
		if ep, err := mem.ParsePath(p); err == nil {
			if t, ok := ep.Created(); ok {
				f.created, f.id = t, ep.ID
			}
		}
		if !inBuffer[f.id] {
			files = append(files, f)
		}
	}
	slices.SortFunc(files, func(x, y turnFile) int {
		return cmp.Or(x.created.Compare(y.created), strings.Compare(x.id, y.id), strings.Compare(x.rel, y.rel))
	})
	// Read from the newest back until the budget is spent; keep what ends
	// up starting at a user message.
	var tail []*mem.Entry
	used, start := 0, -1
	for i := len(files) - 1; i >= 0; i-- {
		e, err := st.ReadPath(files[i].rel)
		if err != nil {
			var pe *mem.ParseError
			if errors.As(err, &pe) {
				a.cfg.Warn(err)
				continue
			}
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		if e.Kind != mem.KindTurn || inBuffer[e.ID] {
			continue
		}
		used += a.turnTokens(e)
		if used > budget {
			break
		}
		tail = append(tail, e)
		if e.Role == roleUser || e.Role == "" {
			start = len(tail)
		}
	}
	if start < 0 {
		return nil, nil
	}
	tail = tail[:start]
	slices.Reverse(tail)
	return tail, nil
}
