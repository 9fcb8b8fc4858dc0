package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/secret"
	"github.com/miramem/mira/mem"
)

// agentLibrary is the store as mira-agent reads and writes it besides the
// conversation: the standing material and recalled memories of the
// context (agentloop.Library), and the remember and recall tools
// (tools.Memory), with the same hybrid search as mira-recall and the same
// checks as mira-remember.
type agentLibrary struct {
	o            *IO
	c            *Common
	st           *mem.Store
	project      mem.Project
	conversation string
	w            *warnOnce
	// keep holds the vectors and the model between the agent's searches
	// (two or more a turn, for a session that lasts hours).
	keep index.Keep
}

// agentRecallKinds are the kinds the agent searches: everything but turns,
// which are the conversation itself.
var agentRecallKinds = []string{mem.KindFact, mem.KindPreference, mem.KindDecision, mem.KindCorrection, mem.KindGoal, mem.KindTask, mem.KindNote, mem.KindSummary}

func (l *agentLibrary) warn() *warnOnce {
	if l.w == nil {
		l.w = &warnOnce{o: l.o}
	}
	return l.w
}

func (l *agentLibrary) setProject(p mem.Project) { l.project = p }

// open opens the index, brought up to date with the store.
func (l *agentLibrary) open(ctx context.Context) (*index.Index, error) {
	opt, err := indexOptions(l.o, l.warn(), l.c)
	if err != nil {
		return nil, err
	}
	opt.Context = ctx
	opt.Keep = &l.keep
	ix, err := index.Open(newSource(l.st), opt)
	if err != nil {
		return nil, fmt.Errorf("cannot open index: %w", err)
	}
	return ix, nil
}

// Standing implements agentloop.Library.
func (l *agentLibrary) Standing(ctx context.Context, scopes []string) ([]mem.Record, error) {
	ix, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	paths, err := ix.Standing(scopes, 1000)
	if err != nil {
		return nil, fmt.Errorf("standing material: %w", err)
	}
	var out []mem.Record
	for _, p := range paths {
		e, err := l.st.Read(p)
		if err != nil {
			l.warn().warn(p, err)
			continue
		}
		// The same rule as mira-context: unexpired pins, and corrections,
		// goals and tasks that are not closed.
		if e.Deleted() || !standingEntry(e, time.Now()) {
			continue
		}
		out = append(out, e.Record())
	}
	return out, nil
}

// Relevant implements agentloop.Library.
func (l *agentLibrary) Relevant(ctx context.Context, text string, k int) ([]mem.Record, error) {
	return l.search(ctx, text, k, agentRecallKinds)
}

// search runs a hybrid search as mira-recall does: every scope, the
// current project favoured, reranked when a rerank endpoint is configured.
func (l *agentLibrary) search(ctx context.Context, text string, k int, kinds []string) ([]mem.Record, error) {
	ix, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	rr, err := reranker(l.o.Getenv)
	if err != nil {
		return nil, err
	}
	q := index.Query{Text: text, K: k, Kinds: kinds, Project: l.project.Name, Now: time.Now()}
	hits, _, err := search(ctx, ix, l.st, q, rr, l.warn())
	if err != nil {
		return nil, err
	}
	out := make([]mem.Record, 0, len(hits))
	for _, h := range hits {
		e, err := l.st.Read(h.Path)
		if err != nil {
			l.warn().warn(h.Path, err)
			continue
		}
		r := e.Record()
		score := round(h.Score, 4)
		r.Score = &score
		out = append(out, r)
	}
	return out, nil
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
	e := &mem.Entry{
		Kind: kind, Scope: l.scopeFor(kind), Body: strings.TrimSpace(text), Tags: cleanTags(tags),
		Project: l.project.Name, Source: source,
	}
	if kind == mem.KindGoal || kind == mem.KindTask {
		e.Status = "open"
	}
	if err := mem.Validate(e); err != nil {
		return nil, false, &agentRefusal{err}
	}
	if f := secret.Scan(e.Body); len(f) > 0 {
		return nil, false, &agentRefusal{fmt.Errorf("refusing to store what looks like a secret (%s, line %d); the store is committed to git and pasted into prompts", f[0].Desc, f[0].Line)}
	}
	lock, err := l.st.Lock(ctx, l.c.LockTimeout)
	if err != nil {
		return nil, false, err
	}
	defer lock.Unlock()
	ix := openIndexQuiet(l.st, l.o, l.c)
	defer ix.close()
	if d := ix.duplicate(l.st, e); d != nil {
		return d, true, nil
	}
	tx := l.st.Begin(false)
	if err := tx.Add(e); err != nil {
		tx.Rollback()
		return nil, false, err
	}
	if _, err := tx.Commit(mem.Subject("remember", tx.Ops), mem.Trailer{Key: "Mira-Source", Value: "conversation " + l.conversation}); err != nil {
		return nil, false, err
	}
	return e, false, nil
}

// agentRefusal is a memory refused for what it holds: empty, or a secret.
type agentRefusal struct{ err error }

func (e *agentRefusal) Error() string { return e.err.Error() }
func (e *agentRefusal) Unwrap() error { return e.err }

// forget tombstones a memory by id.
func (l *agentLibrary) forget(ctx context.Context, id, reason string) (*mem.Entry, error) {
	lock, err := l.st.Lock(ctx, l.c.LockTimeout)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	ix := openIndexQuiet(l.st, l.o, l.c)
	defer ix.close()
	e, err := l.st.FindID(id, ix.pathOf(id))
	if err != nil {
		return nil, err
	}
	tx := l.st.Begin(false)
	if err := tx.Tombstone(e, reason, ""); err != nil {
		tx.Rollback()
		return nil, err
	}
	if _, err := tx.Commit(mem.Subject("forget", tx.Ops), mem.Trailer{Key: "Mira-Reason", Value: reason}); err != nil {
		return nil, err
	}
	return e, nil
}
