package summarize

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/mem"
)

// Defaults of Options.
const (
	DefaultChunkTokens   = 3000
	DefaultGroupSize     = 5
	DefaultRollingTokens = 1000
	DefaultMaxEntries    = 500
)

// attempts bounds how often Run redoes a scope whose material or summaries
// changed while it was summarizing without the lock.
const attempts = 3

// ErrChanged is the error of a scope skipped because other writers kept
// changing it while it was being summarized.
var ErrChanged = errors.New("scope changed while it was summarized; try again")

// Options configure Run. The zero value summarizes offline with the
// extractive summarizer and evicts nothing.
type Options struct {
	// Model writes the summaries; nil uses the built-in extractive
	// summarizer.
	Model Model
	// Count counts tokens; nil uses ApproxTokens.
	Count func(string) int
	// Kinds of memory that are summarized; nil means DefaultKinds.
	Kinds []string
	// ChunkTokens is the size of the material one L1 summarizes at the
	// detailed and hierarchical levels (default 3,000).
	ChunkTokens int
	// GroupSize is the number of L1 summaries an L2 groups (default 5).
	GroupSize int
	// RollingTokens caps the length of the rolling L3 summary and of L2
	// summaries (default 1,000).
	RollingTokens int
	// MaxEntries is the number of live entries a scope may hold before its
	// oldest covered turns and facts are evicted; 0 evicts nothing.
	MaxEntries int
	// LockTimeout is how long to wait for the store lock.
	LockTimeout time.Duration
	// Lock, if set, takes the store lock for the commit instead of
	// mem.Store.Lock: a process with several writers queues them fairly
	// in front of the lock file.
	Lock func(ctx context.Context) (unlock func(), err error)
	// DryRun plans everything (summaries included) and writes nothing.
	DryRun bool
	// Bad receives files that do not parse; they are skipped.
	Bad func(error)
	// Through, if set, is the id of the last buffered turn or fact to
	// summarize: newer material stays in the buffer (an agent keeps its
	// latest exchanges word for word). An id that is not in the buffer
	// summarizes nothing new. Meant for a run over one scope.
	Through string
	// Leave lists turns or facts whose text no summary takes in: an
	// agent's turns that the user pruned or cleared from what its model
	// sees. They are covered all the same (they leave the buffer with
	// the rest), each by a line that says it was left out, so that the
	// summary shows the model no more than the buffer did.
	Leave []string
	// Trailers, if set, gives extra commit trailers when the run commits,
	// after every model call (the model's token usage, say).
	Trailers func() []mem.Trailer
}

func (o Options) withDefaults() Options {
	if o.Count == nil {
		o.Count = ApproxTokens
	}
	if o.Kinds == nil {
		o.Kinds = DefaultKinds
	}
	if o.ChunkTokens <= 0 {
		o.ChunkTokens = DefaultChunkTokens
	}
	if o.GroupSize <= 1 {
		o.GroupSize = DefaultGroupSize
	}
	if o.RollingTokens <= 0 {
		o.RollingTokens = DefaultRollingTokens
	}
	return o
}

func (o Options) summarizer() summarizer {
	if o.Model != nil {
		return llm{m: o.Model, fallback: extractive{o.Count}, warn: o.Bad}
	}
	return extractive{o.Count}
}

// Result says what a run did (or, dry, would do).
type Result struct {
	// Model is the model that wrote the summaries, or "extractive".
	Model string
	// Scopes lists the scopes that changed or failed, by name.
	Scopes []ScopeResult
	// Ops are the store operations, in the order of the commit.
	Ops []mem.Op
	// Commit is the new commit's hash; empty when nothing was written.
	Commit string
	// Repacked reports whether the store's loose objects were packed.
	Repacked bool
}

// ScopeResult is what happened to one scope.
type ScopeResult struct {
	Scope string
	// Detail is the level chosen for the new material.
	Detail Detail
	// InputTokens counts the new material.
	InputTokens int
	// Summaries are the summaries written, L1 first.
	Summaries []*mem.Entry
	// Replaced is the previous L3, now tombstoned, if any.
	Replaced *mem.Entry
	// Evicted are the turns and facts tombstoned by eviction.
	Evicted []*mem.Entry
	// Err says why the scope was skipped; nil when it was not.
	Err error
}

