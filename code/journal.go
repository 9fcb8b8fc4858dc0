package code

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/miramem/mira/code/rank"
)

// A journal is kept while it stays small; past these it is folded into a
// new base.
const (
	maxJournalFiles = 256
	maxJournalText  = 8 << 20
)

// journal holds the changes made since a base index file: the files'
// records and, for the ranking model, their text.
type journal struct {
	base    [16]byte // identity of the base it applies to
	head    string
	updated time.Time
	hist    []byte // the history's stats when they changed since the base; nil: the base's
	removed map[string]bool
	files   map[string]*jentry
	text    int // bytes of text held
}

// jentry is one changed file: its record, and its text when the ranking
// model must be given it again (put).
type jentry struct {
	rec  *fileRec
	text []byte
	put  bool
}

func newJournal(base [16]byte) *journal {
	return &journal{base: base, removed: map[string]bool{}, files: map[string]*jentry{}}
}

// clone returns a copy that can be changed without changing j.
func (j *journal) clone() *journal {
	c := newJournal(j.base)
	c.head, c.updated, c.hist, c.text = j.head, j.updated, j.hist, j.text
	for p := range j.removed {
		c.removed[p] = true
	}
	for p, e := range j.files {
		c.files[p] = e
	}
	return c
}

func (j *journal) set(e *jentry) {
	p := e.rec.Path
	delete(j.removed, p)
	if old := j.files[p]; old != nil {
		j.text -= len(old.text)
		if !e.put && old.put {
			// Same content, new stat: the text given before still stands.
			e = &jentry{rec: e.rec, text: old.text, put: true}
		}
	}
	j.files[p] = e
	j.text += len(e.text)
}

func (j *journal) remove(p string) {
	if old := j.files[p]; old != nil {
		j.text -= len(old.text)
		delete(j.files, p)
	}
	j.removed[p] = true
}

func (j *journal) full() bool {
	return len(j.files)+len(j.removed) > maxJournalFiles || j.text > maxJournalText
}

// apply replays j onto a state loaded from its base and the base's model.
func (j *journal) apply(st *state, model *rank.Model) error {
	by := make(map[string]*fileRec, len(st.Files)+len(j.files))
	for _, f := range st.Files {
		by[f.Path] = f
	}
	names := st.names.all()
	for p := range j.removed {
		delete(by, p)
		model.Remove(p)
	}
	for p, e := range j.files {
		by[p] = e.rec
		switch {
		case e.rec.Skip != "":
			model.Remove(p)
		case e.put:
			rankPutRec(model, e.rec, e.text, names)
		}
	}
	files := make([]*fileRec, 0, len(by))
	for _, f := range by {
		files = append(files, f)
	}
	sort.Slice(files, func(a, b int) bool { return files[a].Path < files[b].Path })
	st.Files = files
	if j.hist != nil {
		h := new(hStats)
		if err := h.UnmarshalBinary(j.hist); err != nil {
			return fmt.Errorf("history: %w", err)
		}
		st.History = h
	}
	st.Head, st.Updated = j.head, j.updated
	return nil
}

// rankPutRec gives the model a file as the index keeps it, its references
// unpacked again.
func rankPutRec(m *rank.Model, f *fileRec, text []byte, names []string) {
	var pf *pFile
	if file := f.file(); file != nil {
		c := *file
		refs := f.refs()
		c.Refs = make([]pRef, len(refs)/3)
		for i := range c.Refs {
			r := unpackRef(names, refs, i)
			c.Refs[i] = pRef{Name: r.name, Qual: r.qual, Line: r.line, Call: r.call}
		}
		pf = &c
	}
	rankPut(m, f.Path, f.Lang, text, pf)
}

func encodeJournal(j *journal, names []string) []byte {
	e := &encoder{inline: true, names: names}
	e.b = append(e.b, j.base[:]...)
	e.str(j.head)
	e.int(j.updated.UnixNano())
	if j.hist != nil {
		e.uint(1)
		e.bytes(j.hist)
	} else {
		e.uint(0)
	}
	removed := make([]string, 0, len(j.removed))
	for p := range j.removed {
		removed = append(removed, p)
	}
	sort.Strings(removed)
	e.uint(uint64(len(removed)))
	for _, p := range removed {
		e.str(p)
	}
	paths := make([]string, 0, len(j.files))
	for p := range j.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	e.uint(uint64(len(paths)))
	for _, p := range paths {
		je := j.files[p]
		e.file(je.rec)
		if je.put {
			e.uint(1)
			e.bytes(je.text)
		} else {
			e.uint(0)
		}
	}
	return e.b
}

func decodeJournal(b []byte, tab *strtab) (*journal, error) {
	d := &decoder{b: b, inline: true, tab: tab}
	var base [16]byte
	copy(base[:], d.raw(len(base)))
	j := newJournal(base)
	j.head = d.str()
	j.updated = time.Unix(0, d.int()).UTC()
	if d.uint() == 1 {
		j.hist = d.raw(d.count(1))
	}
	nr := d.count(1)
	for range nr {
		j.removed[d.str()] = true
	}
	nf := d.count(20)
	for range nf {
		if d.err != nil {
			break
		}
		e := &jentry{rec: d.file()}
		if d.uint() == 1 {
			e.put = true
			e.text = d.raw(d.count(1))
		}
		if d.err == nil && e.rec.Path == "" {
			d.err = errors.New("a file without a path")
		}
		j.set(e)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d bytes after the payload", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return j, nil
}

// removeJournal removes the journal after a new base made it useless.
func removeJournal(dir string) error {
	err := os.Remove(filepath.Join(dir, journalName))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
