package rank

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"sync"
)

// errCorrupt is wrapped by every decoding error.
var errCorrupt = errors.New("damaged rank model")

// lazy is the encoded form a model was opened from and what queries have
// decoded of it so far. A model with one answers queries from it; the
// first change (Put, Remove) decodes it whole (thaw) and drops it.
type lazy struct {
	names, terms, post, lists, rev table
	df                             []byte // two uint32 per term
	keep                           any    // what owns the bytes (see Hold)

	mu       sync.Mutex // guards what follows
	name     map[uint32]string
	posts    map[uint32][2][]posting // term -> file and symbol postings
	fileRefs map[uint32]fileRefs
	users    map[uint32][2][]uint32 // name -> users, definers
	allNames bool                   // nameStr, nameKey, nameInit and nameSyms are filled
	allSyms  bool                   // syms is filled
	symRecs  []byte                 // the symbols, symRecord bytes each
	kinds    []string
	nsyms    int
	err      error // the first damage found
}

type fileRefs struct {
	refs []ref
	defs []uint32
}

// table is an encoded table (see MarshalBinary) of n entries.
type table struct {
	off  []byte
	data []byte
	n    int
}

func parseTable(b []byte, n int, what string) (table, error) {
	if n < 0 || uint64(len(b)) < 4*(uint64(n)+1) {
		return table{}, fmt.Errorf("%w: %s table truncated", errCorrupt, what)
	}
	t := table{off: b[:4*(n+1)], data: b[4*(n+1):], n: n}
	prev := uint32(0)
	for i := 0; i <= n; i++ {
		o := binary.LittleEndian.Uint32(t.off[4*i:])
		if o < prev || (i == 0 && o != 0) {
			return table{}, fmt.Errorf("%w: %s table offsets out of order", errCorrupt, what)
		}
		prev = o
	}
	if uint64(prev) != uint64(len(t.data)) {
		return table{}, fmt.Errorf("%w: %s table ends at %d of %d bytes", errCorrupt, what, prev, len(t.data))
	}
	return t, nil
}

// entry returns entry i, which must be below n.
func (t table) entry(i uint32) []byte {
	lo := binary.LittleEndian.Uint32(t.off[4*i:])
	hi := binary.LittleEndian.Uint32(t.off[4*i+4:])
	return t.data[lo:hi:hi]
}

type reader struct {
	b        []byte
	err      error
	lastKind string // the last kind read: symbols of a file mostly share it
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at byte %d", errCorrupt, what, len(r.b))
	}
	r.b = nil
}

func (r *reader) uint(what string, max uint64) uint64 { return r.uintOf(what, "", max) }

// uintOf is uint for the item what+suffix, the two joined only in an
// error: joining them for every number read cost a third of decoding.
func (r *reader) uintOf(what, suffix string, max uint64) uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("truncated " + what + suffix)
		return 0
	}
	r.b = r.b[n:]
	if v > max {
		r.fail(fmt.Sprintf("%s%s %d out of range", what, suffix, v))
		return 0
	}
	return v
}

// raw reads a string's bytes without copying them.
func (r *reader) raw(what string) []byte {
	n := r.uintOf(what, " length", 1<<32)
	if n > uint64(len(r.b)) {
		r.fail("truncated " + what)
		return nil
	}
	s := r.b[:n:n]
	r.b = r.b[n:]
	return s
}

func (r *reader) string(what string) string { return string(r.raw(what)) }

// kind reads a symbol's kind, sharing the strings of the known ones.
func (r *reader) kind() string {
	b := r.raw("kind")
	if string(b) == r.lastKind {
		return r.lastKind
	}
	if s, ok := kinds[string(b)]; ok {
		r.lastKind = s
		return s
	}
	return string(b)
}

