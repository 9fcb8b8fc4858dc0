package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/extract"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/secret"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
)

// How mira-remember --extract keeps track of what it has read: a stored
// user turn it has taken facts from (none included) gets the front matter
// field extracted_at, the time of that run, in the run's commit. Without
// input, --extract takes the scope's user turns without that field, oldest
// first, so a conversation is read in the order it was held and later
// facts reconcile with earlier ones; running it again (from cron) goes on
// where it stopped. A fact taken from a stored turn names it in
// extracted_from. Input on stdin or in arguments is not tracked.

// Front matter fields written by extraction.
const (
	fieldExtractedAt   = "extracted_at"
	fieldExtractedFrom = "extracted_from"
)

// sourceExtract is the source field of extracted memories.
const sourceExtract = "extract"

// reconcileKinds are the kinds a new fact is compared with: memories, not
// turns or summaries.
var reconcileKinds = []string{mem.KindFact, mem.KindPreference, mem.KindDecision, mem.KindCorrection, mem.KindGoal, mem.KindTask, mem.KindNote}

// runExtract is mira-remember --extract: facts from turns, reconciled with
// the memories they touch, in one commit. All the model's work is done
// before the store lock is taken, so that a slow model never keeps other
// writers waiting; what it decided is checked against the store again
// under the lock.
func (c *RememberCmd) runExtract(ctx context.Context, o *IO) error {
	if err := c.checkExtractFlags(); err != nil {
		return err
	}
	model, err := c.chatModel(o)
	if err != nil {
		return err
	}
	scope := cmp.Or(c.Scope, mem.DefaultScope)
	if err := mem.ValidScope(scope); err != nil {
		return usagef("--scope: %v", err)
	}
	turns, src, err := c.extractInput(o)
	if err != nil {
		return err
	}
	st, err := c.openStore(ctx, "mira-remember")
	if err != nil {
		return err
	}
	var stored []*mem.Entry // the stored user turns read, when input came from the store
	if turns == nil {
		var left int
		turns, stored, left, err = unextractedTurns(st, scope, c.MaxTurns, &warnOnce{o: o})
		if err != nil {
			return err
		}
		if len(stored) == 0 {
			if o.ErrTTY {
				o.Warnf("nothing to extract: no user turns in scope %s that were not read before", scope)
			}
			return nil
		}
		if left > 0 && o.ErrTTY {
			o.Warnf("reading the oldest %d of %d new user turns; run again for the rest", len(stored), len(stored)+left)
		}
		src = scope
	}

	x := &extract.Extractor{
		LLM:   model,
		NewID: func() string { return st.NewID(st.Now()) },
		Now:   st.Now,
		Warn:  func(err error) { o.Warnf("warning: %v", err) },
	}
	facts, err := x.Facts(ctx, turns)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("extraction failed, nothing was written: %w", err)
	}
	facts = c.screenFacts(o, facts)
	paths := map[string]string{} // id → path of the memories shown to the model
	x.Neighbours = c.neighbours(o, st, scope, paths)
	actions, err := x.Reconcile(ctx, facts)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("reconciliation failed, nothing was written: %w", err)
	}
	ap := &extractApply{c: c, o: o, st: st, scope: scope, paths: paths, model: model.Model(), source: src, client: model}
	if wd, err := o.Getwd(); err == nil {
		ap.project = mem.DetectProject(wd, o.Getenv("MIRA_PROJECT")).Name
	}
	return ap.run(ctx, actions, stored, len(facts))
}

// checkExtractFlags refuses the options that make no sense with --extract.
func (c *RememberCmd) checkExtractFlags() error {
	for _, f := range []struct {
		set  bool
		name string
	}{{c.Lines, "--lines"}, {c.Replace != "", "--replace"}, {c.Pin != "", "--pin"}, {c.Until != "", "--until"}, {c.Role != "", "--role"}} {
		if f.set {
			return usagef("%s cannot be used with --extract", f.name)
		}
	}
	if c.Kind != "" && !slices.Contains(extract.Kinds, c.Kind) {
		return usagef("--kind %s cannot be used with --extract: extracted memories are %s", c.Kind, strings.Join(extract.Kinds, ", "))
	}
	if c.MaxTurns < 1 {
		return usagef("--max-turns must be at least 1")
	}
	return nil
}

