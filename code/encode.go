package code

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

// strtab interns the identifiers of the index — names, qualifiers, kinds,
// languages, packages, imports — so that each is kept and stored once.
// It only grows: a state refers to entries by number, and entries a state
// refers to never move. Readers take a snapshot (all) and index it. A
// table read from disk makes its map of ids when first interned into.
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
	if t.ids == nil {
		t.ids = make(map[string]uint32, len(t.list)+len(t.list)/8)
		for i, s := range t.list {
			t.ids[s] = uint32(i)
		}
	}
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

// The payload of the index file, written by hand rather than by gob, and
// laid out so that opening it decodes only what the stat pass and the
// queries' ranking need:
//
//	root, head, updated (UnixNano)
//	the string table: a count, then a length and a table of that many
//	  strings (n+1 uint32 little-endian offsets, then the bytes)
//	files' heads: a count, then for each: path, size, mtime, sum, lines,
//	  lang, skip, and 1 and the counts of definitions and references and
//	  the length of its body when it was parsed, else 0
//	bodies: a length, then each parsed file's body in the order of the
//	  heads: package, imports, symbols (kind, name, parent, line, end
//	  line, signature, doc, exported), packed references
//	history (gob), ranking model (its binary form, read lazily)
//
// A body is decoded the first time its file's definitions or references
// are asked for (fileRec.file, fileRec.refs).

// lazyBody is the encoded body of a file record read from the index file,
// decoded on first need.
type lazyBody struct {
	once  sync.Once
	b     []byte // kept once decoded: a save copies it as it is
	src   *bodySource
	file  *pFile
	refs  []uint32
	nsyms int // its counts, known without decoding it
	nrefs int
}

// bodySource is what the bodies of one index file share: the string table
// they refer to, and the first damage found decoding them.
type bodySource struct {
	names []string
	own   *mapping // the bytes of the bodies
	mu    sync.Mutex
	err   error
}

func (s *bodySource) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// damage returns the first damage found decoding the bodies.
func (s *bodySource) damage() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (l *lazyBody) load(path, lang string) {
	l.once.Do(func() {
		d := &decoder{b: l.b, names: l.src.names}
		var pf *pFile
		var refs []uint32
		if err := safely(func() { pf, refs = d.body(path) }); err != nil {
			d.err, pf = err, &pFile{}
		}
		pf.Lang = lang
		if d.err == nil && len(d.b) != 0 {
			d.err = fmt.Errorf("%d bytes after the body", len(d.b))
		}
		if d.err == nil && (len(pf.Symbols) != l.nsyms || len(refs) != l.nrefs) {
			d.err = errors.New("counts differ from the file's head")
		}
		if d.err != nil {
			l.src.fail(fmt.Errorf("%s: %w", path, d.err))
			pf, refs = &pFile{Lang: lang}, nil
		}
		l.file, l.refs = pf, refs
	})
}

// file returns the file's definitions; nil for text and skipped files.
func (f *fileRec) file() *pFile {
	if f.lz == nil {
		return f.File
	}
	f.lz.load(f.Path, f.Lang)
	return f.lz.file
}

// refs returns the file's packed references.
func (f *fileRec) refs() []uint32 {
	if f.lz == nil {
		return f.Refs
	}
	f.lz.load(f.Path, f.Lang)
	return f.lz.refs
}

// counts returns how many definitions and references the file has,
// without decoding a lazy body.
func (f *fileRec) counts() (syms, refs int) {
	if f.lz != nil {
		return f.lz.nsyms, f.lz.nrefs / 3
	}
	if f.File != nil {
		return len(f.File.Symbols), len(f.Refs) / 3
	}
	return 0, 0
}

