package mira

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/extract"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/secret"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
)

// How Extract keeps track of what it has read: a stored user turn it has
// taken facts from (none included) gets the front matter field
// extracted_at, the time of that run, in the run's commit. Without turns
// given, Extract takes the scope's user turns without that field, oldest
// first, so a conversation is read in the order it was held and later
// facts reconcile with earlier ones; running it again (from cron) goes on
// where it stopped. A fact taken from a stored turn names it in
// extracted_from. Turns given by the caller are not tracked.

// fieldExtractedAt marks a turn extraction has read; a fact names its
// turn in fieldExtractedFrom (source.go), which the index also reads.
const fieldExtractedAt = "extracted_at"

// sourceExtract is the source field of extracted memories.
const sourceExtract = "extract"

// reconcileKinds are the kinds a new fact is compared with: memories, not
// turns or summaries.
var reconcileKinds = []string{mem.KindFact, mem.KindPreference, mem.KindDecision, mem.KindCorrection, mem.KindGoal, mem.KindTask, mem.KindNote}

// ExtractRequest is what an Extract reads and how.
type ExtractRequest struct {
	// Turns are the conversation to take facts from; nil means the
	// scope's stored user turns not read before (each with the assistant
	// message it answers), oldest first.
	Turns []extract.Turn
	// Source names the input in the commit's Mira-Source trailer; the
	// scope when the turns come from the store.
	Source string
	// Scope the facts go to (and stored turns come from); default global.
	Scope string
	// AlsoScopes are more scopes whose memories the facts are reconciled
	// with, besides Scope: where the conversation's other writers (an
	// agent's remember tool) put memories, so that a fact already
	// stored there is not stored again. A fact that updates a memory of
	// one of them replaces it in that scope.
	AlsoScopes []string
	// MaxTurns bounds the stored user turns read in one run; zero means
	// 50, and a negative number is refused.
	MaxTurns int
	// Kind, when set, is the kind of every extracted memory.
	Kind string
	// Tags are attached to every extracted memory.
	Tags []string
	// AllowSecret keeps facts that look like credentials.
	AllowSecret bool
	// DryRun asks the model and writes nothing.
	DryRun bool
	// Chat is the model; nil means the configured one (NewChatModel).
	Chat *llm.Client
}

// ExtractResult is what an Extract did.
type ExtractResult struct {
	// Added are the memories stored.
	Added []*mem.Entry
	// Ops are every decision, as --dry-run prints them.
	Ops []mem.Op
	// Facts is the number of facts the model proposed and kept.
	Facts int
	// Counts are the decisions by op: add, update, delete, none.
	Counts map[string]int
	// TurnsRead is the number of stored user turns read; Left those still
	// waiting for the next run.
	TurnsRead, Left int
	// Commit is the commit made, if any.
	Commit string
}

// Extract asks the chat model for standalone facts in a conversation (0-3
// per user message) and reconciles each with its nearest memories in the
// scope: ADD, UPDATE or DELETE (tombstones with replaced_by), or NONE, in
// one commit. All the model's work is done before the store lock is taken,
// so a slow model never keeps other writers waiting; what it decided is
// checked against the store again under the lock. A fact is never lost to
// a failed or delete-only answer.
func (m *Memory) Extract(ctx context.Context, req ExtractRequest) (*ExtractResult, error) {
	if err := req.Check(m.opt.Project); err != nil {
		return nil, err
	}
	scope := cmp.Or(req.Scope, mem.DefaultScope)
	model := req.Chat
	if model == nil {
		var err error
		if model, err = NewChatModel("", m.cfg, m.opt.Getenv); err != nil {
			return nil, err
		}
		if model == nil {
			return nil, invalidf("extraction needs a chat model and none is configured: set MIRA_MODEL (or llm.model in the config), and OPENAI_BASE_URL for a server other than OpenAI (e.g. http://localhost:11434/v1 for Ollama)")
		}
	}
	st := m.st
	res := &ExtractResult{Counts: map[string]int{}}
	turns, src := req.Turns, req.Source
	var stored []*mem.Entry // the stored user turns read, when input came from the store
	if turns == nil {
		var err error
		turns, stored, res.Left, err = unextractedTurns(st, scope, cmp.Or(req.MaxTurns, 50), m.warn)
		if err != nil {
			return nil, err
		}
		res.TurnsRead = len(stored)
		if len(stored) == 0 {
			return res, nil
		}
		src = scope
	}
	x := &extract.Extractor{
		LLM:   model,
		NewID: func() string { return st.NewID(st.Now()) },
		Now:   st.Now,
		Warn:  func(err error) { m.warn("", err) },
	}
	facts, err := x.Facts(ctx, turns)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("extraction failed, nothing was written: %w", err)
	}
	facts = m.screenFacts(facts, req)
	res.Facts = len(facts)
	paths := map[string]string{} // id → path of the memories shown to the model
	x.Neighbours = m.neighbours(reconcileScopes(scope, req.AlsoScopes), paths)
	actions, err := x.Reconcile(ctx, facts)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reconciliation failed, nothing was written: %w", err)
	}
	ap := &extractApply{m: m, req: req, st: st, scope: scope, project: m.opt.Project, paths: paths, model: model.Model(), source: src, client: model, res: res}
	if err := ap.run(ctx, actions, stored); err != nil {
		return nil, err
	}
	return res, nil
}