// Run summarizes the new material of each scope (all scopes when scopes is
// nil) and applies eviction, in one commit. The model runs without the
// store lock; then Run takes the lock, checks that what it summarized is
// still live and that no other summary appeared meanwhile (redoing a scope
// when it changed), and commits. A scope that fails is skipped: the others
// are still committed, and the returned error names it. A run with nothing
// to do takes no lock and makes no commit.
func Run(ctx context.Context, st *mem.Store, scopes []string, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	sum := opt.summarizer()
	res := &Result{Model: sum.name()}
	if scopes == nil {
		var err error
		if scopes, err = st.Scopes(); err != nil {
			return nil, err
		}
	}
	scopes = slices.Compact(slices.Sorted(slices.Values(scopes)))
	plans := map[string]*plan{}
	failed := map[string]error{}
	todo := scopes
	var unlock func()
	defer func() {
		if unlock != nil {
			unlock()
		}
	}()
	for attempt := 1; ; attempt++ {
		for _, sc := range todo {
			d, err := loadScope(st, sc, opt.Kinds, opt.Bad)
			if err != nil {
				failed[sc] = err
				continue
			}
			p, err := makePlan(ctx, d, sum, opt)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				failed[sc] = err
				continue
			}
			plans[sc] = p
		}
		if opt.DryRun {
			for _, p := range plans {
				p.fresh = p.data
			}
			break
		}
		if !slices.ContainsFunc(scopes, func(sc string) bool { return plans[sc] != nil && plans[sc].work(opt) }) {
			return res, scopeErrors(res, failed)
		}
		var err error
		if opt.Lock != nil {
			unlock, err = opt.Lock(ctx)
		} else {
			var l *mem.Lock
			if l, err = st.Lock(ctx, opt.LockTimeout); err == nil {
				unlock = func() { l.Unlock() }
			}
		}
		if err != nil {
			return nil, err
		}
		var stale []string
		for _, sc := range scopes {
			p := plans[sc]
			if p == nil {
				continue
			}
			fresh, err := loadScope(st, sc, opt.Kinds, opt.Bad)
			if err != nil {
				return nil, err
			}
			if !p.valid(fresh) {
				stale = append(stale, sc)
				continue
			}
			p.fresh = fresh
		}
		if len(stale) == 0 {
			break
		}
		if attempt >= attempts {
			for _, sc := range stale {
				failed[sc] = ErrChanged
				delete(plans, sc)
			}
			break
		}
		unlock()
		unlock = nil
		todo = stale
	}

	tx := st.Begin(opt.DryRun)
	now := st.Now()
	for _, sc := range scopes {
		p := plans[sc]
		if p == nil {
			continue
		}
		r, err := p.apply(tx, st, now, opt)
		if err != nil {
			tx.Rollback()
			return nil, fmt.Errorf("scope %s: %w", sc, err)
		}
		if len(r.Summaries) > 0 || len(r.Evicted) > 0 {
			res.Scopes = append(res.Scopes, r)
		}
	}
	res.Ops = tx.Ops
	if opt.DryRun || tx.Empty() {
		return res, scopeErrors(res, failed)
	}
	trailers := []mem.Trailer{{Key: "Mira-Model", Value: res.Model}}
	if opt.Trailers != nil {
		trailers = append(trailers, opt.Trailers()...)
	}
	hash, err := tx.Commit(subject(res), trailers...)
	if err != nil {
		return nil, err
	}
	res.Commit = hash
	if res.Repacked, err = st.MaybeRepack(); err != nil {
		return res, err
	}
	return res, scopeErrors(res, failed)
}

// scopeErrors records the failed scopes in res and joins their errors.
func scopeErrors(res *Result, failed map[string]error) error {
	var errs []error
	for _, sc := range slices.Sorted(func(yield func(string) bool) {
		for k := range failed {
			if !yield(k) {
				return
			}
		}
	}) {
		res.Scopes = append(res.Scopes, ScopeResult{Scope: sc, Err: failed[sc]})
		errs = append(errs, fmt.Errorf("scope %s: %w", sc, failed[sc]))
	}
	slices.SortStableFunc(res.Scopes, func(a, b ScopeResult) int { return strings.Compare(a.Scope, b.Scope) })
	return errors.Join(errs...)
}