// parsed reports whether the file has a body (definitions and
// references), decoded or not.
func (f *fileRec) parsed() bool { return f.lz != nil || f.File != nil }

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
	// Bodies not decoded since they were read refer to the table already,
	// and are copied as they are.
	for _, f := range st.Files {
		tab.idLocked(f.Lang)
		if f.lz != nil {
			continue
		}
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
	// Sized once: bodies are most of the file.
	bsize := 0
	for _, f := range st.Files {
		switch {
		case f.lz != nil:
			bsize += len(f.lz.b)
		case f.File != nil:
			bsize += 8 + 4*len(f.File.Imports) + 5*len(f.Refs)
			for _, s := range f.File.Symbols {
				bsize += len(s.Signature) + len(s.Doc) + 16
			}
		}
	}
	bodies := &encoder{b: make([]byte, 0, bsize), tab: tab}
	blen := make([]int, len(st.Files))
	if err := safely(func() {
		for i, f := range st.Files {
			at := len(bodies.b)
			switch {
			case f.lz != nil && f.lz.src.prefixOf(tab.list):
				bodies.b = append(bodies.b, f.lz.b...)
			case f.parsed():
				bodies.body(f.file(), f.refs())
			}
			blen[i] = len(bodies.b) - at
		}
	}); err != nil {
		return nil, err
	}
	// Sized once, with room for the envelope's header before and its
	// checksum after: growing tens of megabytes by doubling, then copying
	// them into the envelope, was a fifth of saving.
	size := headerSize + len(hist) + len(st.Rank) + len(st.Root) + len(st.Head) + 64 + checksumSize +
		4*(len(tab.list)+1) + len(bodies.b)
	for _, s := range tab.list {
		size += len(s)
	}
	for _, f := range st.Files {
		size += len(f.Path) + 64
	}
	e := &encoder{b: make([]byte, headerSize, size), tab: tab}
	e.str(st.Root)
	e.str(st.Head)
	e.int(st.Updated.UnixNano())
	e.uint(uint64(len(tab.list)))
	strs := 0
	for _, s := range tab.list {
		strs += len(s)
	}
	e.uint(uint64(4*(len(tab.list)+1) + strs))
	off := uint32(0)
	e.b = binary.LittleEndian.AppendUint32(e.b, off)
	for _, s := range tab.list {
		off += uint32(len(s))
		e.b = binary.LittleEndian.AppendUint32(e.b, off)
	}
	for _, s := range tab.list {
		e.b = append(e.b, s...)
	}
	e.uint(uint64(len(st.Files)))
	for i, f := range st.Files {
		e.head(f)
		if !f.parsed() {
			e.uint(0)
			continue
		}
		ns, nr := f.counts()
		e.uint(1)
		e.uint(uint64(ns))
		e.uint(uint64(3 * nr))
		e.uint(uint64(blen[i]))
	}
	e.bytes(bodies.b)
	e.bytes(hist)
	e.bytes(st.Rank)
	return e.b, nil
}

// prefixOf reports whether the table the bodies refer to is the start of
// list, the table a save writes, so that they can be copied as they are.
// The table only grows, so it always is; a body that is not is decoded
// and written again.
func (s *bodySource) prefixOf(list []string) bool {
	n := len(s.names)
	return n > 0 && n <= len(list) && s.names[n-1] == list[n-1] && s.names[n/2] == list[n/2]
}

// head writes a file's record without its body.
func (e *encoder) head(f *fileRec) {
	e.str(f.Path)
	e.int(f.Size)
	e.int(f.Mtime)
	e.b = append(e.b, f.Sum[:]...)
	e.uint(uint64(f.Lines))
	e.id(f.Lang)
	e.str(f.Skip)
}

