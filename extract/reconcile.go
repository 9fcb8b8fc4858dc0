package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// localMax is the number of memories of the run itself a fact is compared
// with, besides its neighbours in the store.
const localMax = 3

// Reconcile decides, for each fact, how it changes the memory: it finds the
// fact's nearest memories (Neighbours), asks the model in batches, and
// returns the actions in order. Facts are taken in order, and memories
// added by earlier facts of the run are compared with later ones, so "I
// moved to Berlin" after "I live in Paris" in one conversation replaces it.
//
// Only a failing Neighbours is an error. A failed model call adds its
// batch's facts as they are (reported through Warn): losing what the user
// said to a network error would be worse than a duplicate.
func (x *Extractor) Reconcile(ctx context.Context, facts []Fact) ([]Action, error) {
	if len(facts) == 0 {
		return nil, nil
	}
	if x.LLM == nil {
		return nil, errNoModel
	}
	k := x.K
	if k <= 0 {
		k = DefaultK
	}
	batch := x.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	near := make([][]Memory, len(facts))
	if x.Neighbours != nil {
		texts := make([]string, len(facts))
		for i, f := range facts {
			texts[i] = f.Text
		}
		got, err := x.Neighbours(ctx, texts, k)
		if err != nil {
			return nil, fmt.Errorf("find related memories: %w", err)
		}
		copy(near, got)
	}
	r := &run{x: x, gone: map[string]bool{}, pos: map[string]int{}}
	for lo := 0; lo < len(facts); lo += batch {
		hi := min(lo+batch, len(facts))
		if err := r.batch(ctx, facts[lo:hi], near[lo:hi]); err != nil {
			return nil, err
		}
	}
	var out []Action
	for _, a := range r.actions {
		if a.Op != "" {
			out = append(out, a)
		}
	}
	return out, nil
}

// run is the state of one reconciliation: the actions so far, the memories
// they add (which later facts are compared with) and the memories they
// retire (which later facts must not be compared with again).
type run struct {
	x       *Extractor
	actions []Action        // dropped ones have an empty Op
	local   []Memory        // memories added by this run
	gone    map[string]bool // ids of memories replaced or deleted by this run
	pos     map[string]int  // index in actions of the add of each local memory
}

// batch reconciles a few facts with one model call.
func (r *run) batch(ctx context.Context, facts []Fact, near [][]Memory) error {
	var ask []Fact
	var mems []Memory
	listed := map[string]bool{}
	for i, f := range facts {
		cands := r.candidates(f, near[i])
		if m, why, ok := r.same(f, cands, ask); ok {
			r.add(Action{Op: OpNone, Fact: f, Target: m, Reason: why, Exact: true})
			continue
		}
		ask = append(ask, f)
		for _, m := range cands {
			if !listed[m.ID] {
				listed[m.ID] = true
				mems = append(mems, m)
			}
		}
	}
	if len(ask) == 0 {
		return nil
	}
	if len(mems) == 0 {
		// Nothing to compare with: no call needed.
		for _, f := range ask {
			r.store(f, f.Text)
		}
		return nil
	}
	var raw json.RawMessage
	var ds []decision
	err := r.x.LLM.CompleteJSON(ctx, reconcilePrompt, reconcileMessage(ask, mems), &raw, func() error {
		d, err := parseDecisions(raw, len(ask), len(mems))
		if err != nil {
			return err
		}
		ds = d
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.x.warn(fmt.Errorf("reconcile %d new facts with %d memories: %w; the facts are added as they are", len(ask), len(mems), err))
		for _, f := range ask {
			r.store(f, f.Text)
		}
		return nil
	}
	for i, f := range ask {
		var mine []decision
		for _, d := range ds {
			if d.fact == i {
				mine = append(mine, d)
			}
		}
		r.resolve(f, mine, mems)
	}
	return nil
}

// candidates are the memories a fact is compared with: its neighbours in
// the store that this run has not retired, then the run's own memories
// that share words with it.
func (r *run) candidates(f Fact, near []Memory) []Memory {
	var out []Memory
	for _, m := range near {
		if !r.gone[m.ID] && m.ID != "" {
			out = append(out, m)
		}
	}
	type scored struct {
		m Memory
		s float64
	}
	var loc []scored
	fw := words(f.Text)
	for _, m := range r.local {
		if r.gone[m.ID] {
			continue
		}
		if s := overlap(fw, words(m.Text)); s >= 0.5 {
			loc = append(loc, scored{m, s})
		}
	}
	slices.SortStableFunc(loc, func(a, b scored) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return 0
	})
	for i := 0; i < len(loc) && i < localMax; i++ {
		out = append(out, loc[i].m)
	}
	return out
}

// same returns the candidate that says word for word what f says, if any.
// Facts earlier in the same batch count too: a model asked about the same
// fact twice could answer ADD twice.
func (r *run) same(f Fact, cands []Memory, earlier []Fact) (Memory, string, bool) {
	n := normalize(f.Text)
	for _, m := range cands {
		if normalize(m.Text) == n {
			return m, "already remembered", true
		}
	}
	for _, e := range earlier {
		if normalize(e.Text) == n {
			// The earlier one is stored or settled by the model; this one
			// has nothing of its own to add.
			return Memory{Kind: e.Kind, Text: e.Text}, "repeated in the input", true
		}
	}
	return Memory{}, "", false
}