func (r *reader) bytes(n int, what string) []byte {
	if len(r.b) < n {
		r.fail("truncated " + what)
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// count reads a number of items each at least min bytes long, so that a
// damaged count cannot make the decoder allocate more than the input.
func (r *reader) count(what string, min int) int {
	return int(r.uintOf(what, " count", uint64(len(r.b)/min)))
}

// id reads an index below limit.
func (r *reader) id(what string, limit int) uint32 {
	if limit <= 0 {
		r.fail(what + " with nothing to name")
		return 0
	}
	return uint32(r.uint(what, uint64(limit-1)))
}

func (r *reader) ids(what string, limit int) []uint32 {
	c := r.count(what, 1)
	if c == 0 {
		return nil
	}
	out := make([]uint32, c)
	for i := range out {
		out[i] = r.id(what, limit)
	}
	return out
}

// increasing reads a list of ids below limit written as deltas, strictly
// increasing.
func (r *reader) increasing(what string, limit int) []uint32 {
	c := r.count(what, 1)
	if c == 0 {
		return nil
	}
	out := make([]uint32, c)
	id := uint64(0)
	for i := range out {
		d := r.uint(what, uint64(limit))
		if i > 0 && d == 0 {
			r.fail(what + " out of order")
			return nil
		}
		id += d
		if id >= uint64(limit) {
			r.fail(what + " out of range")
			return nil
		}
		out[i] = uint32(id)
	}
	return out
}

func (r *reader) refs(what string, limit int, maxCount uint64) []ref {
	c := r.count(what, 2)
	if c == 0 {
		return nil
	}
	out := make([]ref, c)
	for i := range out {
		out[i] = ref{r.id(what, limit), uint32(r.uintOf(what, " count", maxCount))}
	}
	return out
}

// postings reads a list of postings of ids below limit.
func (r *reader) postings(limit int) []posting {
	n := r.count("postings", 1+nFields)
	if n == 0 {
		return nil
	}
	ps := make([]posting, n)
	id := uint64(0)
	for i := range ps {
		d := r.uint("posting", uint64(limit))
		if i > 0 && d == 0 {
			r.fail("postings out of order")
			return nil
		}
		id += d
		if id >= uint64(limit) {
			r.fail("posting out of range")
			return nil
		}
		ps[i].id = uint32(id)
		copy(ps[i].tf[:], r.bytes(nFields, "posting"))
	}
	return ps
}

// UnmarshalBinary replaces the model with one MarshalBinary encoded,
// keeping its parameters. It decodes only the files and symbols, and
// checks the shape of the rest; queries decode what they need of it, and
// the first change all of it. data must not change while the model uses
// it. Damaged input gives an error and leaves the model as it was;
// damage found later is reported by Err.
func (m *Model) UnmarshalBinary(data []byte) (err error) {
	if ferr := safely(func() { err = m.unmarshal(data) }); ferr != nil {
		return ferr
	}
	return err
}

func (m *Model) unmarshal(data []byte) error {
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return fmt.Errorf("%w: not a rank model", errCorrupt)
	}
	r := &reader{b: data[len(magic):]}
	if v := r.uint("version", 1<<32); r.err == nil && v != version {
		return fmt.Errorf("%w: version %d, want %d", errCorrupt, v, version)
	}
	nn := int(r.uint("names count", 1<<31))
	nt := int(r.uint("terms count", 1<<31))
	nf := int(r.uint("files count", 1<<31))
	ns := int(r.uint("symbols count", 1<<31))
	var symSumLen [nFields]uint64
	for j := range symSumLen {
		symSumLen[j] = r.uint("symbol lengths", 1<<63)
	}
	if r.err == nil && nn < 1 {
		r.fail("no names")
	}
	var sec [8][]byte
	for i := range sec {
		sec[i] = r.raw("section")
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return r.err
	}
	lz := &lazy{df: sec[2], name: map[uint32]string{}, posts: map[uint32][2][]posting{},
		fileRefs: map[uint32]fileRefs{}, users: map[uint32][2][]uint32{}}
	var err error
	if lz.names, err = parseTable(sec[0], nn, "names"); err != nil {
		return err
	}
	if lz.terms, err = parseTable(sec[1], nt, "terms"); err != nil {
		return err
	}
	if uint64(len(lz.df)) != 8*uint64(nt) {
		return fmt.Errorf("%w: %d bytes of term counts for %d terms", errCorrupt, len(lz.df), nt)
	}
	if lz.post, err = parseTable(sec[3], nt, "postings"); err != nil {
		return err
	}
	if lz.lists, err = parseTable(sec[6], nf, "lists"); err != nil {
		return err
	}
	if lz.rev, err = parseTable(sec[7], nn, "reverse"); err != nil {
		return err
	}
	r = &reader{b: sec[5]}
	nk := r.count("kinds", 1)
	for range nk {
		lz.kinds = append(lz.kinds, r.kind())
	}
	if r.err == nil && uint64(len(r.b)) != uint64(ns)*symRecord {
		r.fail(fmt.Sprintf("%d bytes of symbols for %d", len(r.b), ns))
	}
	if r.err != nil {
		return r.err
	}
	lz.symRecs = r.b
	if len(lz.names.entry(0)) != 0 {
		return fmt.Errorf("%w: the first name is not empty", errCorrupt)
	}
	// Binary search needs the terms in order.
	for t := 1; t < nt; t++ {
		if bytes.Compare(lz.terms.entry(uint32(t-1)), lz.terms.entry(uint32(t))) >= 0 {
			return fmt.Errorf("%w: terms out of order", errCorrupt)
		}
	}

	// A numbering of its own (Model.epoch): a Preparer that worked for
	// another model must not reuse its numbers here.
	n := &Model{params: m.params, lz: lz, byPath: make(map[string]uint32, nf), symSumLen: symSumLen, epoch: epochs.Add(1)}
	r = &reader{b: sec[4]}
	n.files = make([]file, 0, min(nf, len(r.b)/8))
	lo := uint64(0)
	for i := 0; i < nf && r.err == nil; i++ {
		id := uint32(i)
		f := file{path: r.string("path"), lang: r.string("lang"), symLo: uint32(lo)}
		for j := range f.len {
			f.len[j] = uint32(r.uint("length", 1<<32-1))
			n.sumLen[j] += uint64(f.len[j])
		}
		lo += r.uint("symbols", 1<<31)
		if r.err == nil && lo > uint64(ns) {
			r.fail("more symbols than the header says")
		}
		f.symHi = uint32(lo)
		if r.err != nil {
			break
		}
		if _, dup := n.byPath[f.path]; dup {
			r.fail("duplicate path " + f.path)
			break
		}
		n.byPath[f.path] = id
		n.files = append(n.files, f)
	}
	if r.err == nil && (len(n.files) != nf || lo != uint64(ns)) {
		r.fail(fmt.Sprintf("%d files and %d symbols, header says %d and %d", len(n.files), lo, nf, ns))
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes after the files")
	}
	if r.err != nil {
		return r.err
	}
	lz.nsyms = ns
	n.live, n.liveSyms = len(n.files), ns
	*m = *n
	return nil
}

// symCount returns how many symbols the model numbers, dead ones included.
func (m *Model) symCount() int {
	if m.lz != nil {
		return m.lz.nsyms
	}
	return len(m.syms)
}

// symRecord is the size of an encoded symbol.
const symRecord = 4 + 4 + 4 + 2 + 2*nFields

// sym returns symbol id, which must be below symCount. A lazy model reads
// it from its fixed-size record, in place.
func (m *Model) sym(id uint32) sym {
	lz := m.lz
	if lz == nil {
		return m.syms[id]
	}
	sy, err := m.symRecord(lz, id)
	if err != nil {
		lz.mu.Lock()
		lz.failLocked(err)
		lz.mu.Unlock()
	}
	return sy
}

// symRecord decodes symbol id; damage gives a symbol of no name.
func (m *Model) symRecord(lz *lazy, id uint32) (sym, error) {
	i := uint32(sort.Search(len(m.files), func(i int) bool { return m.files[i].symHi > id }))
	if int(i) >= len(m.files) {
		return sym{}, fmt.Errorf("%w: symbol %d of no file", errCorrupt, id)
	}
	sy := sym{file: i}
	var name, parent, kind uint32
	err := safely(func() {
		b := lz.symRecs[int(id)*symRecord:][:symRecord]
		name = binary.LittleEndian.Uint32(b)
		parent = binary.LittleEndian.Uint32(b[4:])
		sy.line = int32(binary.LittleEndian.Uint32(b[8:]))
		kind = uint32(binary.LittleEndian.Uint16(b[12:]))
		for j := range sy.len {
			sy.len[j] = binary.LittleEndian.Uint16(b[14+2*j:])
		}
	})
	if err != nil {
		return sym{file: i}, err
	}
	if int(name) >= lz.names.n || int(parent) >= lz.names.n || int(kind) >= len(lz.kinds) {
		return sym{file: i}, fmt.Errorf("%w: symbol %d names out of range", errCorrupt, id)
	}
	sy.name, sy.parent, sy.kind = name, parent, lz.kinds[kind]
	return sy, nil
}

// allSymsLocked decodes every symbol into syms.
func (m *Model) allSymsLocked(lz *lazy) {
	if lz.allSyms {
		return
	}
	syms := make([]sym, lz.nsyms)
	for id := range syms {
		sy, err := m.symRecord(lz, uint32(id))
		if err != nil {
			lz.failLocked(err)
		}
		syms[id] = sy
	}
	m.syms = syms
	lz.allSyms = true
}

// Hold keeps v reachable while the model reads the data it was decoded
// from (until its first change): the owner of a mapped file, say.
func (m *Model) Hold(v any) {
	if m.lz != nil {
		m.lz.keep = v
	}
}

// safely runs fn, turning a fault on reading the encoded form (a mapped
// file truncated under the reader) into an error.
func safely(fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); ok {
				err = fmt.Errorf("%w: the data changed under the reader", errCorrupt)
				return
			}
			panic(r)
		}
	}()
	fn()
	return nil
}