// Check validates the request as Extract does before it asks the model,
// without a store: a front end calls it before it opens (and perhaps
// creates) one, so that refused input leaves nothing behind. project is
// the one the memories get (Options.Project). Besides MaxTurns, the
// scope and kind, what every extracted memory gets beside its text (the
// tags and the project) is screened for secrets as Remember screens them, unless
// AllowSecret; the text is screened fact by fact, and each memory is
// checked whole again before it is written.
func (req ExtractRequest) Check(project string) error {
	if req.MaxTurns < 0 {
		return invalidField("max_turns", errors.New("must be at least 1"))
	}
	if err := mem.ValidScope(cmp.Or(req.Scope, mem.DefaultScope)); err != nil {
		return invalidField("scope", err)
	}
	for _, sc := range req.AlsoScopes {
		if err := mem.ValidScope(sc); err != nil {
			return invalidField("scope", err)
		}
	}
	if req.Kind != "" && !slices.Contains(extract.Kinds, req.Kind) {
		return invalidField("kind", fmt.Errorf("%s cannot be extracted: extracted memories are %s", req.Kind, strings.Join(extract.Kinds, ", ")))
	}
	if !req.AllowSecret {
		if f := scanEntry(&mem.Entry{Tags: cleanTags(req.Tags), Project: project}); len(f) > 0 {
			return &InvalidError{Err: &SecretError{Findings: f}}
		}
	}
	return nil
}

// unextractedTurns returns, oldest first, at most limit of the scope's user
// turns that carry no extracted_at, as the turns to extract from (each
// preceded by the assistant message it answers, for context), the entries
// themselves, and how many more are waiting.
func unextractedTurns(st *mem.Store, scope string, limit int, warn func(string, error)) ([]extract.Turn, []*mem.Entry, int, error) {
	users, err := readScopeTurns(st, scope, "user", warn)
	if err != nil {
		return nil, nil, 0, err
	}
	var pending []*mem.Entry
	for _, e := range users {
		if _, done := e.Fields()[fieldExtractedAt]; !done {
			pending = append(pending, e)
		}
	}
	if len(pending) == 0 {
		return nil, nil, 0, nil
	}
	left := max(0, len(pending)-limit)
	pending = pending[:min(len(pending), limit)]
	others, err := readScopeTurns(st, scope, "assistant", warn)
	if err != nil {
		return nil, nil, 0, err
	}
	var turns []extract.Turn
	for _, u := range pending {
		// The assistant message this one answers: the last one before it,
		// if no other user message came in between.
		var prevUser *mem.Entry
		if i := slices.Index(users, u); i > 0 {
			prevUser = users[i-1]
		}
		var answered *mem.Entry
		for _, a := range others {
			if !turnBefore(a, u) {
				break
			}
			if prevUser == nil || turnBefore(prevUser, a) {
				answered = a
			}
		}
		if answered != nil {
			turns = append(turns, extract.Turn{ID: answered.ID, Role: "assistant", Text: answered.Body, Time: answered.CreatedAt})
		}
		turns = append(turns, extract.Turn{ID: u.ID, Role: "user", Text: u.Body, Time: u.CreatedAt})
	}
	return turns, pending, left, nil
}

// readScopeTurns reads the scope's live turns of a role, in the order they
// were written. Broken files are reported and skipped.
func readScopeTurns(st *mem.Store, scope, role string, warn func(string, error)) ([]*mem.Entry, error) {
	paths, err := st.TurnPaths(scope, role)
	if err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	var out []*mem.Entry
	for _, e := range st.ReadAll(paths, func(err error) { warn("", err) }) {
		if e.Kind == mem.KindTurn && !e.Deleted() {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b *mem.Entry) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// turnBefore reports whether turn a was written before turn b.
func turnBefore(a, b *mem.Entry) bool {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID)) < 0
}