// resolve turns one fact's decisions into actions.
//
//   - UPDATE: the fact (or the model's merged text) is stored and replaces
//     the memory. Several UPDATEs replace each memory with the one new one.
//   - ADD, or only DELETEs: the fact is stored.
//   - NONE without ADD or UPDATE: nothing is stored.
//   - DELETE: the memory is tombstoned, whatever else was decided.
//
// A memory this run already replaced or deleted cannot be again: an UPDATE
// of it becomes an ADD, a DELETE of it is dropped.
func (r *run) resolve(f Fact, ds []decision, mems []Memory) {
	var updates, deletes []decision
	var none *decision
	add := false
	for i := range ds {
		d := ds[i]
		var m Memory
		if d.memory >= 0 {
			m = mems[d.memory]
		}
		switch d.action {
		case actAdd:
			add = true
		case actUpdate:
			if r.gone[m.ID] || slices.ContainsFunc(updates, func(u decision) bool { return u.memory == d.memory }) {
				add = true
				continue
			}
			updates = append(updates, d)
		case actDelete:
			if r.gone[m.ID] || slices.ContainsFunc(deletes, func(u decision) bool { return u.memory == d.memory }) {
				continue
			}
			deletes = append(deletes, d)
		case actNone:
			if none == nil {
				none = &ds[i]
			}
		}
	}
	// A memory both updated and deleted by this fact is updated: the
	// replacement keeps the link to what it replaced.
	deletes = slices.DeleteFunc(deletes, func(d decision) bool {
		return slices.ContainsFunc(updates, func(u decision) bool { return u.memory == d.memory })
	})
	var newID string
	switch {
	case len(updates) > 0:
		text := f.Text
		if updates[0].text != "" {
			text = updates[0].text
		}
		var targets []Memory
		var reasons []string
		for _, u := range updates {
			targets = append(targets, mems[u.memory])
			reasons = append(reasons, u.reason)
		}
		newID = r.store(f, text)
		for i, m := range targets {
			r.retire(Action{Op: OpUpdate, ID: newID, Fact: f, Target: m, Reason: reasonOr(reasons[i], "updated")})
		}
	case add || len(deletes) > 0 || none == nil:
		newID = r.store(f, f.Text)
	default:
		var m Memory
		if none.memory >= 0 {
			m = mems[none.memory]
		}
		r.add(Action{Op: OpNone, Fact: f, Target: m, Reason: reasonOr(none.reason, "already remembered")})
	}
	for _, d := range deletes {
		why := reasonOr(d.reason, "no longer true")
		if newID != "" {
			why = fmt.Sprintf("%s (contradicted by %s: %q)", why, newID, f.Text)
		}
		r.retire(Action{Op: OpDelete, Fact: f, Target: mems[d.memory], Reason: why})
	}
}

// store adds the fact under a new id and returns the id.
func (r *run) store(f Fact, text string) string {
	id := r.x.NewID()
	r.pos[id] = len(r.actions)
	r.add(Action{Op: OpAdd, ID: id, Text: text, Kind: f.Kind, Fact: f})
	r.local = append(r.local, Memory{ID: id, Kind: f.Kind, Text: text})
	return id
}

// retire records an update or delete of a.Target. A memory added earlier
// in this run is not on disk yet, so it is not written at all: what it
// replaced is replaced by its own replacement instead (update) or deleted
// with the reason (delete).
func (r *run) retire(a Action) {
	x := a.Target.ID
	r.gone[x] = true
	i, ok := r.pos[x]
	if !ok {
		r.add(a)
		return
	}
	r.actions[i].Op = ""
	for j := range r.actions {
		b := &r.actions[j]
		switch {
		case b.Op == OpUpdate && b.ID == x && a.Op == OpUpdate:
			b.ID = a.ID
		case b.Op == OpUpdate && b.ID == x:
			b.Op, b.ID, b.Reason = OpDelete, "", b.Reason+"; then "+a.Reason
		case b.Op == OpNone && b.Target.ID == x && a.Op == OpUpdate:
			b.Target = Memory{ID: a.ID, Kind: a.Fact.Kind, Text: r.actions[r.pos[a.ID]].Text}
		case b.Op == OpNone && b.Target.ID == x:
			b.Target.ID = ""
		}
	}
}

func (r *run) add(a Action) { r.actions = append(r.actions, a) }

func reasonOr(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// normalize is the form in which two texts count as the same fact: case,
// white space and final punctuation aside.
func normalize(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}

// stop words are left out of the overlap between facts; "user" is in every
// fact about the user.
var stop = map[string]bool{
	"the": true, "user": true, "users": true, "and": true, "for": true, "with": true, "that": true,
	"this": true, "has": true, "have": true, "had": true, "was": true, "are": true, "is": true,
	"from": true, "his": true, "her": true, "their": true, "they": true, "not": true, "named": true,
	"called": true, "into": true, "of": true, "to": true, "in": true, "on": true, "a": true, "an": true,
}

// words returns the content words of s.
func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) >= 2 && !stop[w] {
			m[w] = true
		}
	}
	return m
}

// overlap is the share of the smaller set of words found in the other.
func overlap(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	n := 0
	for w := range a {
		if b[w] {
			n++
		}
	}
	return float64(n) / float64(min(len(a), len(b)))
}