// Err reports damage found in the encoded form since the model was
// opened: the answers given since may have missed what it held.
func (m *Model) Err() error {
	if m.lz == nil {
		return m.damaged
	}
	m.lz.mu.Lock()
	defer m.lz.mu.Unlock()
	return m.lz.err
}

func (lz *lazy) failLocked(err error) {
	if lz.err == nil {
		lz.err = err
	}
}

// findTerm returns the number of term t.
func (m *Model) findTerm(t string) (uint32, bool) {
	if m.lz == nil {
		return m.lookupTerm(t)
	}
	tb := m.lz.terms
	var i int
	var ok bool
	if err := safely(func() {
		i = sort.Search(tb.n, func(i int) bool { return string(tb.entry(uint32(i))) >= t })
		ok = i < tb.n && string(tb.entry(uint32(i))) == t
	}); err != nil {
		m.lz.mu.Lock()
		m.lz.failLocked(err)
		m.lz.mu.Unlock()
		return 0, false
	}
	return uint32(i), ok
}

// dfOf returns how many live files and symbols hold term t.
func (m *Model) dfOf(t uint32) (uint32, uint32) {
	if m.lz == nil {
		return m.df[t], m.symDF[t]
	}
	var df, sdf uint32
	if err := safely(func() {
		df, sdf = binary.LittleEndian.Uint32(m.lz.df[8*t:]), binary.LittleEndian.Uint32(m.lz.df[8*t+4:])
	}); err != nil {
		m.lz.mu.Lock()
		m.lz.failLocked(err)
		m.lz.mu.Unlock()
	}
	return df, sdf
}

