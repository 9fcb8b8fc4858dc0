package mira

import (
	"slices"
	"strings"
	"sync"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/text"
	"github.com/miramem/mira/mem"
)

// storeSource shows the store to the index.
type storeSource struct {
	st    *mem.Store
	turns *turnCache
}

func newSource(st *mem.Store) storeSource { return storeSource{st: st, turns: &turnCache{}} }

// turnCache holds each scope's turn order, listed from the turns
// directories once per index open: loading a turn needs the one before it.
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
		paths, _ := s.st.TurnPaths(scope) // what can be listed
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

func (s storeSource) Load(p string) (index.Doc, error) { return s.LoadSized(p, -1) }

// LoadSized is Load of a file the stat pass found to hold size bytes (see
// mem.Store.ReadSized).
func (s storeSource) LoadSized(p string, size int64) (index.Doc, error) {
	e, err := s.st.ReadSized(p, size)
	if err != nil {
		return index.Doc{}, err
	}
	return s.doc(p, e), nil
}

// List lists the entry files without their stat data, which LoadStat
// takes from the open file (see index.ListFiles).
func (s storeSource) List() ([]index.FileStat, error) { return index.ListFiles(s.st.Root) }

// LoadStat is Load of a listed file, with its size and time as read.
func (s storeSource) LoadStat(p string) (index.Doc, index.FileStat, error) {
	var d index.Doc
	fi, err := s.st.ReadStatUse(p, func(e *mem.Entry) error {
		d = s.doc(p, e)
		return nil
	})
	st := index.FileStat{Path: p, Size: fi.Size, ModTime: fi.ModTime}
	if err != nil {
		return index.Doc{}, st, err
	}
	return d, st, nil
}

// doc is the document of the entry e read at p: a turn's with the turn
// before it as its context.
func (s storeSource) doc(p string, e *mem.Entry) index.Doc {
	d := docOf(e)
	if e.Kind == mem.KindTurn && s.turns != nil {
		if prev := s.previous(p); prev != "" {
			if pe, err := s.st.Read(prev); err == nil && pe.Kind == mem.KindTurn && !pe.Deleted() {
				d.Context = text.Cut(pe.Body, maxContextBytes)
			}
		}
	}
	return d
}

// docOf is what the index sees of an entry. The tags are searched along
// with the text: a memory tagged "auth" should answer the query "auth" even
// when its text says "Authentication".
func docOf(e *mem.Entry) index.Doc {
	text := text.Cut(e.Body, maxIndexedBytes)
	if len(e.Tags) > 0 {
		text += "\n" + strings.Join(e.Tags, " ")
	}
	return index.Doc{
		ID: e.ID, Path: e.Path, Kind: e.Kind, Scope: e.Scope, Project: e.Project, Role: e.Role,
		Source: e.Source, Pin: e.Pin, Tags: e.Tags, Text: text, CreatedAt: e.CreatedAt,
		Hash: mem.ContentHash(e.Body), From: extractedFrom(e),
	}
}

// fieldExtractedFrom is the front matter field naming the turns an
// extracted fact was taken from: extraction writes it, the index keys
// those turns by the entry.
const fieldExtractedFrom = "extracted_from"

// maxFromIDs bounds the turns one entry is a key of: extraction names one,
// and a hand-written list of thousands must not make every search pay.
const maxFromIDs = 16

// extractedFrom returns the ids an entry's extracted_from names: one id,
// or a list of them (a fact drawn from several turns), as the index keys
// those turns by the entry (index/facts.go). Values of any other shape
// are not ids and are left out; so is a turn's own id.
func extractedFrom(e *mem.Entry) []string {
	if e.Kind == mem.KindTurn {
		return nil
	}
	v, ok := e.Fields()[fieldExtractedFrom]
	if !ok {
		return nil
	}
	var ids []string
	add := func(x any) {
		if id, ok := x.(string); ok && mem.ValidID(id) && id != e.ID && !slices.Contains(ids, id) && len(ids) < maxFromIDs {
			ids = append(ids, id)
		}
	}
	switch v := v.(type) {
	case string:
		add(v)
	case []any:
		for _, x := range v {
			add(x)
		}
	}
	return ids
}

// What the index takes from one entry is bounded: a file made by hand may
// be of any size, and a 14 MB note must not cost gigabytes to index, embed
// or search. The text beyond is kept in the file and shown by recall; it
// is only not searched.
const (
	maxIndexedBytes = 256 << 10
	maxContextBytes = 4 << 10 // of the turn before a turn
)
