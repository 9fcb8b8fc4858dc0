package agentloop

import (
	"context"
	"errors"
	"fmt"

	"github.com/miramem/mira/internal/text"
)

// cut returns the id of the last turn to summarize so that the turns kept
// in the buffer hold at most keep tokens, cutting only before a user
// message so that no tool call is parted from its result. When even the
// last exchange is larger, only it is kept. It returns "" when there is
// nothing to cut before.
func (a *Agent) cut(keep int) string {
	a.bufferTokens() // fills a.tokens
	tail := 0
	best, last := -1, -1
	for i := len(a.buffer) - 1; i > 0; i-- {
		tail += a.tokens[a.buffer[i].ID]
		if a.buffer[i].Role != roleUser {
			continue
		}
		if last < 0 {
			last = i
		}
		if tail <= keep {
			best = i
		}
	}
	switch {
	case best > 0:
		return a.buffer[best-1].ID
	case last > 0:
		return a.buffer[last-1].ID
	}
	return ""
}

// compact hands the older part of the buffer to the Summarizer and reloads
// the conversation, reporting what happened as events. With all set, the
// whole buffer is summarized. It returns the number of turns that left the
// buffer.
func (a *Agent) compact(ctx context.Context, all bool, on func(Event)) (int, error) {
	if a.cfg.Summarizer == nil {
		return 0, errors.New("this session has no summarizer")
	}
	if len(a.buffer) == 0 {
		return 0, nil
	}
	through := a.buffer[len(a.buffer)-1].ID
	if !all {
		through = a.cut(a.cfg.BufferTokens / 2)
		if through == "" {
			through = a.buffer[len(a.buffer)-1].ID
		}
	}
	before, tokens := len(a.buffer), a.bufferTokens()
	on(Event{Type: "summary", Text: fmt.Sprintf("summarizing the older conversation (%d %s, %s tokens in the buffer)…",
		before, plural(before, "turn", "turns"), text.Thousands(tokens))})
	if err := a.summarizeView(ctx, through); err != nil {
		return 0, err
	}
	if err := a.load(); err != nil {
		return 0, err
	}
	gone := before - len(a.buffer)
	if gone > 0 {
		on(Event{Type: "summary", Text: fmt.Sprintf("summarized %d %s (%s tokens); %d %s stay in the buffer",
			gone, plural(gone, "turn", "turns"), text.Thousands(tokens-a.bufferTokens()), len(a.buffer), plural(len(a.buffer), "turn", "turns"))})
	}
	return gone, nil
}

// Summarize summarizes the whole buffer now (/summarize) and returns the
// number of turns that left it: none when there was too little to
// summarize.
func (a *Agent) Summarize(ctx context.Context, on func(Event)) (int, error) {
	if on == nil {
		on = func(Event) {}
	}
	if err := a.refresh(); err != nil {
		return 0, err
	}
	return a.compact(ctx, true, on)
}

// ViewSummarizer is a Summarizer that can leave turns' text out of the
// summary while covering them.
type ViewSummarizer interface {
	// SummarizeView summarizes as Summarize does, except that the text of
	// the turns in hidden reaches no summary.
	SummarizeView(ctx context.Context, scope, through string, hidden []string) error
}

// summarizeView summarizes through the given turn. Pruning and clearing
// change what the model sees, never what is kept: the turns they left out
// stay in the store, and their text stays out of the rolling summary too,
// which the model sees in their place. A Summarizer that cannot leave
// text out summarizes them as they are.
func (a *Agent) summarizeView(ctx context.Context, through string) error {
	vs, ok := a.cfg.Summarizer.(ViewSummarizer)
	if !ok {
		return a.cfg.Summarizer.Summarize(ctx, a.cfg.Conversation, through)
	}
	buf, err := a.storeBuffer()
	if err != nil {
		return err
	}
	v, err := a.readView()
	if err != nil {
		return err
	}
	visible := v.apply(buf)
	shown := make(map[string]bool, len(visible))
	for _, e := range visible {
		shown[e.ID] = true
	}
	var hidden []string
	for _, e := range buf {
		if !shown[e.ID] {
			hidden = append(hidden, e.ID)
		}
	}
	return vs.SummarizeView(ctx, a.cfg.Conversation, through, hidden)
}
