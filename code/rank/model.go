package rank

import (
	"sort"
	"strings"
)

// Fields of a file, scored together by BM25F.
const (
	fPath = iota // the words of the path
	fName        // names of the symbols the file defines
	fDoc         // their doc comments
	fBody        // every identifier and comment word of the text
	nFields
)

// Fields of a symbol.
const (
	sName   = iota // its name
	sParent        // the enclosing type, class or module
	sSig           // its signature
	sDoc           // its doc comment
)

var fieldNames = [nFields]string{"path", "name", "doc", "body"}
var symFieldNames = [nFields]string{"name", "parent", "signature", "doc"}

// posting is one document (file or symbol) holding a term, with the
// term's count in each field, saturated at 255: BM25 saturates long before.
type posting struct {
	id uint32
	tf [nFields]uint8
}

// file is what the model keeps of one file: no text, only what ranking
// and hits need.
type file struct {
	path, lang string
	dead       bool
	len        [nFields]uint32 // field lengths in terms
	symLo      uint32          // its symbols are syms[symLo:symHi]
	symHi      uint32
	refs       []ref    // names used, each once, with their counts
	defs       []uint32 // names defined, each once
	terms      []uint32 // terms the file holds, each once
	symTerms   []ref    // terms its symbols hold, with how many symbols hold each
}

// ref is a name or term id with a count.
type ref struct {
	name  uint32
	count uint32
}

// sym is one symbol: a definition in a file.
type sym struct {
	file         uint32
	name, parent uint32 // in names; parent 0 when none
	kind         string
	line         int32
	len          [nFields]uint16
}

// Model ranks the files and symbols of a project for a query. Put and
// Remove change it and need exclusive access; Files and Symbols only read
// it and may run at the same time as each other.
//
// Documents are never rewritten in place: Put gives the new version of a
// file a new number and marks the old one dead; queries skip the dead, and
// the model compacts itself when they outnumber the living.
type Model struct {
	files  []file
	byPath map[string]uint32 // live files only
	live   int
	sumLen [nFields]uint64 // over live files

	syms      []sym
	liveSyms  int
	symSumLen [nFields]uint64

	terms   map[string]uint32
	termStr []string
	post    [][]posting // term -> files
	df      []uint32    // term -> live files holding it
	symPost [][]posting // term -> symbols
	symDF   []uint32

	names    map[string]uint32 // identifiers, exact; 0 is ""
	nameStr  []string
	nameKey  []string   // lower-case, separators dropped: fuzzy matching
	nameInit []string   // the initials of its parts: fuzzy matching
	definers [][]uint32 // name -> files defining it (may hold dead ones)
	users    [][]uint32 // name -> files using it
	nameSyms [][]uint32 // name -> symbols so named

	// Put's working room, not saved: the terms of identifiers seen, and
	// the counts of the file at hand.
	identCache map[string][]uint32
	scratch    bag

	params Params
}

// Params are the ranking's weights. The defaults were chosen on the
// development corpora of scripts/codeloc; the benchmark driver can change
// them to measure what each ingredient buys.
type Params struct {
	K1          float64          // BM25 term-frequency saturation
	Weight      [nFields]float64 // file fields: path, name, doc, body
	B           [nFields]float64 // length normalisation per file field
	SymWeight   [nFields]float64 // symbol fields: name, parent, signature, doc
	SymB        [nFields]float64
	SymbolBoost float64 // share of the best symbol's score added to its file's
	Graph       float64 // the graph spread's bound, as a share of the top lexical score
	GraphOther  float64 // an edge's weight when the query does not name its name, against 1
	GraphUsers  bool    // also spread from a seed to the files using its names
	Seeds       int     // lexical hits that seed the spread
	MaxDefiners int     // names defined in more files than this carry no edge
	Near        float64 // Query.Near's bound, as a share of the top lexical score
}

// DefaultParams returns the weights the model starts with.
func DefaultParams() Params {
	return Params{
		K1:          1.2,
		Weight:      [nFields]float64{2, 2, 1, 1},
		B:           [nFields]float64{0.3, 0.5, 0.75, 0.75},
		SymWeight:   [nFields]float64{3, 1, 1, 1},
		SymB:        [nFields]float64{0.3, 0.3, 0.5, 0.75},
		SymbolBoost: 0.6,
		Graph:       0.2,
		GraphOther:  0.1,
		GraphUsers:  true,
		Seeds:       10,
		MaxDefiners: 5,
		Near:        0.5,
	}
}

