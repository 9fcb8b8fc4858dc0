package index

import (
	"errors"
	"slices"
)

// ErrNotFound is returned by Finder.PathOf for an id the index does not
// hold.
var ErrNotFound = errors.New("not in the index")

// Commit returns the commit the open index is up to date with ("" before
// the first). With Options.NoRefresh it may be behind the store's HEAD;
// a caller that needs exact answers looks at the paths changed since.
func (ix *Index) Commit() string { return ix.meta.Commit }

// StandingKinds are the kinds that stay in every context while open:
// corrections, goals and tasks.
var StandingKinds = []string{"correction", "goal", "task"}

// Standing returns the paths of the live entries in the given scopes (all
// scopes when none are given) that a context always considers: pinned
// entries of any kind, and entries of the StandingKinds. The caller reads
// the files to check status and pin expiry; n bounds the answer.
func (ix *Index) Standing(scopes []string, n int) ([]string, error) {
	if ix.lk == nil || ix.closed {
		return nil, errors.New("index is closed")
	}
	vs, done, err := ix.rowsFor()
	if err != nil {
		return nil, err
	}
	defer done()
	in := func(set []string, v string) bool { return slices.Contains(set, v) }
	var out []string
	for i := range vs.rows {
		r := &vs.rows[i]
		if r.dead || len(scopes) > 0 && !in(scopes, vs.dict[r.scope]) {
			continue
		}
		if in(StandingKinds, vs.dict[r.kind]) || in([]string{"sticky", "leased"}, vs.dict[r.pin]) {
			out = append(out, r.path)
		}
	}
	slices.Sort(out)
	return out[:min(n, len(out))], nil
}