// body writes a file's definitions and packed references.
func (e *encoder) body(pf *pFile, refs []uint32) {
	e.id(pf.Package)
	e.uint(uint64(len(pf.Imports)))
	for _, s := range pf.Imports {
		e.id(s)
	}
	e.uint(uint64(len(pf.Symbols)))
	for _, s := range pf.Symbols {
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
	e.uint(uint64(len(refs)))
	for i, v := range refs {
		if e.inline && i%3 != 2 {
			e.str(e.names[v])
		} else {
			e.uint(uint64(v))
		}
	}
}

// file writes one file's record whole, as the journal keeps it.
func (e *encoder) file(f *fileRec) {
	e.head(f)
	if !f.parsed() {
		e.uint(0)
		return
	}
	e.uint(1)
	e.body(f.file(), f.refs())
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
	if d.err != nil {
		return ""
	}
	if i >= uint64(len(d.names)) {
		d.err = fmt.Errorf("string %d of %d", i, len(d.names))
		return ""
	}
	return d.names[i]
}

// strings reads the string table: n strings as one block.
func (d *decoder) strings() []string {
	n := d.count(4)
	tb := d.raw(d.count(1))
	if d.err != nil {
		return nil
	}
	if n == 0 {
		d.err = errors.New("no string table")
		return nil
	}
	if uint64(len(tb)) < 4*(uint64(n)+1) {
		d.err = errors.New("string table truncated")
		return nil
	}
	offs, data := tb[:4*(n+1)], tb[4*(n+1):]
	all := string(data)
	out := make([]string, n)
	prev := binary.LittleEndian.Uint32(offs)
	if prev != 0 {
		d.err = errors.New("string table offsets out of order")
		return nil
	}
	for i := range n {
		o := binary.LittleEndian.Uint32(offs[4*i+4:])
		if o < prev || uint64(o) > uint64(len(all)) {
			d.err = errors.New("string table offsets out of order")
			return nil
		}
		out[i] = all[prev:o]
		prev = o
	}
	if uint64(prev) != uint64(len(all)) {
		d.err = fmt.Errorf("string table ends at %d of %d bytes", prev, len(all))
		return nil
	}
	if out[0] != "" {
		d.err = errors.New("string table does not start with the empty string")
		return nil
	}
	return out
}

func decodePayload(b []byte) (*state, error) {
	d := &decoder{b: b}
	st := &state{names: &strtab{}}
	st.Root = d.str()
	st.Head = d.str()
	st.Updated = time.Unix(0, d.int()).UTC()
	d.names = d.strings()
	st.names.list = d.names
	src := &bodySource{names: d.names}
	nf := d.count(20)
	st.Files = make([]*fileRec, 0, nf)
	type pending struct {
		f *fileRec
		n int
	}
	var bodies []pending
	for range nf {
		if d.err != nil {
			break
		}
		f := d.head()
		if d.uint() == 1 {
			ns, nr := d.count(1), d.count(1)
			if d.err == nil && nr%3 != 0 {
				d.err = fmt.Errorf("%s: malformed references", f.Path)
			}
			f.lz = &lazyBody{src: src, nsyms: ns, nrefs: nr}
			bodies = append(bodies, pending{f, d.count(1)})
		}
		if i := len(st.Files); i > 0 && st.Files[i-1].Path >= f.Path {
			d.err = fmt.Errorf("files out of order at %s", f.Path)
		}
		st.Files = append(st.Files, f)
	}
	all := d.raw(d.count(1))
	for _, p := range bodies {
		if d.err != nil {
			break
		}
		if p.n > len(all) {
			d.err = errors.New("bodies end early")
			break
		}
		p.f.lz.b, all = all[:p.n:p.n], all[p.n:]
	}
	if d.err == nil && len(all) != 0 {
		d.err = fmt.Errorf("%d bytes after the bodies", len(all))
	}
	hist := d.raw(d.count(1))
	st.Rank = d.raw(d.count(1))
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d bytes after the payload", len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	st.bodies = src
	st.History = new(hStats)
	if err := st.History.UnmarshalBinary(hist); err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	return st, nil
}

// head reads one file's record without its body.
func (d *decoder) head() *fileRec {
	f := &fileRec{Path: d.str(), Size: d.int(), Mtime: d.int()}
	copy(f.Sum[:], d.raw(len(f.Sum)))
	f.Lines = int(d.uint())
	f.Lang = d.id()
	f.Skip = d.str()
	return f
}

// body reads a file's definitions and packed references.
func (d *decoder) body(path string) (*pFile, []uint32) {
	pf := &pFile{Package: d.id()}
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
		d.err = fmt.Errorf("%s: malformed references", path)
	}
	refs := make([]uint32, nr)
	for i := range nr {
		if d.err != nil {
			break
		}
		if d.inline && i%3 != 2 {
			refs[i] = d.tab.id(d.str())
			continue
		}
		v := d.uint()
		if v > 1<<32-1 {
			d.err = fmt.Errorf("reference field %d out of range", v)
		}
		refs[i] = uint32(v)
	}
	if d.err == nil && !d.inline && !refsInTable(refs, len(d.names)) {
		d.err = fmt.Errorf("%s: malformed references", path)
	}
	return pf, refs
}

// file reads one file's record whole, as the journal keeps it.
func (d *decoder) file() *fileRec {
	f := d.head()
	if d.uint() != 1 {
		return f
	}
	f.File, f.Refs = d.body(f.Path)
	f.File.Lang = f.Lang
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