// postings returns the file and symbol postings of term t.
func (m *Model) postings(t uint32) ([]posting, []posting) {
	lz := m.lz
	if lz == nil {
		return m.post[t], m.symPost[t]
	}
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if p, ok := lz.posts[t]; ok {
		return p[0], p[1]
	}
	r := &reader{b: lz.post.entry(t)}
	var p [2][]posting
	var df, sdf uint32
	if err := safely(func() {
		p = [2][]posting{r.postings(len(m.files)), r.postings(lz.nsyms)}
		df, sdf = binary.LittleEndian.Uint32(lz.df[8*t:]), binary.LittleEndian.Uint32(lz.df[8*t+4:])
	}); err != nil {
		r.err = err
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes after postings")
	}
	if r.err == nil && (uint32(len(p[0])) != df || uint32(len(p[1])) != sdf) {
		r.fail("term counts differ from the postings")
	}
	if r.err != nil {
		lz.failLocked(fmt.Errorf("term %d: %w", t, r.err))
		p = [2][]posting{}
	}
	lz.posts[t] = p
	return p[0], p[1]
}

// nameOf returns name n.
func (m *Model) nameOf(n uint32) string {
	lz := m.lz
	if lz == nil {
		return m.nameStr[n]
	}
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if lz.allNames {
		return m.nameStr[n]
	}
	s, ok := lz.name[n]
	if !ok {
		if err := safely(func() { s = string(lz.names.entry(n)) }); err != nil {
			lz.failLocked(err)
		}
		lz.name[n] = s
	}
	return s
}

