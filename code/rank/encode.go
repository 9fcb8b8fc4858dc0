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
//	then eight sections, each a length and its bytes:
//	names:    a table (below) of the names in byte order, the first the
//	          empty name
//	terms:    a table of the terms in byte order
//	df:       for each term, the files and symbols holding it (uint32
//	          little-endian pairs)
//	postings: a table, for each term: its file postings then its symbol
//	          postings, each a count then (id delta, 4 tf bytes)
//	files:    for each file: path, lang, 4 field lengths, its symbols'
//	          count
//	symbols:  the kinds (count, strings), then each symbol, file by file,
//	          in symRecord bytes: name, parent, line (uint32
//	          little-endian), kind (uint16), 4 lengths (uint16)
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

// tableWriter builds a table apart; the model's encoder writes its
// tables in place (see MarshalBinary).
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

// sectionRoom is the room a section's length takes: a varint of 5 bytes,
// padded, so that it can be written once the section is.
const sectionRoom = 5

// putPadded writes v as a varint of exactly sectionRoom bytes.
func putPadded(b []byte, v uint64) {
	for i := range sectionRoom - 1 {
		b[i] = byte(v) | 0x80
		v >>= 7
	}
	b[sectionRoom-1] = byte(v)
}

// MarshalBinary encodes the model. It compacts the model first, so it
// needs the same exclusive access as Put. Sections and tables are written
// in place into one buffer sized once: encoding tens of megabytes apart
// and joining them doubled the memory saving takes.
func (m *Model) MarshalBinary() (out []byte, err error) {
	m.thaw()
	if len(m.files) != m.live {
		m.compact()
	}
	nameOrder, nameTo := sortedOrder(m.nameStr, 1)
	termOrder, termTo := sortedOrder(m.termStr, 0)

	size := 128 + 8*sectionRoom + symRecord*len(m.syms) + 4*(2*len(m.nameStr)+2*len(m.termStr)+len(m.files)+8) + 8*len(m.termStr)
	for t, s := range m.termStr {
		size += len(s) + 2 + (len(m.post[t])+len(m.symPost[t]))*(nFields+2)
	}
	for n, s := range m.nameStr {
		size += len(s) + 2 + 2*(len(m.users[n])+len(m.definers[n]))
	}
	for i := range m.files {
		f := &m.files[i]
		size += len(f.path) + 32 + 4*(len(f.refs)+len(f.symTerms)) + 3*(len(f.defs)+len(f.terms))
	}
	b := make([]byte, 0, size)
	b = append(b, magic...)
	b = binary.AppendUvarint(b, version)
	for _, n := range []int{len(m.nameStr), len(m.termStr), len(m.files), len(m.syms)} {
		b = binary.AppendUvarint(b, uint64(n))
	}
	for _, l := range m.symSumLen {
		b = binary.AppendUvarint(b, l)
	}
	tooLarge := false
	section := func(write func()) {
		at := len(b)
		b = append(b, make([]byte, sectionRoom)...)
		write()
		n := uint64(len(b) - at - sectionRoom)
		if n >= 1<<(7*sectionRoom) {
			tooLarge = true
		}
		putPadded(b[at:], n)
	}
	table := func(n int, entry func(i int)) {
		off := len(b)
		b = append(b, make([]byte, 4*(n+1))...)
		data := len(b)
		for i := range n {
			entry(i)
			if uint64(len(b)-data) > 1<<32-1 {
				tooLarge = true
			}
			binary.LittleEndian.PutUint32(b[off+4*(i+1):], uint32(len(b)-data))
		}
	}
	section(func() { table(len(nameOrder), func(i int) { b = append(b, m.nameStr[nameOrder[i]]...) }) })
	section(func() { table(len(termOrder), func(i int) { b = append(b, m.termStr[termOrder[i]]...) }) })
	section(func() {
		for _, t := range termOrder {
			b = binary.LittleEndian.AppendUint32(b, m.df[t])
			b = binary.LittleEndian.AppendUint32(b, m.symDF[t])
		}
	})
	section(func() {
		table(len(termOrder), func(i int) {
			t := termOrder[i]
			b = appendPostings(b, m.post[t])
			b = appendPostings(b, m.symPost[t])
		})
	})
	section(func() {
		for i := range m.files {
			f := &m.files[i]
			b = appendString(b, f.path)
			b = appendString(b, f.lang)
			for _, l := range f.len {
				b = binary.AppendUvarint(b, uint64(l))
			}
			b = binary.AppendUvarint(b, uint64(f.symHi-f.symLo))
		}
	})
	kindID := map[string]uint16{}
	var kindList []string
	for i := range m.syms {
		k := m.syms[i].kind
		if _, ok := kindID[k]; !ok {
			if len(kindList) == 1<<16 {
				tooLarge = true
				break
			}
			kindID[k] = uint16(len(kindList))
			kindList = append(kindList, k)
		}
	}
	section(func() {
		b = binary.AppendUvarint(b, uint64(len(kindList)))
		for _, k := range kindList {
			b = appendString(b, k)
		}
		for i := range m.syms {
			sy := &m.syms[i]
			b = binary.LittleEndian.AppendUint32(b, nameTo[sy.name])
			b = binary.LittleEndian.AppendUint32(b, nameTo[sy.parent])
			b = binary.LittleEndian.AppendUint32(b, uint32(sy.line))
			b = binary.LittleEndian.AppendUint16(b, kindID[sy.kind])
			for _, l := range sy.len {
				b = binary.LittleEndian.AppendUint16(b, l)
			}
		}
	})
	section(func() {
		table(len(m.files), func(i int) {
			f := &m.files[i]
			b = appendRefs(b, f.refs, nameTo)
			b = appendIDs(b, f.defs, nameTo)
			b = appendIDs(b, f.terms, termTo)
			b = appendRefs(b, f.symTerms, termTo)
		})
	})
	section(func() {
		table(len(nameOrder), func(i int) {
			n := nameOrder[i]
			b = appendFileIDs(b, m.users[n], m.files)
			b = appendFileIDs(b, m.definers[n], m.files)
		})
	})
	if tooLarge {
		return nil, errors.New("rank model too large to encode")
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