// chatModel returns the configured chat model (see chatClient); --extract
// cannot work without one.
func (c *RememberCmd) chatModel(o *IO) (*llm.Client, error) {
	client, err := chatClient(o, c.Model)
	if err != nil {
		return nil, err
	}
	if client == nil {
		return nil, usagef("--extract needs a chat model and none is configured: set MIRA_MODEL (or pass --model, or llm.model in the config), and OPENAI_BASE_URL for a server other than OpenAI (e.g. http://localhost:11434/v1 for Ollama)")
	}
	return client, nil
}

// extractInput reads the turns to extract from: the arguments as one user
// message, else stdin as JSONL records (with --jsonl, or when its first
// line is a JSON object) or as one plain-text user message. It returns nil
// turns when there is no input, which means the store's turns. src names
// the input for the commit's Mira-Source trailer.
func (c *RememberCmd) extractInput(o *IO) (turns []extract.Turn, src string, err error) {
	if len(c.Text) > 0 {
		if c.JSONL {
			return nil, "", usagef("give the text as arguments or on stdin with --jsonl, not both")
		}
		return []extract.Turn{{Role: "user", Text: strings.Join(c.Text, " ")}}, "arguments", nil
	}
	if o.InTTY {
		if c.JSONL {
			return nil, "", usagef("--jsonl reads stdin, which is a terminal")
		}
		return nil, "", nil
	}
	data, err := io.ReadAll(o.In)
	if err != nil {
		return nil, "", fmt.Errorf("read stdin: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if c.JSONL {
			return nil, "", usagef("nothing to extract: no records on stdin")
		}
		return nil, "", nil
	}
	if !c.JSONL && !firstLineIsObject(data) {
		return []extract.Turn{{Role: "user", Text: string(data)}}, "stdin", nil
	}
	users := 0
	bad := readRecords(bytes.NewReader(data), "<stdin>", true, func(_ int, r mem.Record) error {
		if strings.TrimSpace(r.Text) == "" {
			return errors.New(`field "text" is missing or empty`)
		}
		t := extract.Turn{Role: strings.ToLower(strings.TrimSpace(r.Role)), Text: r.Text}
		if r.CreatedAt != nil {
			t.Time = *r.CreatedAt
		}
		if t.User() {
			users++
		}
		turns = append(turns, t)
		return nil
	})
	if len(bad) > 0 {
		return nil, "", bad[0]
	}
	if users == 0 {
		return nil, "", usagef("nothing to extract: no user messages on stdin (records with role user, or no role)")
	}
	return turns, "stdin", nil
}

// firstLineIsObject reports whether the first non-blank line of data is a
// JSON object: then stdin is read as JSONL, and a bad later line is an
// error rather than plain text.
func firstLineIsObject(data []byte) bool {
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		return line[0] == '{' && json.Unmarshal(line, &obj) == nil
	}
	return false
}

