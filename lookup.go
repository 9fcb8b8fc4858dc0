package mira

import (
	"context"
	"path/filepath"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/mem"
)

// lookup is a best-effort index for writers that only use it to look
// things up (the duplicate check, finding an id): when the index cannot be
// had they fall back to reading files.
type lookup struct {
	f     *index.Finder
	st    *mem.Store
	since []string // entry paths committed since the index was updated
	// kinds holds, without an index, the paths of each scope and kind's
	// files by the hash of their text, read once for all the entries
	// of a call (a bulk load's million each had listed the directory).
	kinds map[[2]string]map[string][]string
}

// lockLookup readies a writer: it takes the store's lock, unless dryRun
// (a dry run writes nothing and waits for no one), then opens the lookup
// by id (see openLookup). done lets go of both.
func (m *Memory) lockLookup(ctx context.Context, dryRun bool) (lk *lookup, done func(), err error) {
	unlock := func() {}
	if !dryRun {
		if unlock, err = m.lock(ctx); err != nil {
			return nil, nil, err
		}
	}
	lk = m.openLookup()
	return lk, func() { lk.close(); unlock() }, nil
}

// Get returns the live memory with the given id. An unknown id makes an
// error matching fs.ErrNotExist; a malformed one an *InvalidError.
func (m *Memory) Get(ctx context.Context, id string) (*mem.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lk := m.openLookup()
	defer lk.close()
	e, err := m.st.FindID(id, lk.pathOf(id))
	if err != nil {
		if !mem.ValidID(id) {
			return nil, &InvalidError{Err: err}
		}
		return nil, err
	}
	return e, nil
}

// openLookup reads the index's rows as they are, for lookups by writers: a
// writer must stay cheap, so it neither updates the index before nor after
// its commit (the next reader, or the server, brings it up to date in one
// batch), nor opens the search index or waits for its lock. What was
// committed since the index was last updated is looked at directly (see
// duplicate); hand edits not yet committed are not.
func (m *Memory) openLookup() *lookup {
	h := &lookup{st: m.st}
	dir := m.indexDir
	if dir == "" {
		dir = filepath.Join(m.st.Root, ".index")
	}
	f, err := index.OpenFinder(dir)
	if err != nil {
		return h
	}
	head, err := m.st.Head()
	if err == nil && head != f.Commit() {
		h.since, err = m.st.Diff(f.Commit(), head)
	}
	if err != nil {
		f.Close()
		return h
	}
	h.f = f
	return h
}

func (h *lookup) close() {
	if h.f != nil {
		h.f.Close()
		h.f = nil
	}
}

func (h *lookup) pathOf(id string) string {
	if h.f == nil {
		return ""
	}
	p, _ := h.f.PathOf(id)
	return p
}

// duplicate returns the live entry in the same scope and kind with the same
// text, or nil. A goal or task is a duplicate only of one as open or as
// closed as itself: a task done once and remembered again (a chore that
// recurs) is a new open task.
func (h *lookup) duplicate(e *mem.Entry) *mem.Entry {
	st := h.st
	hash := mem.ContentHash(e.Body)
	if h.f != nil {
		for _, p := range append(h.f.ByHash(hash), h.since...) {
			d, err := st.Read(p)
			if err == nil && !d.Deleted() && d.Scope == e.Scope && d.Kind == e.Kind && mem.ContentHash(d.Body) == hash && IsClosed(d.Status) == IsClosed(e.Status) {
				return d
			}
		}
		return nil
	}
	// No index: the files of that scope and kind.
	for _, p := range h.kindHashes(e.Scope, e.Kind)[hash] {
		d, err := st.Read(p)
		if err == nil && d.Kind == e.Kind && mem.ContentHash(d.Body) == hash && IsClosed(d.Status) == IsClosed(e.Status) {
			return d
		}
	}
	return nil
}

// kindHashes returns the paths of the files of a scope and kind by the
// hash of their text, reading them the first time it is asked.
func (h *lookup) kindHashes(scope, kind string) map[string][]string {
	key := [2]string{scope, kind}
	if m, ok := h.kinds[key]; ok {
		return m
	}
	m := map[string][]string{}
	paths, _ := h.st.Paths(scope, kind)
	for _, p := range paths {
		if d, err := h.st.Read(p); err == nil {
			hash := mem.ContentHash(d.Body)
			m[hash] = append(m[hash], p)
		}
	}
	if h.kinds == nil {
		h.kinds = map[[2]string]map[string][]string{}
	}
	h.kinds[key] = m
	return m
}
