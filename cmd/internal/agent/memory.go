package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/mem"
)

// agentLibrary is the store as mira-agent reads and writes it besides the
// conversation: the standing material and recalled memories of the
// context (agentloop.Library), and the remember and recall tools
// (tools.Memory), through the same calls as mira-recall and mira-remember.
type agentLibrary struct {
	m            *mira.Memory
	project      mem.Project
	conversation string
}

// agentRecallKinds are the kinds the agent searches: everything but turns,
// which are the conversation itself.
var agentRecallKinds = []string{mem.KindFact, mem.KindPreference, mem.KindDecision, mem.KindCorrection, mem.KindGoal, mem.KindTask, mem.KindNote, mem.KindSummary}

func (l *agentLibrary) setProject(p mem.Project) { l.project = p }

// Standing implements agentloop.Library.
func (l *agentLibrary) Standing(ctx context.Context, scopes []string) ([]mem.Record, error) {
	return l.m.Standing(ctx, scopes, time.Now())
}

// Relevant implements agentloop.Library.
func (l *agentLibrary) Relevant(ctx context.Context, text string, k int) ([]mem.Record, error) {
	return l.search(ctx, text, k, agentRecallKinds)
}

// search runs a hybrid search as mira-recall does: every scope, the
// current project favoured, reranked when a rerank endpoint is configured.
func (l *agentLibrary) search(ctx context.Context, text string, k int, kinds []string) ([]mem.Record, error) {
	recs, err := l.m.Recall(ctx, mira.Query{Text: text, K: k, Kinds: kinds, Project: l.project.Name, Mode: "hybrid"})
	if err != nil {
		return nil, err
	}
	for i := range recs {
		recs[i].Why = nil
	}
	return recs, nil
}

// Recall implements tools.Memory: the memories as lines the model can cite.
func (l *agentLibrary) Recall(ctx context.Context, query string, k int) (string, error) {
	recs, err := l.search(ctx, query, k, agentRecallKinds)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range recs {
		date := ""
		if r.CreatedAt != nil {
			date = " · " + r.CreatedAt.Format("2006-01-02")
		}
		fmt.Fprintf(&b, "- [%s · %s%s · scope %s] %s\n", r.Kind, r.ID, date, r.Scope, strings.ReplaceAll(strings.TrimSpace(r.Text), "\n", "\n  "))
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// scopeFor is where a memory of a kind goes: preferences and corrections
// follow the user everywhere (global); the rest belongs to the current
// project, or to global outside any project.
func (l *agentLibrary) scopeFor(kind string) string {
	if kind == mem.KindPreference || kind == mem.KindCorrection {
		return mem.DefaultScope
	}
	if l.project.By == "cwd" {
		return mem.DefaultScope
	}
	if s := agentloop.ProjectScope(l.project); s != "" {
		return s
	}
	return mem.DefaultScope
}

// Remember implements tools.Memory.
func (l *agentLibrary) Remember(ctx context.Context, text, kind string, tags []string) (string, error) {
	e, dup, err := l.remember(ctx, text, kind, tags, "agent")
	if err != nil {
		return "", err
	}
	if dup {
		return fmt.Sprintf("Already remembered as %s (scope %s); not stored twice.", e.ID, e.Scope), nil
	}
	return fmt.Sprintf("Remembered as %s (%s, scope %s).", e.ID, e.Kind, e.Scope), nil
}

// remember stores one memory with mira-remember's checks: no secrets, no
// exact duplicate in the same scope and kind. It returns the stored entry,
// or the duplicate and true.
func (l *agentLibrary) remember(ctx context.Context, text, kind string, tags []string, source string) (*mem.Entry, bool, error) {
	if kind == "" {
		kind = mem.KindNote
	}
	e := &mem.Entry{Kind: kind, Scope: l.scopeFor(kind), Body: text, Tags: tags, Project: l.project.Name, Source: source}
	res, err := l.m.Remember(ctx, []*mem.Entry{e}, mira.RememberOptions{Source: "conversation " + l.conversation})
	if err != nil {
		var inv *mira.InvalidError
		if errors.As(err, &inv) {
			return nil, false, &agentRefusal{err}
		}
		return nil, false, err
	}
	it := res.Items[0]
	return it.Entry, it.Duplicate, nil
}

// agentRefusal is a memory refused for what it holds: empty, or a secret.
type agentRefusal struct{ err error }

func (e *agentRefusal) Error() string { return e.err.Error() }
func (e *agentRefusal) Unwrap() error { return e.err }

// forget tombstones a memory by id.
func (l *agentLibrary) forget(ctx context.Context, id, reason string) (*mem.Entry, error) {
	res, err := l.m.Forget(ctx, []string{id}, mira.ForgetOptions{Reason: reason})
	if err != nil {
		return nil, err
	}
	return res.Entries[0], nil
}