// New returns an empty model with the default parameters.
func New() *Model {
	m := &Model{params: DefaultParams()}
	m.init()
	return m
}

func (m *Model) init() {
	m.byPath = map[string]uint32{}
	m.terms = map[string]uint32{}
	m.names = map[string]uint32{"": 0}
	m.nameStr = []string{""}
	m.nameKey = []string{""}
	m.nameInit = []string{""}
	m.definers = [][]uint32{nil}
	m.users = [][]uint32{nil}
	m.nameSyms = [][]uint32{nil}
	m.identCache = map[string][]uint32{}
}

// SetParams replaces the ranking's weights; the index is unchanged.
func (m *Model) SetParams(p Params) { m.params = p }

// Params returns the ranking's weights.
func (m *Model) Params() Params { return m.params }

// Len returns the number of files in the model.
func (m *Model) Len() int { return m.live }

// Paths returns the paths of the files in the model, sorted.
func (m *Model) Paths() []string {
	out := make([]string, 0, m.live)
	for p := range m.byPath {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// symIn is a symbol as Put receives it.
type symIn struct {
	Kind, Name, Parent, Signature, Doc string
	Line                               int
}

// refIn is a used identifier as Put receives it.
type refIn struct{ Name string }

// input is one file as Put receives it.
type input struct {
	path, lang string
	text       []byte
	syms       []symIn
	refs       []refIn
}

func (m *Model) term(t string) uint32 {
	if id, ok := m.terms[t]; ok {
		return id
	}
	id := uint32(len(m.termStr))
	m.terms[t] = id
	m.termStr = append(m.termStr, t)
	m.post = append(m.post, nil)
	m.df = append(m.df, 0)
	m.symPost = append(m.symPost, nil)
	m.symDF = append(m.symDF, 0)
	return id
}

func (m *Model) name(s string) uint32 {
	if id, ok := m.names[s]; ok {
		return id
	}
	id := uint32(len(m.nameStr))
	m.names[s] = id
	m.nameStr = append(m.nameStr, s)
	m.nameKey = append(m.nameKey, "")
	m.nameInit = append(m.nameInit, "")
	m.definers = append(m.definers, nil)
	m.users = append(m.users, nil)
	m.nameSyms = append(m.nameSyms, nil)
	return id
}

// symbolName makes a name ready for fuzzy matching, once it names a
// symbol: most names are only used, and are never matched.
func (m *Model) symbolName(n uint32) {
	if m.nameKey[n] == "" && m.nameStr[n] != "" {
		m.nameKey[n] = nameKey(m.nameStr[n])
		m.nameInit[n] = initials(m.nameStr[n])
	}
}

// nameKey is a name lower-cased with its separators dropped.
func nameKey(s string) string {
	b := make([]byte, 0, len(s))
	splitInto(s, func(p string) { b = append(b, p...) })
	return string(b)
}

// bag counts one document's terms per field: counts is indexed by term,
// touched lists the terms counted, first seen first. One bag is reused
// for every document, so that counting costs no allocation.
type bag struct {
	counts  [][nFields]uint32
	touched []uint32
}

func (b *bag) add(t uint32, f int) {
	if int(t) >= len(b.counts) {
		b.counts = append(b.counts, make([][nFields]uint32, int(t)+1-len(b.counts)+len(b.counts)/2)...)
	}
	c := &b.counts[t]
	if *c == ([nFields]uint32{}) {
		b.touched = append(b.touched, t)
	}
	c[f]++
}

func (b *bag) reset() {
	for _, t := range b.touched {
		b.counts[t] = [nFields]uint32{}
	}
	b.touched = b.touched[:0]
}

func (m *Model) addText(b *bag, f int, lens *[nFields]uint32, text []byte) {
	identifiers(text, func(id []byte) { m.addIdent(b, f, lens, id) })
}

// maxIdentCache bounds the identifiers whose terms are remembered.
const maxIdentCache = 1 << 20

func (m *Model) addIdent(b *bag, f int, lens *[nFields]uint32, id []byte) {
	ts, ok := m.identCache[string(id)]
	if !ok {
		terms(string(id), stem, func(t string) { ts = append(ts, m.term(t)) })
		if len(m.identCache) >= maxIdentCache {
			clear(m.identCache)
		}
		m.identCache[string(id)] = ts
	}
	for _, t := range ts {
		b.add(t, f)
	}
	lens[f] += uint32(len(ts))
}

func sat(n uint32) uint8 {
	if n > 255 {
		return 255
	}
	return uint8(n)
}

// put adds or replaces one file.
func (m *Model) put(in input) {
	m.remove(in.path)
	id := uint32(len(m.files))
	f := file{path: in.path, lang: in.lang, symLo: uint32(len(m.syms))}

	b := &m.scratch
	m.addText(b, fPath, &f.len, []byte(pathWords(in.path)))
	for _, s := range in.syms {
		m.addIdent(b, fName, &f.len, []byte(s.Name))
		m.addText(b, fDoc, &f.len, []byte(s.Doc))
	}
	m.addText(b, fBody, &f.len, in.text)
	m.flush(b, id, m.post, m.df)
	f.terms = append([]uint32(nil), b.touched...)
	b.reset()
	for i := range f.len {
		m.sumLen[i] += uint64(f.len[i])
	}

	defs := map[uint32]bool{}
	symTerms := map[uint32]uint32{}
	var symTermOrder []uint32
	for _, s := range in.syms {
		sid := uint32(len(m.syms))
		sy := sym{file: id, name: m.name(s.Name), kind: kind(s.Kind), line: int32(s.Line)}
		m.symbolName(sy.name)
		if s.Parent != "" {
			sy.parent = m.name(s.Parent)
			m.symbolName(sy.parent)
		}
		var lens [nFields]uint32
		m.addIdent(b, sName, &lens, []byte(s.Name))
		if s.Parent != "" {
			m.addIdent(b, sParent, &lens, []byte(s.Parent))
		}
		m.addText(b, sSig, &lens, []byte(s.Signature))
		m.addText(b, sDoc, &lens, []byte(s.Doc))
		m.flush(b, sid, m.symPost, m.symDF)
		for _, t := range b.touched {
			if symTerms[t] == 0 {
				symTermOrder = append(symTermOrder, t)
			}
			symTerms[t]++
		}
		b.reset()
		for i := range lens {
			sy.len[i] = uint16(min(lens[i], 65535))
			m.symSumLen[i] += uint64(sy.len[i])
		}
		m.syms = append(m.syms, sy)
		m.nameSyms[sy.name] = append(m.nameSyms[sy.name], sid)
		if !defs[sy.name] && s.Name != "" {
			defs[sy.name] = true
			f.defs = append(f.defs, sy.name)
			m.definers[sy.name] = append(m.definers[sy.name], id)
		}
	}
	m.liveSyms += len(in.syms)
	for _, t := range symTermOrder {
		f.symTerms = append(f.symTerms, ref{t, symTerms[t]})
	}
	f.symHi = uint32(len(m.syms))

	counts := map[uint32]uint32{}
	var order []uint32
	for _, r := range in.refs {
		if r.Name == "" {
			continue
		}
		n := m.name(r.Name)
		if counts[n] == 0 {
			order = append(order, n)
		}
		counts[n]++
	}
	for _, n := range order {
		if defs[n] {
			continue // a file's own definitions are no edge
		}
		f.refs = append(f.refs, ref{n, counts[n]})
		m.users[n] = append(m.users[n], id)
	}

	m.files = append(m.files, f)
	m.byPath[in.path] = id
	m.live++
}

// flush appends one document's postings. Documents are numbered in the
// order they are added, so every term's postings stay sorted by document.
func (m *Model) flush(b *bag, id uint32, post [][]posting, df []uint32) {
	for _, tid := range b.touched {
		c := &b.counts[tid]
		p := posting{id: id}
		for i := range c {
			p.tf[i] = sat(c[i])
		}
		post[tid] = append(post[tid], p)
		df[tid]++
	}
}

// remove drops a file if present.
func (m *Model) remove(path string) {
	id, ok := m.byPath[path]
	if !ok {
		return
	}
	delete(m.byPath, path)
	f := &m.files[id]
	f.dead = true
	m.live--
	for i := range f.len {
		m.sumLen[i] -= uint64(f.len[i])
	}
	for _, t := range f.terms {
		m.df[t]--
	}
	for _, t := range f.symTerms {
		m.symDF[t.name] -= t.count
	}
	m.liveSyms -= int(f.symHi - f.symLo)
	for s := f.symLo; s < f.symHi; s++ {
		for i := range m.syms[s].len {
			m.symSumLen[i] -= uint64(m.syms[s].len[i])
		}
	}
	if len(m.files)-m.live > m.live+256 {
		m.compact()
	}
}

// kinds are the kinds of symbols, one string each however many symbols
// have them.
var kinds = map[string]string{}

func init() {
	for _, k := range []string{"func", "method", "class", "struct", "interface", "type", "enum",
		"trait", "impl", "const", "var", "field", "module", "macro"} {
		kinds[k] = k
	}
}

// kind returns the shared copy of a known kind, and k itself otherwise.
func kind(k string) string {
	if s, ok := kinds[k]; ok {
		return s
	}
	return k
}

// pathWords is the text of a path's field: its directories and base name
// without the extension, which says only the language.
func pathWords(p string) string {
	if i := strings.LastIndexByte(p, '.'); i > strings.LastIndexByte(p, '/')+1 {
		p = p[:i]
	}
	return p
}

// compact drops the dead files and symbols, and the terms no living
// document holds, renumbering what stays.
func (m *Model) compact() {
	fileTo := make([]uint32, len(m.files))
	files := make([]file, 0, m.live)
	symTo := make([]uint32, len(m.syms))
	syms := make([]sym, 0, m.liveSyms)
	const gone = ^uint32(0)
	for i := range m.files {
		f := m.files[i]
		if f.dead {
			fileTo[i] = gone
			for s := f.symLo; s < f.symHi; s++ {
				symTo[s] = gone
			}
			continue
		}
		fileTo[i] = uint32(len(files))
		lo := uint32(len(syms))
		for s := f.symLo; s < f.symHi; s++ {
			symTo[s] = uint32(len(syms))
			sy := m.syms[s]
			sy.file = fileTo[i]
			syms = append(syms, sy)
		}
		f.symLo, f.symHi = lo, uint32(len(syms))
		files = append(files, f)
	}
	termTo := make([]uint32, len(m.termStr))
	terms := make(map[string]uint32, len(m.terms))
	termStr := make([]string, 0, len(m.termStr))
	var post, symPost [][]posting
	var df, symDF []uint32
	for t, s := range m.termStr {
		if m.df[t] == 0 && m.symDF[t] == 0 {
			termTo[t] = gone
			continue
		}
		termTo[t] = uint32(len(termStr))
		terms[s] = termTo[t]
		termStr = append(termStr, s)
		post = append(post, renumber(m.post[t], fileTo))
		symPost = append(symPost, renumber(m.symPost[t], symTo))
		df = append(df, m.df[t])
		symDF = append(symDF, m.symDF[t])
	}
	for i := range files {
		f := &files[i]
		for j, t := range f.terms {
			f.terms[j] = termTo[t]
		}
		for j, t := range f.symTerms {
			f.symTerms[j].name = termTo[t.name]
		}
	}
	for _, ls := range [][][]uint32{m.definers, m.users} {
		for n, l := range ls {
			ls[n] = remap(l, fileTo)
		}
	}
	for n, l := range m.nameSyms {
		m.nameSyms[n] = remap(l, symTo)
	}
	m.files, m.syms = files, syms
	clear(m.identCache) // it holds the old term numbers
	m.terms, m.termStr, m.post, m.symPost, m.df, m.symDF = terms, termStr, post, symPost, df, symDF
	for p := range m.byPath {
		m.byPath[p] = fileTo[m.byPath[p]]
	}
}

func renumber(ps []posting, to []uint32) []posting {
	out := ps[:0:0]
	for _, p := range ps {
		if n := to[p.id]; n != ^uint32(0) {
			p.id = n
			out = append(out, p)
		}
	}
	return out
}

func remap(l []uint32, to []uint32) []uint32 {
	out := l[:0]
	for _, x := range l {
		if n := to[x]; n != ^uint32(0) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Remove drops a file; a path the model does not hold is no error.
func (m *Model) Remove(path string) { m.remove(path) }