// screenFacts applies the request's kind and leaves out facts that look
// like secrets (unless allowed), naming the rule.
func (m *Memory) screenFacts(facts []extract.Fact, req ExtractRequest) []extract.Fact {
	out := facts[:0]
	for _, f := range facts {
		if req.Kind != "" {
			f.Kind = req.Kind
		}
		if !req.AllowSecret {
			if found := secret.Scan(f.Text); len(found) > 0 {
				m.warn("", fmt.Errorf("skipping an extracted fact that looks like a secret: %s (use --allow-secret to keep such facts)", found[0]))
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// neighbours finds each fact's nearest memories in the scopes with the same
// hybrid search as Recall, recording their paths.
func (m *Memory) neighbours(scopes []string, paths map[string]string) func(context.Context, []string, int) ([][]extract.Memory, error) {
	return func(ctx context.Context, texts []string, k int) ([][]extract.Memory, error) {
		out := make([][]extract.Memory, len(texts))
		err := m.readIndex(ctx, func(ix *index.Index) error {
			for i, t := range texts {
				out[i] = nil // a second try starts over (readIndex)
				hits, err := ix.Search(index.Query{Text: t, K: k, Scopes: scopes, Kinds: reconcileKinds})
				if err != nil {
					return fmt.Errorf("search: %w", err)
				}
				for _, h := range hits {
					e, err := m.st.Read(h.Path)
					if err != nil {
						m.warn(h.Path, err)
						continue
					}
					if e.Deleted() {
						continue
					}
					paths[e.ID] = e.Path
					out[i] = append(out[i], extract.Memory{ID: e.ID, Kind: e.Kind, Text: e.Body})
				}
			}
			return nil
		})
		return out, err
	}
}

// extractApply writes what reconciliation decided.
type extractApply struct {
	m       *Memory
	req     ExtractRequest
	st      *mem.Store
	scope   string
	project string
	paths   map[string]string
	model   string
	source  string
	client  *llm.Client // for the usage trailer
	res     *ExtractResult
}

func (ap *extractApply) run(ctx context.Context, actions []extract.Action, stored []*mem.Entry) error {
	m, req, st := ap.m, ap.req, ap.st
	if !req.DryRun {
		unlock, err := m.lock(ctx)
		if err != nil {
			return err
		}
		defer unlock()
	}
	if !req.AllowSecret {
		// A reason is written as a tombstone's deleted_reason and may make
		// the commit subject: the model may have quoted a secret in it.
		for i := range actions {
			if secret.Scan(actions[i].Reason) != nil {
				actions[i].Reason = "(the model's reason is left out: it looked like a secret)"
			}
		}
	}
	// Turns another run read while the model was at work are left to it,
	// with everything taken from them.
	var turns []*mem.Entry
	taken := map[string]bool{}
	for _, t := range stored {
		e, err := st.Read(t.Path)
		if err != nil || e.ID != t.ID {
			taken[t.ID] = true
			continue
		}
		if _, done := e.Fields()[fieldExtractedAt]; done {
			m.warn("", fmt.Errorf("turn %s was read by another run meanwhile; its facts are left to that run", t.ID))
			taken[t.ID] = true
			continue
		}
		turns = append(turns, e)
	}
	lk := m.openLookup()
	defer lk.close()

	// A fact that updates a memory of another scope (one of AlsoScopes)
	// takes its place there: a global preference stays global.
	scopeOf := map[string]string{} // new id → its scope, when not ap.scope
	for _, a := range actions {
		if a.Op != extract.OpUpdate || a.Target.ID == "" {
			continue
		}
		if ep, err := mem.ParsePath(ap.paths[a.Target.ID]); err == nil && ep.Scope != "" && ep.Scope != ap.scope {
			scopeOf[a.ID] = ep.Scope
		}
	}
	// First the new memories, so that an update knows whether the memory
	// replacing its target is stored or turned out to be an exact
	// duplicate of one already there.
	newEntry := map[string]*mem.Entry{}
	alias := map[string]string{} // new id → the existing memory it duplicates
	for _, a := range actions {
		if a.Op != extract.OpAdd || taken[a.Fact.Turn] {
			continue
		}
		e := &mem.Entry{ID: a.ID, Kind: a.Kind, Scope: cmp.Or(scopeOf[a.ID], ap.scope), Body: a.Text, Source: sourceExtract,
			Tags: cleanTags(req.Tags), Project: ap.project}
		if !req.AllowSecret && a.Text != a.Fact.Text && secret.Scan(a.Text) != nil {
			// The model merged a secret of the old memory into the new
			// text: store the fact as it was screened instead.
			e.Body = a.Fact.Text
		}
		if a.Fact.Turn != "" {
			e.Extra = map[string]any{fieldExtractedFrom: a.Fact.Turn}
		}
		// The check Remember makes: every field, not only the text.
		if err := check(e, req.AllowSecret); err != nil {
			return fmt.Errorf("extracted fact %q: %w", e.Body, err)
		}
		if dup := lk.duplicate(e); dup != nil {
			alias[a.ID] = dup.ID
			ap.paths[dup.ID] = dup.Path
			continue
		}
		newEntry[a.ID] = e
	}

	tx := st.Begin(req.DryRun)
	var added []*mem.Entry
	counts := ap.res.Counts
	retired := map[string]bool{}
	for _, a := range actions {
		if taken[a.Fact.Turn] {
			continue
		}
		switch a.Op {
		case extract.OpAdd:
			e := newEntry[a.ID]
			if e == nil {
				dup := alias[a.ID]
				tx.Ops = append(tx.Ops, mem.Op{Op: "none", ID: dup, Kind: a.Kind, Scope: ap.scope, Path: ap.paths[dup], Text: a.Text, Reason: "already remembered", Duplicate: dup})
				counts["none"]++
				continue
			}
			if err := tx.Add(e); err != nil {
				tx.Rollback()
				return fmt.Errorf("extracted fact %q: %w", a.Text, err)
			}
			added = append(added, e)
			counts["add"]++
		case extract.OpUpdate, extract.OpDelete:
			by := ""
			if a.Op == extract.OpUpdate {
				if newEntry[a.ID] == nil && alias[a.ID] == "" {
					continue // the replacement is not stored: keep the old one
				}
				by = cmp.Or(alias[a.ID], a.ID)
				if by == a.Target.ID {
					continue // the replacement is the memory itself
				}
			}
			old := ap.live(a.Target.ID)
			if old == nil || retired[old.ID] {
				m.warn("", fmt.Errorf("memory %s changed or went away while the model was deciding; it is left as it is", a.Target.ID))
				continue
			}
			retired[old.ID] = true
			if err := tx.Tombstone(old, a.Reason, by); err != nil {
				tx.Rollback()
				return err
			}
			counts[a.Op]++
		case extract.OpNone:
			op := mem.Op{Op: "none", ID: a.Target.ID, Kind: a.Fact.Kind, Scope: ap.scope, Path: ap.paths[a.Target.ID], Text: a.Fact.Text, Reason: a.Reason}
			if a.Exact {
				op.Duplicate = a.Target.ID
			}
			if a.Target.ID != "" && newEntry[a.Target.ID] != nil {
				op.Path = newEntry[a.Target.ID].Path
			}
			tx.Ops = append(tx.Ops, op)
			counts["none"]++
		}
	}
	res := ap.res
	res.Ops, res.Added = tx.Ops, added
	if req.DryRun {
		return nil
	}
	now := st.Now().UTC().Truncate(time.Second)
	for _, t := range turns {
		if t.Extra == nil {
			t.Extra = map[string]any{}
		}
		t.Extra[fieldExtractedAt] = now
		if err := tx.Rewrite(t); err != nil {
			tx.Rollback()
			return fmt.Errorf("mark turn %s as read: %w", t.ID, err)
		}
	}
	if !tx.Empty() {
		subject := extractSubject(tx.Ops, counts, len(turns))
		trailers := []mem.Trailer{{Key: "Mira-Model", Value: ap.model}, {Key: "Mira-Source", Value: ap.source}}
		if ap.client != nil {
			trailers = append(trailers, UsageTrailers(ap.client)...)
		}
		hash, err := tx.Commit(subject, trailers...)
		if err != nil {
			return err
		}
		res.Commit = hash
	}
	return nil
}

// live returns the live memory with the given id as it is now, or nil.
func (ap *extractApply) live(id string) *mem.Entry {
	if id == "" {
		return nil
	}
	e, err := ap.st.FindID(id, ap.paths[id])
	if err != nil || e.Deleted() {
		return nil
	}
	return e
}

// extractSubject is the commit subject of an extraction, e.g.
// `extract: 2 memories (1 fact, 1 preference); 1 updated, 1 deleted`.
func extractSubject(ops []mem.Op, counts map[string]int, turns int) string {
	var adds []mem.Op
	for _, op := range ops {
		if op.Op == "add" {
			adds = append(adds, op)
		}
	}
	var s string
	if len(adds) > 0 {
		s = mem.Subject("extract", adds)
	} else {
		s = "extract: nothing new"
	}
	var more []string
	if n := counts["update"]; n > 0 {
		more = append(more, fmt.Sprintf("%d updated", n))
	}
	if n := counts["delete"]; n > 0 {
		more = append(more, fmt.Sprintf("%d deleted", n))
	}
	switch {
	case turns == 1:
		more = append(more, "1 turn read")
	case turns > 1:
		more = append(more, fmt.Sprintf("%d turns read", turns))
	}
	if len(more) > 0 {
		s += "; " + strings.Join(more, ", ")
	}
	return s
}

// reconcileScopes is scope and then the other scopes, each once.
func reconcileScopes(scope string, also []string) []string {
	out := []string{scope}
	for _, s := range also {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
