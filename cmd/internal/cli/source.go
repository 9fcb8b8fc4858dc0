package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/mem"
)

// storeSource shows the store to the index.
type storeSource struct {
	st    *mem.Store
	turns *turnCache
}

func newSource(st *mem.Store) storeSource { return storeSource{st: st, turns: &turnCache{}} }

// turnCache holds each scope's turn order, listed from the turns
// directories once per command: loading a turn needs the one before it.
type turnCache struct {
	mu      sync.Mutex
	byScope map[string]*index.TurnOrder
}

// previous returns the path of the turn before the turn at p, or "".
func (s storeSource) previous(p string) string {
	scope, _, ok := index.TurnKey(p)
	if !ok {
		return ""
	}
	c := s.turns
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.byScope[scope]
	if o == nil {
		var paths []string
		dir := path.Join("entries", scope, "turns")
		roles, _ := os.ReadDir(filepath.Join(s.st.Root, filepath.FromSlash(dir)))
		for _, r := range roles {
			if !r.IsDir() {
				continue
			}
			names, _ := os.ReadDir(filepath.Join(s.st.Root, filepath.FromSlash(dir), r.Name()))
			for _, n := range names {
				paths = append(paths, dir+"/"+r.Name()+"/"+n.Name())
			}
		}
		o = index.NewTurnOrder(paths)
		if c.byScope == nil {
			c.byScope = map[string]*index.TurnOrder{}
		}
		c.byScope[scope] = o
	}
	return o.Previous(p)
}

func (s storeSource) Root() string                           { return s.st.Root }
func (s storeSource) Head() (string, error)                  { return s.st.Head() }
func (s storeSource) Diff(from, to string) ([]string, error) { return s.st.Diff(from, to) }

func (s storeSource) Stat() ([]index.FileStat, error) { return index.StatFiles(s.st.Root) }

func (s storeSource) Load(p string) (index.Doc, error) {
	e, err := s.st.Read(p)
	if err != nil {
		return index.Doc{}, err
	}
	d := docOf(e)
	if e.Kind == mem.KindTurn && s.turns != nil {
		if prev := s.previous(p); prev != "" {
			if pe, err := s.st.Read(prev); err == nil && pe.Kind == mem.KindTurn && !pe.Deleted() {
				d.Context = pe.Body
			}
		}
	}
	return d, nil
}

// docOf is what the index sees of an entry. The tags are searched along
// with the text: a memory tagged "auth" should answer the query "auth" even
// when its text says "Authentication".
func docOf(e *mem.Entry) index.Doc {
	text := e.Body
	if len(e.Tags) > 0 {
		text += "\n" + strings.Join(e.Tags, " ")
	}
	return index.Doc{
		ID: e.ID, Path: e.Path, Kind: e.Kind, Scope: e.Scope, Project: e.Project, Role: e.Role,
		Source: e.Source, Pin: e.Pin, Tags: e.Tags, Text: text, CreatedAt: e.CreatedAt,
		Hash: mem.ContentHash(e.Body),
	}
}

// warnOnce reports each broken file once per command.
type warnOnce struct {
	o    *IO
	mu   sync.Mutex
	seen map[string]bool
}

func (w *warnOnce) warn(path string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	var pe *mem.ParseError
	if errors.As(err, &pe) {
		path = ""
	}
	key := path + "\x00" + err.Error()
	if w.seen[key] || errors.Is(err, fs.ErrNotExist) {
		return
	}
	w.seen[key] = true
	if path != "" {
		w.o.Warnf("warning: %s: %v", path, err)
	} else {
		w.o.Warnf("warning: skipping %v", err)
	}
}

// indexOptions are the options every command opens the index with. All
// of them use the configured embedder: two commands with different ones
// would make the index re-embed the store back and forth.
func indexOptions(o *IO, w *warnOnce, c *Common) (index.Options, error) {
	opt := index.Options{Warn: w.warn, Now: time.Now, LockTimeout: 5 * time.Second, Keep: o.keep}
	if o.ErrTTY {
		opt.Progress = newProgress(o).update
	}
	emb, err := c.embedder(o.Getenv)
	if err != nil {
		return opt, err
	}
	opt.Embedder = emb
	return opt, nil
}

// ixHandle is a best-effort index for commands that only use it to look
// things up (remember's duplicate check, forget's id lookup): when the index
// cannot be had they fall back to reading files.
type ixHandle struct {
	ix    *index.Index
	st    *mem.Store
	o     *IO
	w     *warnOnce
	c     *Common
	since []string // entry paths committed since the index was updated
	err   error
}

// openIndexQuiet opens the index as it is, for lookups by writers: a
// writer must stay cheap, so it neither updates the index before nor after
// its commit (the next reader brings it up to date in one batch). What was
// committed since the index was last updated is looked at directly (see
// duplicate); hand edits not yet committed are not.
func openIndexQuiet(st *mem.Store, o *IO, c *Common) *ixHandle {
	h := &ixHandle{st: st, o: o, w: &warnOnce{o: o}, c: c}
	var opt index.Options
	opt, h.err = indexOptions(o, h.w, c)
	if h.err != nil {
		return h
	}
	opt.NoRefresh = true
	opt.Warn = func(string, error) {} // the next reader reports problems
	h.ix, h.err = index.Open(newSource(st), opt)
	if h.err == nil {
		head, err := st.Head()
		if err == nil && head != h.ix.Commit() {
			h.since, err = st.Diff(h.ix.Commit(), head)
		}
		if err != nil {
			h.ix.Close()
			h.ix, h.err = nil, err
		}
	}
	return h
}

func (h *ixHandle) close() {
	if h != nil && h.ix != nil {
		h.ix.Close()
		h.ix = nil
	}
}

func (h *ixHandle) pathOf(id string) string {
	if h.ix == nil {
		return ""
	}
	p, _ := h.ix.PathOf(id)
	return p
}

// duplicate returns the live entry in the same scope and kind with the same
// text, or nil.
func (h *ixHandle) duplicate(st *mem.Store, e *mem.Entry) *mem.Entry {
	hash := mem.ContentHash(e.Body)
	if h.ix != nil {
		paths, err := h.ix.ByHash(hash)
		if err == nil {
			for _, p := range append(paths, h.since...) {
				d, err := st.Read(p)
				if err == nil && !d.Deleted() && d.Scope == e.Scope && d.Kind == e.Kind && mem.ContentHash(d.Body) == hash {
					return d
				}
			}
			return nil
		}
	}
	// No index: read the files of that scope and kind.
	dir := st.Root + "/" + mem.RelDir(e)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, de := range ents {
		d, err := st.Read(mem.RelDir(e) + "/" + de.Name())
		if err == nil && d.Kind == e.Kind && mem.ContentHash(d.Body) == hash {
			return d
		}
	}
	return nil
}

// reader is what a command that reads the index starts from: the store,
// the index options every command shares, and the warnings sink.
type reader struct {
	st  *mem.Store
	src storeSource
	opt index.Options
	w   *warnOnce
}

// openReader opens the store and prepares the index options.
func (c *Common) openReader(ctx context.Context, o *IO, command string) (*reader, error) {
	if o.ready != nil {
		if err := o.ready(); err != nil {
			return nil, err
		}
	}
	st, err := c.openStore(ctx, command)
	if err != nil {
		return nil, err
	}
	w := &warnOnce{o: o}
	opt, err := indexOptions(o, w, c)
	if err != nil {
		return nil, err
	}
	return &reader{st: st, src: newSource(st), opt: opt, w: w}, nil
}