// refsOf returns the names file i uses, with their counts, and those it
// defines.
func (m *Model) refsOf(i uint32) ([]ref, []uint32) {
	lz := m.lz
	if lz == nil {
		return m.files[i].refs, m.files[i].defs
	}
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if fr, ok := lz.fileRefs[i]; ok {
		return fr.refs, fr.defs
	}
	r := &reader{b: lz.lists.entry(i)}
	var fr fileRefs
	if err := safely(func() {
		fr = fileRefs{refs: r.refs("used name", lz.names.n, 1<<32-1), defs: r.ids("defined name", lz.names.n)}
	}); err != nil {
		r.err = err
	}
	if r.err != nil {
		lz.failLocked(fmt.Errorf("file %d: %w", i, r.err))
		fr = fileRefs{}
	}
	lz.fileRefs[i] = fr
	return fr.refs, fr.defs
}

// usersOf returns the files using name n and those defining it.
func (m *Model) usersOf(n uint32) ([]uint32, []uint32) {
	lz := m.lz
	if lz == nil {
		return m.users[n], m.definers[n]
	}
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if u, ok := lz.users[n]; ok {
		return u[0], u[1]
	}
	r := &reader{b: lz.rev.entry(n)}
	var u [2][]uint32
	if err := safely(func() { u = [2][]uint32{r.increasing("user", len(m.files)), r.increasing("definer", len(m.files))} }); err != nil {
		r.err = err
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes after a name's files")
	}
	if r.err != nil {
		lz.failLocked(fmt.Errorf("name %d: %w", n, r.err))
		u = [2][]uint32{}
	}
	lz.users[n] = u
	return u[0], u[1]
}

// block copies strings into one string and returns them as slices of it:
// one allocation for hundreds of thousands of names.
func block(t table) []string {
	all := string(t.data)
	out := make([]string, t.n)
	for i := range out {
		lo := binary.LittleEndian.Uint32(t.off[4*i:])
		hi := binary.LittleEndian.Uint32(t.off[4*i+4:])
		out[i] = all[lo:hi]
	}
	return out
}

// allNames fills the names and what matching them needs, for a search
// over every name.
func (m *Model) allNames() {
	lz := m.lz
	if lz == nil {
		return
	}
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if lz.allNames {
		return
	}
	var names []string
	if err := safely(func() { names = block(lz.names) }); err != nil {
		lz.failLocked(err)
		names = make([]string, lz.names.n)
	}
	m.allSymsLocked(lz)
	m.fillNames(names)
	lz.allNames = true
}

// fillNames sets the names and derives the symbols by name and the keys
// of the names of symbols.
func (m *Model) fillNames(names []string) {
	nn := len(names)
	m.nameStr = names
	m.nameKey = make([]string, nn)
	m.nameInit = make([]string, nn)
	m.nameSyms = fill(nn, func(add func(uint32)) {
		for i := range m.syms {
			add(m.syms[i].name)
		}
	}, func(emit func(uint32, uint32)) {
		for i := range m.syms {
			emit(m.syms[i].name, uint32(i))
		}
	})
	for i := range m.syms {
		m.symbolName(m.syms[i].name)
		m.symbolName(m.syms[i].parent)
	}
}

