package rank

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The encoding, all integers unsigned varints, strings a length and bytes:
//
//	"mirarank" version
//	names: count, then each name but the first (the empty one), in
//	       byte order
//	terms: count, then each term, in byte order, its file postings and
//	       its symbol postings; postings as count, then (id delta, 4 tf
//	       bytes)
//	files: count, the count of all symbols, then for each: path, lang, 4 field lengths, symbols
//	       (count; name, parent, kind, line, 4 lengths each), used names
//	       (count; name, uses), defined names, its terms, its symbols'
//	       terms (term, symbols holding it)
//
// Everything else (maps, lengths' sums, the name graph's reverse lists)
// is derived on loading. Only live files are written: the model is
// compacted first. Names and terms are written sorted, numbered by their
// place in that order, so that loading makes no map of them: a query finds
// its terms by binary search, and the maps are made by the first Put.

const (
	magic   = "mirarank"
	version = 2
)

// sortedOrder returns the indexes of l in the byte order of their strings,
// and, for each index, its place in that order. from is where sorting
// starts: the entries before stay where they are.
func sortedOrder(l []string, from int) (order, place []uint32) {
	order = make([]uint32, len(l))
	for i := range order {
		order[i] = uint32(i)
	}
	rest := order[from:]
	slices.SortFunc(rest, func(a, b uint32) int { return strings.Compare(l[a], l[b]) })
	place = make([]uint32, len(l))
	for i, x := range order {
		place[x] = uint32(i)
	}
	return order, place
}

// MarshalBinary encodes the model. It compacts the model first, so it
// needs the same exclusive access as Put.
func (m *Model) MarshalBinary() ([]byte, error) {
	if len(m.files) != m.live {
		m.compact()
	}
	// Sized once: growing a buffer of tens of megabytes by doubling
	// copies it several times over.
	size := 64
	for t, s := range m.termStr {
		size += len(s) + 4 + (len(m.post[t])+len(m.symPost[t]))*(nFields+3)
	}
	for _, s := range m.nameStr {
		size += len(s) + 2
	}
	for i := range m.files {
		f := &m.files[i]
		size += len(f.path) + 32 + int(f.symHi-f.symLo)*16 + (len(f.refs)+len(f.symTerms))*6 + (len(f.defs)+len(f.terms))*3
	}
	b := make([]byte, 0, size)
	b = append(b, magic...)
	b = binary.AppendUvarint(b, version)
	nameOrder, nameTo := sortedOrder(m.nameStr, 1)
	termOrder, termTo := sortedOrder(m.termStr, 0)
	b = binary.AppendUvarint(b, uint64(len(m.nameStr)))
	for _, n := range nameOrder[1:] {
		b = appendString(b, m.nameStr[n])
	}
	b = binary.AppendUvarint(b, uint64(len(m.termStr)))
	for _, t := range termOrder {
		b = appendString(b, m.termStr[t])
		b = appendPostings(b, m.post[t])
		b = appendPostings(b, m.symPost[t])
	}
	b = binary.AppendUvarint(b, uint64(len(m.files)))
	b = binary.AppendUvarint(b, uint64(len(m.syms)))
	for i := range m.files {
		f := &m.files[i]
		b = appendString(b, f.path)
		b = appendString(b, f.lang)
		for _, l := range f.len {
			b = binary.AppendUvarint(b, uint64(l))
		}
		b = binary.AppendUvarint(b, uint64(f.symHi-f.symLo))
		for _, sy := range m.syms[f.symLo:f.symHi] {
			b = binary.AppendUvarint(b, uint64(nameTo[sy.name]))
			b = binary.AppendUvarint(b, uint64(nameTo[sy.parent]))
			b = appendString(b, sy.kind)
			b = binary.AppendUvarint(b, uint64(uint32(sy.line)))
			for _, l := range sy.len {
				b = binary.AppendUvarint(b, uint64(l))
			}
		}
		b = appendRefs(b, f.refs, nameTo)
		b = appendIDs(b, f.defs, nameTo)
		b = appendIDs(b, f.terms, termTo)
		b = appendRefs(b, f.symTerms, termTo)
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendPostings(b []byte, ps []posting) []byte {
	b = binary.AppendUvarint(b, uint64(len(ps)))
	last := uint32(0)
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(p.id-last))
		last = p.id
		b = append(b, p.tf[:]...)
	}
	return b
}

