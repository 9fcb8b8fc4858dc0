package mira

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
	"github.com/miramem/mira/summarize"
)

// SummarizeOptions tune one Summarize.
type SummarizeOptions struct {
	// Scopes to visit; nil visits every scope of the store.
	Scopes []string
	// Kinds of memory summarized; nil means summarize.DefaultKinds (turns
	// and facts).
	Kinds []string
	// MaxEntries is the live entries a scope may hold before its oldest
	// summarized turns and facts are evicted; zero means the
	// configuration's summarize.max_entries, else 500.
	MaxEntries int
	// NoEviction evicts nothing.
	NoEviction bool
	// Chat writes the summaries; nil means the configured chat model
	// (NewChatModel), or the offline extractive summarizer when there is
	// none or Extractive is set. The commit records the tokens this
	// Summarize cost, not what the client spent before.
	Chat *llm.Client
	// Extractive uses the offline extractive summarizer even when a model
	// is configured.
	Extractive bool
	// Through, for one scope, is the id of the last turn or fact to
	// summarize; newer material stays in the buffer.
	Through string
	// DryRun computes the summaries and writes nothing.
	DryRun bool
	// Leave lists turns whose text no summary takes in (summarize.Options.Leave).
	Leave []string
}

// Check validates the options as Summarize does, without a store: a front
// end calls it before it opens one. The error is an *InvalidError naming
// the field at fault (scope, max_entries).
func (opt SummarizeOptions) Check() error {
	for _, s := range opt.Scopes {
		if err := mem.ValidScope(s); err != nil {
			return invalidField("scope", err)
		}
	}
	if opt.MaxEntries < 0 {
		return invalidField("max_entries", errors.New("must be 0 or more"))
	}
	return nil
}

// Summarize rolls the new turns and facts of each scope into hierarchical
// summaries (L1 chunks, L2 groups, the rolling L3) and evicts what a scope
// holds beyond its limit, in one commit. It is idempotent: material
// already summarized is not summarized again.
func (m *Memory) Summarize(ctx context.Context, opt SummarizeOptions) (*summarize.Result, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	so := summarize.Options{
		MaxEntries:  cmp.Or(opt.MaxEntries, m.cfg.Summarize.MaxEntries, summarize.DefaultMaxEntries),
		LockTimeout: m.opt.LockTimeout,
		DryRun:      opt.DryRun,
		Through:     opt.Through,
		Leave:       opt.Leave,
		Kinds:       opt.Kinds,
		Bad:         func(err error) { m.warn("", err) },
		Lock:        m.lockFile,
	}
	if opt.NoEviction {
		so.MaxEntries = 0
	}
	count, err := m.TokenCounter()
	if err != nil {
		return nil, err
	}
	so.Count = count
	if !opt.Extractive {
		client := opt.Chat
		if client == nil {
			if client, err = NewChatModel("", m.cfg, m.opt.Getenv); err != nil {
				return nil, err
			}
		}
		if client != nil {
			so.Model = client
			before := client.Usage()
			so.Trailers = func() []mem.Trailer { return usageSince(client, before) }
		}
	}
	if opt.DryRun {
		return summarize.Run(ctx, m.st, opt.Scopes, so)
	}
	m.writeMu.Lock()
	res, err := summarize.Run(ctx, m.st, opt.Scopes, so)
	m.writeMu.Unlock()
	if err != nil || res.Commit != "" {
		// A round with nothing due writes nothing, and reads need not
		// wait for the index to take it in.
		m.wrote()
	}
	return res, err
}

// SummaryState is a scope's summary state: its top-level summaries, then
// every turn and fact they do not cover.
func (m *Memory) SummaryState(scope string) ([]*mem.Entry, error) {
	if err := mem.ValidScope(scope); err != nil {
		return nil, invalidField("scope", err)
	}
	state, err := summarize.Load(m.st, scope, nil, func(err error) { m.warn("", err) })
	if err != nil {
		return nil, err
	}
	return append(state.Summaries, state.Buffer...), nil
}

// TokenCounter returns the tokenizer of the context planner
// (context.encoding in the configuration), so that summary thresholds mean
// what a context counts. The encoding is loaded on the first count.
func (m *Memory) TokenCounter() (func(string) int, error) {
	tk, err := plan.NewTokenizer(m.cfg.Context.Encoding)
	if err != nil {
		return nil, &InvalidError{Err: fmt.Errorf("config context.encoding: %w", err)}
	}
	return tk.Count, nil
}
