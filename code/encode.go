package code

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

// strtab interns the identifiers of the index — names, qualifiers, kinds,
// languages, packages, imports — so that each is kept and stored once.
// It only grows: a state refers to entries by number, and entries a state
// refers to never move. Readers take a snapshot (all) and index it.
type strtab struct {
	mu   sync.Mutex
	ids  map[string]uint32
	list []string
}

func newStrtab() *strtab { return &strtab{ids: map[string]uint32{"": 0}, list: []string{""}} }

func (t *strtab) id(s string) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.idLocked(s)
}

func (t *strtab) idLocked(s string) uint32 {
	if id, ok := t.ids[s]; ok {
		return id
	}
	id := uint32(len(t.list))
	t.ids[s] = id
	t.list = append(t.list, s)
	return id
}

// all returns the entries so far.
func (t *strtab) all() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.list
}

// packRefs turns a parser's references into triples of numbers: name,
// qualifier, and line*2 plus one for a call. The parser's form costs four
// times the memory and far more to store and load.
func packRefs(t *strtab, refs []pRef) []uint32 {
	out := make([]uint32, 0, 3*len(refs))
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range refs {
		c := uint32(0)
		if r.Call {
			c = 1
		}
		out = append(out, t.idLocked(r.Name), t.idLocked(r.Qual), uint32(max(r.Line, 0))<<1|c)
	}
	return out
}

// ref is a reference unpacked.
type ref struct {
	name, qual string
	line       int
	call       bool
}

func unpackRef(names []string, p []uint32, i int) ref {
	return ref{name: names[p[3*i]], qual: names[p[3*i+1]], line: int(p[3*i+2] >> 1), call: p[3*i+2]&1 == 1}
}

// The payload of the index file, written by hand rather than by gob: it
// loads several times faster, and its strings are shared.
//
//	root, head, updated (UnixNano), the string table,
//	files: path, size, mtime, sum, lines, lang, skip, and when parsed:
//	  package, imports, symbols (kind, name, parent, line, end line,
//	  signature, doc, exported), packed references
//	history (gob), ranking model (its binary form)

type encoder struct {
	b      []byte
	tab    *strtab  // base form: strings by number in tab (locked)
	names  []string // delta form: the table packed references point into
	inline bool     // delta form: strings written out
}

func (e *encoder) uint(v uint64)  { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)    { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string)   { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) bytes(b []byte) { e.uint(uint64(len(b))); e.b = append(e.b, b...) }
func (e *encoder) id(s string) {
	if e.inline {
		e.str(s)
		return
	}
	e.uint(uint64(e.tab.idLocked(s)))
}

// encodePayload returns the payload of st after headerSize bytes of room
// for the envelope's header.
func encodePayload(st *state) ([]byte, error) {
	hist, err := st.History.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("encode history: %w", err)
	}
	tab := st.names
	tab.mu.Lock()
	defer tab.mu.Unlock()
	// Intern first, so that the table can be written before the files.
	for _, f := range st.Files {
		tab.idLocked(f.Lang)
		if pf := f.File; pf != nil {
			tab.idLocked(pf.Package)
			for _, s := range pf.Imports {
				tab.idLocked(s)
			}
			for _, s := range pf.Symbols {
				tab.idLocked(string(s.Kind))
				tab.idLocked(s.Name)
				tab.idLocked(s.Parent)
			}
		}
	}
	// Sized once, with room for the envelope's header before and its
	// checksum after: growing tens of megabytes by doubling, then copying
	// them into the envelope, was a fifth of saving.
	size := headerSize + len(hist) + len(st.Rank) + len(st.Root) + len(st.Head) + 64 + sha256.Size
	for _, s := range tab.list {
		size += len(s) + 2
	}
	for _, f := range st.Files {
		size += len(f.Path) + 48 + 5*len(f.Refs)
		if f.File != nil {
			size += 4 * len(f.File.Imports)
			for _, s := range f.File.Symbols {
				size += len(s.Signature) + len(s.Doc) + 16
			}
		}
	}
	e := &encoder{b: make([]byte, headerSize, size), tab: tab}
	e.str(st.Root)
	e.str(st.Head)
	e.int(st.Updated.UnixNano())
	e.uint(uint64(len(tab.list)))
	for _, s := range tab.list {
		e.str(s)
	}
	e.uint(uint64(len(st.Files)))
	for _, f := range st.Files {
		e.file(f)
	}
	e.bytes(hist)
	e.bytes(st.Rank)
	return e.b, nil
}

