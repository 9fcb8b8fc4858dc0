package proxy

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/llm"
)

// CuratorOptions configure a Curator.
type CuratorOptions struct {
	Memory *mira.Memory
	// Writer is flushed before each round, so the round sees the turns.
	Writer *mira.TurnWriter
	// Chat extracts facts and writes summaries; nil extracts nothing and
	// summarizes with the offline extractive summarizer.
	Chat *llm.Client
	// Extract turns fact extraction on (it needs Chat).
	Extract bool
	// Extractive writes summaries offline even with a Chat model.
	Extractive bool
	// Delay is how long a round waits after the first turn that calls for
	// it, so that the turns of a busy conversation are taken together
	// (default 1 s).
	Delay time.Duration
	// Logf receives what went wrong; nil discards it.
	Logf func(format string, args ...any)
}

// Curator does the work that follows a turn, in the background and in
// rounds: facts are extracted from the new user turns of each
// conversation touched and reconciled with its memories (one commit per
// conversation), then the conversations' rolling summaries are brought up
// to date and what is beyond max_entries evicted (one commit for all of
// them). A turn whose round fails or never runs is not lost: it stays
// unread (no extracted_at) and the next round of its conversation, or a
// mira-remember --extract from cron, takes it.
type Curator struct {
	opt CuratorOptions

	mu       sync.Mutex
	dirty    map[string]bool
	running  bool
	closing  bool
	progress chan struct{} // closed and replaced at every change of state
	kick     chan struct{}
	done     chan struct{}
	stop     chan struct{} // closed by Close: the rounds due run at once
	ctx      context.Context
	cancel   context.CancelFunc
}

// NewCurator starts a Curator.
func NewCurator(opt CuratorOptions) *Curator {
	opt.Delay = cmp.Or(opt.Delay, time.Second)
	if opt.Logf == nil {
		opt.Logf = func(string, ...any) {}
	}
	c := &Curator{opt: opt, dirty: map[string]bool{}, progress: make(chan struct{}), kick: make(chan struct{}, 1), done: make(chan struct{}), stop: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.loop()
	return c
}

// Touch says a conversation has new turns.
func (c *Curator) Touch(conv string) {
	c.mu.Lock()
	c.dirty[conv] = true
	c.changed()
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// changed wakes those waiting for a change; the caller holds mu.
func (c *Curator) changed() {
	close(c.progress)
	c.progress = make(chan struct{})
}

// Idle waits until every conversation touched so far has had its round.
func (c *Curator) Idle(ctx context.Context) error {
	c.mu.Lock()
	for len(c.dirty) > 0 || c.running {
		ch := c.progress
		c.mu.Unlock()
		select {
		case <-ch:
		case <-c.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
		c.mu.Lock()
	}
	c.mu.Unlock()
	return nil
}

// Close runs the rounds still due, at once, and stops. When ctx ends
// first, the round under way is cancelled; its turns stay unread for a
// later run.
func (c *Curator) Close(ctx context.Context) error {
	c.mu.Lock()
	if !c.closing {
		close(c.stop)
	}
	c.closing = true
	c.changed()
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
	select {
	case <-c.done:
		return nil
	case <-ctx.Done():
		c.cancel()
		<-c.done
		return ctx.Err()
	}
}

func (c *Curator) loop() {
	defer close(c.done)
	for {
		c.mu.Lock()
		for len(c.dirty) == 0 {
			if c.closing {
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			<-c.kick
			c.mu.Lock()
		}
		closing := c.closing
		c.running = true
		c.mu.Unlock()
		if !closing {
			select {
			case <-time.After(c.opt.Delay):
			case <-c.stop:
			}
		}
		c.mu.Lock()
		convs := slices.Sorted(func(yield func(string) bool) {
			for k := range c.dirty {
				if !yield(k) {
					return
				}
			}
		})
		clear(c.dirty)
		c.mu.Unlock()
		again := c.round(convs)
		c.mu.Lock()
		for _, conv := range again {
			c.dirty[conv] = true
		}
		c.running = false
		c.changed()
		c.mu.Unlock()
		if c.ctx.Err() != nil {
			return
		}
	}
}

// round does the work for convs and returns those with more to do.
func (c *Curator) round(convs []string) (again []string) {
	ctx := c.ctx
	m := c.opt.Memory
	if c.opt.Writer != nil {
		if err := c.opt.Writer.Flush(ctx); err != nil {
			c.opt.Logf("warning: turns not stored before curation: %v", err)
		}
	}
	if c.opt.Extract && c.opt.Chat != nil {
		for _, conv := range convs {
			res, err := m.Extract(ctx, mira.ExtractRequest{Scope: conv, Chat: c.opt.Chat, Source: "conversation " + conv})
			if err != nil {
				if ctx.Err() == nil {
					c.opt.Logf("warning: conversation %s: facts not extracted (tried again after its next turn): %v", conv, err)
				}
				continue
			}
			if res.Left > 0 {
				again = append(again, conv)
			}
		}
	}
	_, err := m.Summarize(ctx, mira.SummarizeOptions{Scopes: convs, Chat: c.opt.Chat, Extractive: c.opt.Chat == nil || c.opt.Extractive})
	if err != nil && ctx.Err() == nil {
		c.opt.Logf("warning: conversations %v: summaries not updated: %v", convs, err)
	}
	return again
}