// fill makes nn lists, counted first, then filled, each a capped slice of
// one array: appending to many small lists one entry at a time costs far
// more.
func fill(nn int, count func(add func(name uint32)), put func(emit func(name, v uint32))) [][]uint32 {
	at := make([]uint32, nn+1)
	count(func(name uint32) { at[name+1]++ })
	for i := 1; i <= nn; i++ {
		at[i] += at[i-1]
	}
	all := make([]uint32, at[nn])
	next := append([]uint32(nil), at[:nn]...)
	put(func(name, v uint32) {
		all[next[name]] = v
		next[name]++
	})
	out := make([][]uint32, nn)
	for i := range out {
		if at[i] < at[i+1] {
			out[i] = all[at[i]:at[i+1]:at[i+1]]
		}
	}
	return out
}

// thaw decodes what the model was opened from whole, so that it can be
// changed; it needs the same exclusive access as Put. Damage found gives
// an empty model, reported by Err.
func (m *Model) thaw() {
	lz := m.lz
	if lz == nil {
		return
	}
	var err error
	if ferr := safely(func() { err = m.thawLocked(lz) }); ferr != nil {
		err = ferr
	}
	if err != nil {
		p := m.params
		*m = Model{params: p, damaged: err}
		m.init()
	}
}

func (m *Model) thawLocked(lz *lazy) error {
	lz.mu.Lock()
	defer lz.mu.Unlock()
	if lz.err != nil {
		return lz.err
	}
	nn, nt, nf := lz.names.n, lz.terms.n, len(m.files)
	m.allSymsLocked(lz)
	if lz.err != nil {
		return lz.err
	}
	var sum [nFields]uint64
	for i := range m.syms {
		for j := range sum {
			sum[j] += uint64(m.syms[i].len[j])
		}
	}
	if sum != m.symSumLen {
		return fmt.Errorf("%w: symbol lengths differ from their sums", errCorrupt)
	}
	if !lz.allNames {
		m.fillNames(block(lz.names))
	}
	for i := 1; i < nn; i++ {
		if m.nameStr[i-1] >= m.nameStr[i] {
			return fmt.Errorf("%w: names out of order", errCorrupt)
		}
	}
	m.termStr = block(lz.terms)
	m.post, m.symPost = make([][]posting, nt), make([][]posting, nt)
	m.df, m.symDF = make([]uint32, nt), make([]uint32, nt)
	for t := range nt {
		r := &reader{b: lz.post.entry(uint32(t))}
		m.post[t], m.symPost[t] = r.postings(nf), r.postings(len(m.syms))
		if r.err == nil && len(r.b) != 0 {
			r.fail("trailing bytes after postings")
		}
		if r.err != nil {
			return fmt.Errorf("term %q: %w", m.termStr[t], r.err)
		}
		m.df[t], m.symDF[t] = uint32(len(m.post[t])), uint32(len(m.symPost[t]))
	}
	for i := range m.files {
		f := &m.files[i]
		r := &reader{b: lz.lists.entry(uint32(i))}
		f.refs = r.refs("used name", nn, 1<<32-1)
		f.defs = r.ids("defined name", nn)
		f.terms = r.ids("term", nt)
		f.symTerms = r.refs("symbol term", nt, uint64(f.symHi-f.symLo))
		if r.err == nil && len(r.b) != 0 {
			r.fail("trailing bytes after a file's lists")
		}
		if r.err != nil {
			return fmt.Errorf("%s: %w", f.path, r.err)
		}
	}
	m.users, m.definers = make([][]uint32, nn), make([][]uint32, nn)
	for n := range nn {
		r := &reader{b: lz.rev.entry(uint32(n))}
		m.users[n], m.definers[n] = r.increasing("user", nf), r.increasing("definer", nf)
		if r.err == nil && len(r.b) != 0 {
			r.fail("trailing bytes after a name's files")
		}
		if r.err != nil {
			return fmt.Errorf("name %q: %w", m.nameStr[n], r.err)
		}
	}
	m.names, m.terms = nil, nil // made by the first Put that needs them
	m.lz = nil
	return nil
}