// file writes one file's record.
func (e *encoder) file(f *fileRec) {
	e.str(f.Path)
	e.int(f.Size)
	e.int(f.Mtime)
	e.b = append(e.b, f.Sum[:]...)
	e.uint(uint64(f.Lines))
	e.id(f.Lang)
	e.str(f.Skip)
	if f.File == nil {
		e.uint(0)
		return
	}
	e.uint(1)
	e.id(f.File.Package)
	e.uint(uint64(len(f.File.Imports)))
	for _, s := range f.File.Imports {
		e.id(s)
	}
	e.uint(uint64(len(f.File.Symbols)))
	for _, s := range f.File.Symbols {
		e.id(string(s.Kind))
		e.id(s.Name)
		e.id(s.Parent)
		e.uint(uint64(max(s.Line, 0)))
		e.uint(uint64(max(s.EndLine, 0)))
		e.str(s.Signature)
		e.str(s.Doc)
		if s.Exported {
			e.uint(1)
		} else {
			e.uint(0)
		}
	}
	e.uint(uint64(len(f.Refs)))
	for i, v := range f.Refs {
		if e.inline && i%3 != 2 {
			e.str(e.names[v])
		} else {
			e.uint(uint64(v))
		}
	}
}

type decoder struct {
	b      []byte
	err    error
	names  []string // base form: the string table
	inline bool     // delta form: strings written out, references interned into tab
	tab    *strtab
}

var errShort = errors.New("payload ends early")

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length, which cannot exceed what is left to read given
// each element takes at least min bytes.
func (d *decoder) count(min int) int {
	n := d.uint()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.err = fmt.Errorf("a count of %d is more than the payload holds", n)
		return 0
	}
	return int(n)
}

func (d *decoder) raw(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.err = errShort
		return nil
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b
}

func (d *decoder) str() string { return string(d.raw(d.count(1))) }

func (d *decoder) id() string {
	if d.inline {
		return d.str()
	}
	i := d.uint()
	if d.err == nil && i >= uint64(len(d.names)) {
		d.err = fmt.Errorf("string %d of %d", i, len(d.names))
		return ""
	}
	return d.names[i]
}

func decodePayload(b []byte) (*state, error) {
	d := &decoder{b: b}
	st := &state{names: newStrtab()}
	st.Root = d.str()
	st.Head = d.str()
	st.Updated = time.Unix(0, d.int()).UTC()
	n := d.count(1)
	if d.err == nil && n == 0 {
		d.err = errors.New("no string table")
	}
	d.names = make([]string, n)
	for i := range n {
		d.names[i] = d.str()
		if d.err != nil {
			break
		}
	}
	if d.err == nil && d.names[0] != "" {
		d.err = errors.New("string table does not start with the empty string")
	}
	st.names.list = d.names
	st.names.ids = make(map[string]uint32, n)
	for i, s := range d.names {
		st.names.ids[s] = uint32(i)
	}
	nf := d.count(20)
	st.Files = make([]*fileRec, 0, nf)
	for range nf {
		if d.err != nil {
			break
		}
		f := d.file()
		if i := len(st.Files); i > 0 && st.Files[i-1].Path >= f.Path {
			d.err = fmt.Errorf("files out of order at %s", f.Path)
		}
		st.Files = append(st.Files, f)
	}
	hist := d.raw(d.count(1))
	st.Rank = d.raw(d.count(1))
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d bytes after the payload", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	st.History = new(hStats)
	if err := st.History.UnmarshalBinary(hist); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return st, nil
}

// file reads one file's record.
func (d *decoder) file() *fileRec {
	f := &fileRec{Path: d.str(), Size: d.int(), Mtime: d.int()}
	copy(f.Sum[:], d.raw(len(f.Sum)))
	f.Lines = int(d.uint())
	f.Lang = d.id()
	f.Skip = d.str()
	if d.uint() != 1 {
		return f
	}
	pf := &pFile{Lang: f.Lang, Package: d.id()}
	ni := d.count(1)
	for range ni {
		pf.Imports = append(pf.Imports, d.id())
	}
	ns := d.count(8)
	pf.Symbols = make([]pSymbol, ns)
	for i := range ns {
		s := &pf.Symbols[i]
		s.Kind = pKind(d.id())
		s.Name = d.id()
		s.Parent = d.id()
		s.Line = int(d.uint())
		s.EndLine = int(d.uint())
		s.Signature = d.str()
		s.Doc = d.str()
		s.Exported = d.uint() == 1
	}
	nr := d.count(1)
	if d.err == nil && nr%3 != 0 {
		d.err = fmt.Errorf("%s: malformed references", f.Path)
	}
	f.Refs = make([]uint32, nr)
	for i := range nr {
		if d.err != nil {
			break
		}
		if d.inline && i%3 != 2 {
			f.Refs[i] = d.tab.id(d.str())
			continue
		}
		v := d.uint()
		if v > 1<<32-1 {
			d.err = fmt.Errorf("reference field %d out of range", v)
		}
		f.Refs[i] = uint32(v)
	}
	if d.err == nil && !d.inline && !refsInTable(f.Refs, len(d.names)) {
		d.err = fmt.Errorf("%s: malformed references", f.Path)
	}
	f.File = pf
	return f
}

func refsInTable(p []uint32, n int) bool {
	for i := 0; i+2 < len(p); i += 3 {
		if int(p[i]) >= n || int(p[i+1]) >= n {
			return false
		}
	}
	return true
}