// unextractedTurns returns, oldest first, at most limit of the scope's user
// turns that carry no extracted_at, as the turns to extract from (each
// preceded by the assistant message it answers, for context), the entries
// themselves, and how many more are waiting.
func unextractedTurns(st *mem.Store, scope string, limit int, w *warnOnce) ([]extract.Turn, []*mem.Entry, int, error) {
	users, err := readScopeTurns(st, path.Join("entries", scope, "turns", "user"), w)
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
	others, err := readScopeTurns(st, path.Join("entries", scope, "turns", "assistant"), w)
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

// readScopeTurns reads the live turn files under dir (relative to the
// store), in the order they were written. Broken files are reported and
// skipped.
func readScopeTurns(st *mem.Store, dir string, w *warnOnce) ([]*mem.Entry, error) {
	var out []*mem.Entry
	root := filepath.Join(st.Root, filepath.FromSlash(dir))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		rel, err := filepath.Rel(st.Root, p)
		if err != nil {
			return err
		}
		e, err := st.Read(filepath.ToSlash(rel))
		if err != nil {
			w.warn(filepath.ToSlash(rel), err)
			return nil
		}
		if e.Kind == mem.KindTurn && !e.Deleted() {
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
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

// screenFacts applies --kind and leaves out facts that look like secrets
// (unless --allow-secret), naming the rule.
func (c *RememberCmd) screenFacts(o *IO, facts []extract.Fact) []extract.Fact {
	out := facts[:0]
	for _, f := range facts {
		if c.Kind != "" {
			f.Kind = c.Kind
		}
		if !c.AllowSecret {
			if found := secret.Scan(f.Text); len(found) > 0 {
				o.Warnf("warning: skipping an extracted fact that looks like a secret: %s (use --allow-secret to keep such facts)", found[0])
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// neighbours finds each fact's nearest memories in the scope with the same
// hybrid search as mira-recall, recording their paths.
func (c *RememberCmd) neighbours(o *IO, st *mem.Store, scope string, paths map[string]string) func(context.Context, []string, int) ([][]extract.Memory, error) {
	return func(ctx context.Context, texts []string, k int) ([][]extract.Memory, error) {
		w := &warnOnce{o: o}
		opt, err := indexOptions(o, w, &c.Common)
		if err != nil {
			return nil, err
		}
		opt.Context = ctx
		ix, err := index.Open(newSource(st), opt)
		if err != nil {
			return nil, fmt.Errorf("cannot open index: %w", err)
		}
		defer ix.Close()
		out := make([][]extract.Memory, len(texts))
		for i, t := range texts {
			hits, err := ix.Search(index.Query{Text: t, K: k, Scopes: []string{scope}, Kinds: reconcileKinds})
			if err != nil {
				return nil, fmt.Errorf("search: %w", err)
			}
			for _, h := range hits {
				e, err := st.Read(h.Path)
				if err != nil {
					w.warn(h.Path, err)
					continue
				}
				if e.Deleted() {
					continue
				}
				paths[e.ID] = e.Path
				out[i] = append(out[i], extract.Memory{ID: e.ID, Kind: e.Kind, Text: e.Body})
			}
		}
		return out, nil
	}
}

// extractApply writes what reconciliation decided.
type extractApply struct {
	c       *RememberCmd
	o       *IO
	st      *mem.Store
	scope   string
	project string
	paths   map[string]string
	model   string
	source  string
	client  *llm.Client // for the usage trailer
}

func (ap *extractApply) run(ctx context.Context, actions []extract.Action, stored []*mem.Entry, nFacts int) error {
	c, o, st := ap.c, ap.o, ap.st
	if !c.DryRun {
		lock, err := st.Lock(ctx, c.LockTimeout)
		if err != nil {
			return err
		}
		defer lock.Unlock()
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
			o.Warnf("warning: turn %s was read by another run meanwhile; its facts are left to that run", t.ID)
			taken[t.ID] = true
			continue
		}
		turns = append(turns, e)
	}
	ix := openIndexQuiet(st, o, &c.Common)
	defer ix.close()

	// First the new memories, so that an update knows whether the memory
	// replacing its target is stored or turned out to be an exact
	// duplicate of one already there.
	newEntry := map[string]*mem.Entry{}
	alias := map[string]string{} // new id → the existing memory it duplicates
	for _, a := range actions {
		if a.Op != extract.OpAdd || taken[a.Fact.Turn] {
			continue
		}
		e := &mem.Entry{ID: a.ID, Kind: a.Kind, Scope: ap.scope, Body: a.Text, Source: sourceExtract,
			Tags: cleanTags(c.Tag), Project: ap.project}
		if !c.AllowSecret && a.Text != a.Fact.Text && secret.Scan(a.Text) != nil {
			// The model merged a secret of the old memory into the new
			// text: store the fact as it was screened instead.
			e.Body = a.Fact.Text
		}
		if a.Fact.Turn != "" {
			e.Extra = map[string]any{fieldExtractedFrom: a.Fact.Turn}
		}
		if dup := ix.duplicate(st, e); dup != nil {
			alias[a.ID] = dup.ID
			ap.paths[dup.ID] = dup.Path
			continue
		}
		newEntry[a.ID] = e
	}

	tx := st.Begin(c.DryRun)
	var added []*mem.Entry
	counts := map[string]int{}
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
				o.Warnf("warning: memory %s changed or went away while the model was deciding; it is left as it is", a.Target.ID)
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
	if c.DryRun {
		return writeOps(o, tx.Ops)
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
			trailers = append(trailers, usageTrailers(ap.client)...)
		}
		if _, err := tx.Commit(subject, trailers...); err != nil {
			return err
		}
	}
	if o.ErrTTY {
		o.Warnf("%d facts: %d added, %d updated, %d deleted, %d already known", nFacts, counts["add"], counts["update"], counts["delete"], counts["none"])
	}
	return writeEntries(o, c.Output, added)
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