// subject is the commit message's first line, e.g.
// "summarize: global: 2 L1, 1 L3, 3 evicted".
func subject(res *Result) string {
	counts := map[string]int{}
	n := 0
	for _, r := range res.Scopes {
		if r.Err != nil {
			continue
		}
		n++
		for _, s := range r.Summaries {
			counts[s.Level]++
		}
		counts["evicted"] += len(r.Evicted)
	}
	var parts []string
	for _, k := range []string{"L1", "L2", "L3", "evicted"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	what := strings.Join(parts, ", ")
	if n == 1 {
		for _, r := range res.Scopes {
			if r.Err == nil {
				return "summarize: " + r.Scope + ": " + what
			}
		}
	}
	return fmt.Sprintf("summarize: %d scopes: %s", n, what)
}

// plan is the work for one scope, made without the lock.
type plan struct {
	model       string     // who writes the summaries
	data        *scopeData // what it was made from
	fresh       *scopeData // the scope re-read under the lock
	detail      Detail
	inputTokens int
	material    []*mem.Entry // the buffer it summarizes
	l1, l2      []*draft
	l3          *draft
	pending     []*mem.Entry // top-level summaries the new L3 folds in
}

// draft is a summary not yet written.
type draft struct {
	level       string
	text        string
	material    []*mem.Entry // L1: the turns and facts it covers
	children    []*draft     // L2: its L1s; L3: the new top-level summaries
	existing    []*mem.Entry // L3: the previous L3 and pending summaries
	from, until time.Time
	in, out     int
	entry       *mem.Entry
}

// work reports whether the plan writes anything.
func (p *plan) work(opt Options) bool {
	return len(p.l1) > 0 || p.l3 != nil || len(p.evictions(p.data, opt)) > 0
}

// valid reports whether the plan still applies to the scope as re-read
// under the lock: the same summaries, and every entry it summarized still
// live, unchanged and uncovered. New material is fine: it stays in the
// buffer.
func (p *plan) valid(fresh *scopeData) bool {
	if len(p.l1) == 0 && p.l3 == nil {
		return true // eviction only, decided on fresh data
	}
	if len(fresh.summaries) != len(p.data.summaries) {
		return false
	}
	for i, s := range fresh.summaries {
		if s.ID != p.data.summaries[i].ID || s.Path != p.data.summaries[i].Path || s.Body != p.data.summaries[i].Body {
			return false
		}
	}
	now := map[string]*mem.Entry{}
	for _, m := range fresh.buffer() {
		now[m.ID] = m
	}
	for _, m := range p.material {
		f := now[m.ID]
		if f == nil || f.Path != m.Path || mem.ContentHash(f.Body) != mem.ContentHash(m.Body) {
			return false
		}
	}
	return true
}

// LeftOut stands in a summary's input for the text of a turn in
// Options.Leave.
const LeftOut = "(left out of the conversation the model sees; kept in the store)"

// makePlan summarizes a scope's buffer: L1 summaries of the new material,
// L2 groups at the hierarchical level, and the L3 that folds them into the
// previous one.
func makePlan(ctx context.Context, d *scopeData, sum summarizer, opt Options) (*plan, error) {
	p := &plan{data: d, model: sum.name()}
	buf := d.buffer()
	if opt.Through != "" {
		i := slices.IndexFunc(buf, func(e *mem.Entry) bool { return e.ID == opt.Through })
		buf = buf[:i+1] // i = -1: nothing
	}
	units := make([]unit, len(buf))
	costs := make([]int, len(buf))
	for i, m := range buf {
		u := unit{label: labelOf(m), text: m.Body, at: m.CreatedAt.UTC().Format("2006-01-02 15:04")}
		if slices.Contains(opt.Leave, m.ID) {
			u.text = LeftOut
		}
		if c := opt.Count(u.text); c > opt.ChunkTokens {
			// One huge tool output must not crowd out the conversation.
			r := []rune(u.text)
			u.text = string(r[:len(r)*opt.ChunkTokens/c]) + " …"
		}
		units[i] = u
		costs[i] = opt.Count(u.label + ": " + u.text)
		p.inputTokens += costs[i]
	}
	p.detail = Choose(p.inputTokens)
	top := []*draft{}
	if p.detail != DetailNone {
		p.material = buf
		for _, c := range chunk(costs, p.detail, opt.ChunkTokens) {
			dr := &draft{level: "L1", material: buf[c[0]:c[1]]}
			for _, n := range costs[c[0]:c[1]] {
				dr.in += n
			}
			dr.from, dr.until = buf[c[0]].CreatedAt, buf[c[0]].CreatedAt
			for _, m := range dr.material {
				dr.from, dr.until = minTime(dr.from, m.CreatedAt), maxTime(dr.until, m.CreatedAt)
			}
			text, err := sum.summarize(ctx, task{level: "L1", detail: p.detail, inputs: units[c[0]:c[1]], target: chunkTarget(p.detail, dr.in)})
			if err != nil {
				return nil, fmt.Errorf("L1 summary: %w", err)
			}
			dr.text, dr.out = text, opt.Count(text)
			p.l1 = append(p.l1, dr)
		}
		top = p.l1
		if p.detail == DetailHierarchical {
			for _, g := range groups(len(p.l1), opt.GroupSize) {
				dr := &draft{level: "L2", children: p.l1[g[0]:g[1]]}
				var in []unit
				for _, c := range dr.children {
					in = append(in, unit{text: c.text})
					dr.in += c.out
				}
				dr.span()
				text, err := sum.summarize(ctx, task{level: "L2", detail: p.detail, inputs: in, target: groupTarget(dr.in, opt.RollingTokens)})
				if err != nil {
					return nil, fmt.Errorf("L2 summary: %w", err)
				}
				dr.text, dr.out = text, opt.Count(text)
				p.l2 = append(p.l2, dr)
			}
			top = p.l2
		}
	}
	prev := d.latestL3()
	for _, s := range d.topLevel() {
		if s != prev {
			p.pending = append(p.pending, s)
		}
	}
	if len(top)+len(p.pending) == 0 || (prev == nil && len(top)+len(p.pending) < 2) {
		return p, nil // nothing to fold, or a lone first summary that is its own rolling summary
	}
	dr := &draft{level: "L3", children: top, existing: p.pending}
	t := task{level: "L3", detail: p.detail}
	if prev != nil {
		dr.existing = append([]*mem.Entry{prev}, p.pending...)
		t.previous = prev.Body
		dr.in += opt.Count(prev.Body)
	}
	for _, s := range p.pending {
		t.inputs = append(t.inputs, unit{text: s.Body})
		dr.in += opt.Count(s.Body)
	}
	for _, c := range top {
		t.inputs = append(t.inputs, unit{text: c.text})
		dr.in += c.out
	}
	t.target = min(opt.RollingTokens, dr.in)
	dr.span()
	text, err := sum.summarize(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("L3 summary: %w", err)
	}
	dr.text, dr.out = text, opt.Count(text)
	p.l3 = dr
	return p, nil
}

// span sets a draft's covers_from and covers_until from what it covers.
func (dr *draft) span() {
	add := func(from, until time.Time) {
		if !from.IsZero() && (dr.from.IsZero() || from.Before(dr.from)) {
			dr.from = from
		}
		if until.After(dr.until) {
			dr.until = until
		}
	}
	for _, c := range dr.children {
		add(c.from, c.until)
	}
	for _, e := range dr.existing {
		add(timeField(e, fieldCoversFrom), coversUntil(e))
	}
}

func labelOf(e *mem.Entry) string {
	if e.Kind == mem.KindTurn {
		if e.Role != "" {
			return e.Role
		}
		return "turn"
	}
	return e.Kind
}

// chunk cuts material (given the token cost of each item) into about
// total/size runs of about the same size, at item boundaries: each cut
// falls at the boundary nearest its share of the total. Brief and standard
// material is one chunk.
func chunk(costs []int, d Detail, size int) [][2]int {
	total := 0
	for _, c := range costs {
		total += c
	}
	if d <= DetailStandard || total <= size {
		return [][2]int{{0, len(costs)}}
	}
	k := min((total+size-1)/size, len(costs))
	var out [][2]int
	start, acc := 0, 0
	for i, c := range costs {
		if len(out) == k-1 {
			break
		}
		want := (len(out) + 1) * total / k
		// Cut before item i when that lands nearer the share than after it.
		if i > start && want-acc <= acc+c-want {
			out = append(out, [2]int{start, i})
			start = i
		}
		acc += c
	}
	return append(out, [2]int{start, len(costs)})
}

// groups splits n items into runs of about size, as even as can be.
func groups(n, size int) [][2]int {
	g := (n + size - 1) / size
	var out [][2]int
	start := 0
	for i := range g {
		k := n / g
		if i < n%g {
			k++
		}
		out = append(out, [2]int{start, start + k})
		start += k
	}
	return out
}

// evictions returns the oldest covered, unpinned turns and facts beyond
// the scope's limit, counting what the plan adds and replaces.
func (p *plan) evictions(d *scopeData, opt Options) []*mem.Entry {
	if opt.MaxEntries <= 0 {
		return nil
	}
	live := d.live + len(p.l1) + len(p.l2)
	if p.l3 != nil {
		live++
		if d.latestL3() != nil {
			live--
		}
	}
	excess := live - opt.MaxEntries
	if excess <= 0 {
		return nil
	}
	summarized := map[string]bool{}
	for _, m := range p.material {
		summarized[m.ID] = true
	}
	var out []*mem.Entry
	for _, m := range d.material {
		if len(out) == excess {
			break
		}
		_, covered := d.coveredBy[m.ID]
		if !slices.Contains(evictable, m.Kind) || m.Pin != "" || !(covered || summarized[m.ID]) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// apply adds the plan's summaries and evictions to tx. Summaries get
// creation times after every existing summary of the scope, so "newer than
// the L3" stays well defined even when runs follow each other within a
// second.
func (p *plan) apply(tx *mem.Tx, st *mem.Store, now time.Time, opt Options) (ScopeResult, error) {
	d := p.fresh
	r := ScopeResult{Scope: d.scope, Detail: p.detail, InputTokens: p.inputTokens}
	at := now.UTC().Truncate(time.Second)
	if last := d.lastSummaryTime(); !last.IsZero() && !at.After(last) {
		at = last.UTC().Truncate(time.Second).Add(time.Second)
	}
	write := func(dr *draft, covers []string) error {
		e := &mem.Entry{
			ID: st.NewID(at), Kind: mem.KindSummary, Scope: d.scope, Level: dr.level, Source: Source,
			CreatedAt: at, Body: dr.text,
			Extra: map[string]any{
				fieldCovers:       covers,
				fieldDetail:       p.detail.String(),
				fieldModel:        p.model,
				fieldInputTokens:  dr.in,
				fieldOutputTokens: dr.out,
			},
		}
		if !dr.from.IsZero() {
			e.Extra[fieldCoversFrom] = dr.from.UTC()
			e.Extra[fieldCoversUntil] = dr.until.UTC()
		}
		dr.entry = e
		if err := tx.Add(e); err != nil {
			return err
		}
		r.Summaries = append(r.Summaries, e)
		return nil
	}
	for _, dr := range p.l1 {
		ids := make([]string, len(dr.material))
		for i, m := range dr.material {
			ids[i] = m.ID
		}
		if err := write(dr, ids); err != nil {
			return r, err
		}
	}
	for _, dr := range p.l2 {
		var ids []string
		for _, c := range dr.children {
			ids = append(ids, c.entry.ID)
		}
		if err := write(dr, ids); err != nil {
			return r, err
		}
	}
	if dr := p.l3; dr != nil {
		var ids []string
		for _, e := range dr.existing {
			ids = append(ids, e.ID)
		}
		for _, c := range dr.children {
			ids = append(ids, c.entry.ID)
		}
		if err := write(dr, ids); err != nil {
			return r, err
		}
		if prev := d.latestL3(); prev != nil {
			if err := tx.Tombstone(prev, "replaced", dr.entry.ID); err != nil {
				return r, err
			}
			r.Replaced = prev
		}
	}
	for _, e := range p.evictions(d, opt) {
		if err := tx.Tombstone(e, ReasonEvicted, ""); err != nil {
			return r, err
		}
		r.Evicted = append(r.Evicted, e)
	}
	return r, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
