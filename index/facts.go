package index

import (
	"slices"
	"strings"
	"sync"
)

// Facts as keys of the turns they came from. A fact extracted from a
// conversation turn says in plain words what the turn only implies:
// "Caroline attended an LGBTQ support group" for "I went to that group
// yesterday, it was so powerful". Such a fact names its turn (Doc.From,
// the store's extracted_from), and the turn is found by the fact's words
// and vector as well as by its own: the fact is an added key of the turn.
//
// The key lives in the fact's row, not in the turn's. A search scores the
// fact as it scores any entry, and a turn it names gets the fact's score
// on top of its own: in BM25, the fact's matched terms are added to the
// turn's as if its text were appended, and in the vector half the turn is
// as near to the query as the nearer of its own vector and its facts'.
// The turn is still what is found and shown, the fact stays an entry of
// its own, and a search for turns only (--kind turn) still sees the facts
// of its scopes. Since nothing of a fact is written into its turn's row, a
// fact added, replaced, forgotten or edited by hand changes its own row
// only, and the turns it names follow at once: there is no second entry to
// keep in step, and no way for a crash to leave a turn keyed by a fact
// that is gone. A fact naming an id that is not (or no longer) in the
// index is an entry like any other.
//
// Only the facts of the scopes a search covers count: a fact in another
// scope never moves a turn.

// The weights of a fact against its turn's own words and vector, decided
// on LoCoMo (docs/performance.md, "Facts as keys"): BM25 of the fact's
// terms counts this much of the turn's own, and the cosine of its vector
// this much of the turn's.
var (
	factLexWeight = 0.5
	factVecWeight = 1.0
)

// setFrom records the ids row i names (copies) and reports whether there
// are any.
func (vs *vecStore) setFrom(i int, from []string) bool {
	if len(from) == 0 {
		if vs.from != nil {
			delete(vs.from, int32(i))
		}
		return false
	}
	if vs.from == nil {
		vs.from = map[int32][]string{}
	}
	// The ids may be cut from a file's bytes: copied, they outlive it.
	own := make([]string, len(from))
	for j, id := range from {
		own[j] = strings.Clone(id)
	}
	vs.from[int32(i)] = own
	return true
}

// fromOf returns the ids row i names, nil for none.
func (vs *vecStore) fromOf(i int) []string {
	if !vs.rows[i].linked {
		return nil
	}
	return vs.from[int32(i)]
}

// linkTable is the rows each live linked row names, worked out once per
// store (a change makes a new one).
type linkTable struct {
	once    sync.Once
	targets map[int32][]int32 // linked row → the live rows of the ids it names
}

// linkTargets returns the rows each live linked row names (nil when no
// live row names another).
func (vs *vecStore) linkTargets() map[int32][]int32 {
	if len(vs.from) == 0 {
		return nil
	}
	lt := vs.links
	if lt == nil {
		lt = &linkTable{} // a store not searched twice
	}
	lt.once.Do(func() {
		want := map[string][]int32{}
		for r, ids := range vs.from {
			if vs.rows[r].dead {
				continue
			}
			for _, id := range ids {
				want[id] = nil
			}
		}
		if len(want) == 0 {
			return
		}
		for i := range vs.rows {
			r := &vs.rows[i]
			if r.dead {
				continue
			}
			if rows, ok := want[r.id]; ok {
				want[r.id] = append(rows, int32(i))
			}
		}
		for r, ids := range vs.from {
			if vs.rows[r].dead {
				continue
			}
			var to []int32
			for _, id := range ids {
				for _, t := range want[id] {
					if t != r && !slices.Contains(to, t) {
						to = append(to, t)
					}
				}
			}
			if len(to) > 0 {
				if lt.targets == nil {
					lt.targets = map[int32][]int32{}
				}
				lt.targets[r] = to
			}
		}
	})
	return lt.targets
}

// linkedFilter is newRowFilter, letting through only the rows that name
// others when linked is set.
func linkedFilter(vs *vecStore, q Query, linked bool) *rowFilter {
	f := newRowFilter(vs, q)
	if linked {
		if f == nil {
			f = &rowFilter{tagPool: vs.tagPool}
		}
		f.linked = true
	}
	return f
}

// keyFilter is the filter a fact must pass to count for a turn the
// query's filter lets through: the same scopes; kinds, tags and times are
// the turn's to pass.
func (f *rowFilter) keyFilter() *rowFilter {
	if f == nil || f.scopes == nil {
		return nil
	}
	return &rowFilter{scopes: f.scopes, tagPool: f.tagPool}
}

// factKey is the best fact of a turn found by words: its summed term
// scores and the number of query terms it matched.
type factKey struct {
	acc     float64
	matched float64
}

// lexKeys returns, for each row that a fact scored by words names, the
// best such fact (by its own BM25 score), given the summed term scores
// and terms matched of the rows touched; nil when no fact scored.
// score(acc, matched) is a row's own BM25 score.
func (vs *vecStore) lexKeys(touched []uint32, f *rowFilter, acc func(int) (float64, float64), score func(a, m float64) float64) map[int]factKey {
	targets := vs.linkTargets()
	if targets == nil {
		return nil
	}
	kf := f.keyFilter()
	var keys map[int]factKey
	for _, d := range touched {
		r := &vs.rows[d]
		if !r.linked || (kf != nil && !kf.pass(r)) {
			continue
		}
		to := targets[int32(d)]
		if len(to) == 0 {
			continue
		}
		a, m := acc(int(d))
		k := factKey{factLexWeight * a, factLexWeight * m}
		if k.acc <= 0 {
			continue
		}
		s := score(k.acc, k.matched)
		for _, t := range to {
			if keys == nil {
				keys = map[int]factKey{}
			}
			if old, ok := keys[int(t)]; !ok || s > score(old.acc, old.matched) {
				keys[int(t)] = k
			}
		}
	}
	return keys
}

// factHits returns the n facts of q's scopes nearest to the query (rows
// that name others, by the same scan as nearest), nil when the store has
// none.
func (vq *vecQuery) factHits(q Query, n int, minCos float64) ([]vecHit, error) {
	if vq.side.vs.linkTargets() == nil || n <= 0 {
		return nil, nil
	}
	return vq.nearestIn(Query{Scopes: q.Scopes}, true, n, minCos)
}

// withKeys returns pool (the n nearest rows q's filters let through, best
// first) with the rows that facts (factHits) name moved up to their
// nearest fact's cosine times factVecWeight, where that is nearer than
// their own.
func (vq *vecQuery) withKeys(q Query, pool, facts []vecHit, n int, minCos float64) []vecHit {
	if len(facts) == 0 {
		return pool
	}
	vs := vq.side.vs
	targets := vs.linkTargets()
	f := newRowFilter(vs, q)
	best := map[int]float64{}
	for _, h := range facts {
		c := factVecWeight * h.cos
		for _, t := range targets[int32(h.row)] {
			r := &vs.rows[t]
			if r.dead || r.vec < 0 || (f != nil && !f.pass(r)) {
				continue
			}
			best[int(t)] = max(best[int(t)], c)
		}
	}
	if len(best) == 0 {
		return pool
	}
	out := slices.Clone(pool)
	for t, c := range best {
		if at := slices.IndexFunc(out, func(h vecHit) bool { return h.row == t }); at >= 0 {
			if out[at].cos >= c {
				continue
			}
			out = slices.Delete(out, at, at+1)
		} else {
			c = max(c, dot(vq.vec, vq.exact(t)))
		}
		if c > minCos {
			out = insertTop(out, vecHit{row: t, cos: c}, n)
		}
	}
	return out
}
