package rank

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
)

// The encoding is made to be read lazily: opening a model decodes only
// what every query needs (the files' lengths and paths, the symbols), and
// a query decodes the few terms' postings, names and lists it touches.
// Integers are unsigned varints unless said otherwise, strings a length
// and bytes:
//
//	"mirarank" version
//	counts: names, terms, files, symbols; the symbols' 4 field lengths
//	        summed
//	then seven sections, each a length and its bytes:
//	names:    a table (below) of the names in byte order, the first the
//	          empty name
//	terms:    a table of the terms in byte order
//	df:       for each term, the files and symbols holding it (uint32
//	          little-endian pairs)
//	postings: a table, for each term: its file postings then its symbol
//	          postings, each a count then (id delta, 4 tf bytes)
//	files:    for each file: path, lang, 4 field lengths, its symbols'
//	          count, then (a length and bytes) each symbol: name, parent,
//	          kind, line, 4 lengths
//	lists:    a table, for each file: used names (count; name, uses),
//	          defined names, its terms, its symbols' terms (term, symbols
//	          holding it)
//	reverse:  a table, for each name: the files using it, then the files
//	          defining it (count, then id deltas)
//
// A table of n entries is n+1 uint32 little-endian offsets, the first 0
// and none smaller than the one before, then the entries' bytes: entry i
// is bytes [off[i], off[i+1]). Everything else (maps, the symbols by
// name) is derived when first needed. Only live files are written: the
// model is compacted first.

const (
	magic   = "mirarank"
	version = 3
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

// tableWriter builds a table: entries are appended to data, and each end
// is recorded.
type tableWriter struct {
	off  []byte
	data []byte
}

func newTable(n, size int) *tableWriter {
	t := &tableWriter{off: make([]byte, 0, 4*(n+1)), data: make([]byte, 0, size)}
	t.off = binary.LittleEndian.AppendUint32(t.off, 0)
	return t
}

func (t *tableWriter) end() { t.off = binary.LittleEndian.AppendUint32(t.off, uint32(len(t.data))) }

func (t *tableWriter) bytes() []byte { return append(t.off, t.data...) }

// MarshalBinary encodes the model. It compacts the model first, so it
// needs the same exclusive access as Put.
func (m *Model) MarshalBinary() ([]byte, error) {
	m.thaw()
	if len(m.files) != m.live {
		m.compact()
	}
	nameOrder, nameTo := sortedOrder(m.nameStr, 1)
	termOrder, termTo := sortedOrder(m.termStr, 0)

	names := newTable(len(m.nameStr), 0)
	for _, n := range nameOrder {
		names.data = append(names.data, m.nameStr[n]...)
		names.end()
	}
	terms := newTable(len(m.termStr), 0)
	df := make([]byte, 0, 8*len(m.termStr))
	size := 0
	for t := range m.termStr {
		size += 4 + (len(m.post[t])+len(m.symPost[t]))*(nFields+2)
	}
	post := newTable(len(m.termStr), size)
	for _, t := range termOrder {
		terms.data = append(terms.data, m.termStr[t]...)
		terms.end()
		df = binary.LittleEndian.AppendUint32(df, m.df[t])
		df = binary.LittleEndian.AppendUint32(df, m.symDF[t])
		post.data = appendPostings(post.data, m.post[t])
		post.data = appendPostings(post.data, m.symPost[t])
		post.end()
	}
	size = 0
	for i := range m.files {
		f := &m.files[i]
		size += len(f.path) + 32 + int(f.symHi-f.symLo)*16
	}
	files := make([]byte, 0, size)
	var block []byte
	lists := newTable(len(m.files), 0)
	for i := range m.files {
		f := &m.files[i]
		files = appendString(files, f.path)
		files = appendString(files, f.lang)
		for _, l := range f.len {
			files = binary.AppendUvarint(files, uint64(l))
		}
		files = binary.AppendUvarint(files, uint64(f.symHi-f.symLo))
		block = block[:0]
		for _, sy := range m.syms[f.symLo:f.symHi] {
			block = binary.AppendUvarint(block, uint64(nameTo[sy.name]))
			block = binary.AppendUvarint(block, uint64(nameTo[sy.parent]))
			block = appendString(block, sy.kind)
			block = binary.AppendUvarint(block, uint64(uint32(sy.line)))
			for _, l := range sy.len {
				block = binary.AppendUvarint(block, uint64(l))
			}
		}
		files = appendString(files, string(block))
		lists.data = appendRefs(lists.data, f.refs, nameTo)
		lists.data = appendIDs(lists.data, f.defs, nameTo)
		lists.data = appendIDs(lists.data, f.terms, termTo)
		lists.data = appendRefs(lists.data, f.symTerms, termTo)
		lists.end()
	}
	rev := newTable(len(m.nameStr), 0)
	for _, n := range nameOrder {
		rev.data = appendFileIDs(rev.data, m.users[n], m.files)
		rev.data = appendFileIDs(rev.data, m.definers[n], m.files)
		rev.end()
	}
	for _, t := range []*tableWriter{names, terms, post, lists, rev} {
		if uint64(len(t.data)) > 1<<32-1 {
			return nil, errors.New("rank model too large to encode")
		}
	}

	b := make([]byte, 0, 128+len(names.off)+len(names.data)+len(terms.off)+len(terms.data)+len(df)+
		len(post.off)+len(post.data)+len(files)+len(lists.off)+len(lists.data)+len(rev.off)+len(rev.data))
	b = append(b, magic...)
	b = binary.AppendUvarint(b, version)
	for _, n := range []int{len(m.nameStr), len(m.termStr), len(m.files), len(m.syms)} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	for _, l := range m.symSumLen {
		b = binary.AppendUvarint(b, l)
	}
	section := func(parts ...[]byte) {
		n := 0
		for _, p := range parts {
			n += len(p)
		}
		b = binary.AppendUvarint(b, uint64(n))
		for _, p := range parts {
			b = append(b, p...)
		}
	}
	section(names.off, names.data)
	section(terms.off, terms.data)
	section(df)
	section(post.off, post.data)
	section(files)
	section(lists.off, lists.data)
	section(rev.off, rev.data)
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

// appendFileIDs writes the live files of a reverse list, in increasing
// order, as deltas.
func appendFileIDs(b []byte, ids []uint32, files []file) []byte {
	n := 0
	for _, id := range ids {
		if !files[id].dead {
			n++
		}
	}
	live := make([]uint32, 0, n)
	for _, id := range ids {
		if !files[id].dead {
			live = append(live, id)
		}
	}
	slices.Sort(live)
	live = slices.Compact(live)
	b = binary.AppendUvarint(b, uint64(len(live)))
	last := uint32(0)
	for _, id := range live {
		b = binary.AppendUvarint(b, uint64(id-last))
		last = id
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