func appendIDs(b []byte, ids []uint32, to []uint32) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(to[id]))
	}
	return b
}

func appendRefs(b []byte, rs []ref, to []uint32) []byte {
	b = binary.AppendUvarint(b, uint64(len(rs)))
	for _, r := range rs {
		b = binary.AppendUvarint(b, uint64(to[r.name]))
		b = binary.AppendUvarint(b, uint64(r.count))
	}
	return b
}

// errCorrupt is wrapped by every decoding error.
var errCorrupt = errors.New("damaged rank model")

type reader struct {
	b   []byte
	err error
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

// block copies strings into one string and returns them as slices of it:
// one allocation for hundreds of thousands of names.
func block(l [][]byte, size int) []string {
	buf := make([]byte, 0, size)
	for _, s := range l {
		buf = append(buf, s...)
	}
	all := string(buf)
	out := make([]string, len(l))
	at := 0
	for i, s := range l {
		out[i] = all[at : at+len(s)]
		at += len(s)
	}
	return out
}

// sorted reads count strings, in strictly increasing byte order, of which
// the first skip are not written (empty).
func (r *reader) sorted(what string, count, skip int) []string {
	l := make([][]byte, skip, count)
	size := 0
	for i := skip; i < count && r.err == nil; i++ {
		s := r.raw(what)
		size += len(s)
		l = append(l, s)
	}
	out := block(l, size)
	for i := skip + 1; i < len(out) && r.err == nil; i++ {
		if out[i-1] >= out[i] {
			r.fail(what + "s out of order")
		}
	}
	if skip > 0 && len(out) > skip && out[skip] == "" && r.err == nil {
		r.fail("empty " + what)
	}
	return out
}

func (r *reader) string(what string) string {
	n := r.uintOf(what, " length", 1<<32)
	if n > uint64(len(r.b)) {
		r.fail("truncated " + what)
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// kind reads a symbol's kind, sharing the strings of the known ones.
func (r *reader) kind() string {
	n := r.uint("kind length", 1<<32)
	if n > uint64(len(r.b)) {
		r.fail("truncated kind")
		return ""
	}
	b := r.b[:n]
	r.b = r.b[n:]
	if s, ok := kinds[string(b)]; ok {
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

// postings reads a list of postings into the room of arena, which it
// refills in large chunks: one allocation for many terms' lists, where a
// slice each would give the collector hundreds of thousands of objects.
// The lists are capped, so that appending to one later copies it out.
func (r *reader) postings(limit uint32, arena *[]posting) []posting {
	n := r.count("postings", 1+nFields)
	if n == 0 {
		return nil
	}
	if cap(*arena)-len(*arena) < n {
		*arena = make([]posting, 0, max(n, 1<<16))
	}
	a := *arena
	ps := a[len(a) : len(a)+n : len(a)+n]
	*arena = a[:len(a)+n]
	id := uint64(0)
	for i := range ps {
		d := r.uint("posting", uint64(limit))
		if i > 0 && d == 0 {
			r.fail("postings out of order")
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
// keeping its parameters. Damaged input gives an error and leaves the
// model as it was.
func (m *Model) UnmarshalBinary(data []byte) error {
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return fmt.Errorf("%w: not a rank model", errCorrupt)
	}
	r := &reader{b: data[len(magic):]}
	if v := r.uint("version", 1<<32); r.err == nil && v != version {
		return fmt.Errorf("%w: version %d, want %d", errCorrupt, v, version)
	}
	n := &Model{params: m.params}
	n.init()
	nn := r.count("names", 1)
	if nn < 1 {
		r.fail("no names")
		return r.err
	}
	// Names and terms are sliced from one string each, sorted and
	// without maps (see indexStrings).
	n.names, n.terms = nil, nil
	n.nameStr = r.sorted("name", nn, 1)
	n.nameKey = make([]string, nn)
	n.nameInit = make([]string, nn)
	n.definers = make([][]uint32, nn)
	n.users = make([][]uint32, nn)
	n.nameSyms = make([][]uint32, nn)
	nt := r.count("terms", 3)
	var terms [][]byte
	type termPosts struct{ file, sym []posting }
	posts := make([]termPosts, 0, nt)
	var arena []posting
	size := 0
	for t := 0; t < nt && r.err == nil; t++ {
		s := r.raw("term")
		size += len(s)
		terms = append(terms, s)
		// Ids are checked against the counts once the files are read.
		posts = append(posts, termPosts{r.postings(^uint32(0), &arena), r.postings(^uint32(0), &arena)})
	}
	n.termStr = block(terms, size)
	for t := 1; t < len(n.termStr) && r.err == nil; t++ {
		if n.termStr[t-1] >= n.termStr[t] {
			r.fail("terms out of order")
		}
	}
	n.post, n.symPost = make([][]posting, len(n.termStr)), make([][]posting, len(n.termStr))
	n.df, n.symDF = make([]uint32, len(n.termStr)), make([]uint32, len(n.termStr))
	nf := r.count("files", 8)
	n.files = make([]file, 0, nf)
	n.syms = make([]sym, 0, r.count("symbols", 3+nFields))
	for i := 0; i < nf && r.err == nil; i++ {
		id := uint32(i)
		f := file{path: r.string("path"), lang: r.string("lang"), symLo: uint32(len(n.syms))}
		for j := range f.len {
			f.len[j] = uint32(r.uint("length", 1<<32-1))
			n.sumLen[j] += uint64(f.len[j])
		}
		ns := r.count("symbols", 3+nFields)
		for range ns {
			sy := sym{file: id, name: r.id("symbol name", nn), parent: r.id("symbol parent", nn)}
			sy.kind = r.kind()
			sy.line = int32(uint32(r.uint("line", 1<<32-1)))
			for j := range sy.len {
				sy.len[j] = uint16(r.uint("symbol length", 65535))
				n.symSumLen[j] += uint64(sy.len[j])
			}
			if r.err != nil {
				break
			}
			n.symbolName(sy.name)
			n.symbolName(sy.parent)
			n.syms = append(n.syms, sy)
		}
		f.symHi = uint32(len(n.syms))
		f.refs = r.refs("used name", nn, 1<<32-1)
		f.defs = r.ids("defined name", nn)
		f.terms = r.ids("term", nt)
		f.symTerms = r.refs("symbol term", nt, uint64(ns))
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
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return r.err
	}
	n.live, n.liveSyms = len(n.files), len(n.syms)
	n.reverse()
	for t, p := range posts {
		for _, x := range p.file {
			if x.id >= uint32(len(n.files)) {
				return fmt.Errorf("%w: posting of term %q names file %d of %d", errCorrupt, n.termStr[t], x.id, len(n.files))
			}
		}
		for _, x := range p.sym {
			if x.id >= uint32(len(n.syms)) {
				return fmt.Errorf("%w: posting of term %q names symbol %d of %d", errCorrupt, n.termStr[t], x.id, len(n.syms))
			}
		}
		n.post[t], n.symPost[t] = p.file, p.sym
		n.df[t], n.symDF[t] = uint32(len(p.file)), uint32(len(p.sym))
	}
	*m = *n
	return nil
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

// reverse fills the name graph's reverse lists of a decoded model — the
// files using and defining each name, the symbols so named — in file and
// symbol order, each list a capped slice of one array per kind, counted
// first: appending to millions of small lists one entry at a time cost a
// fifth of decoding.
func (m *Model) reverse() {
	nn := len(m.nameStr)
	fill := func(count func(add func(name uint32)), put func(emit func(name, v uint32))) [][]uint32 {
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
	m.users = fill(func(add func(uint32)) {
		for i := range m.files {
			for _, x := range m.files[i].refs {
				add(x.name)
			}
		}
	}, func(emit func(uint32, uint32)) {
		for i := range m.files {
			for _, x := range m.files[i].refs {
				emit(x.name, uint32(i))
			}
		}
	})
	m.definers = fill(func(add func(uint32)) {
		for i := range m.files {
			for _, x := range m.files[i].defs {
				add(x)
			}
		}
	}, func(emit func(uint32, uint32)) {
		for i := range m.files {
			for _, x := range m.files[i].defs {
				emit(x, uint32(i))
			}
		}
	})
	m.nameSyms = fill(func(add func(uint32)) {
		for i := range m.syms {
			add(m.syms[i].name)
		}
	}, func(emit func(uint32, uint32)) {
		for i := range m.syms {
			emit(m.syms[i].name, uint32(i))
		}
	})
}
