package rank

import (
	"slices"
	"sort"
	"strings"

	"github.com/miramem/mira/internal/text"
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

	// Put's working room, not saved.
	prep *Preparer

	// lz is the encoded form the model was opened from, while no change
	// has made it decode it whole (lazy.go); with it, the fields above
	// that it holds are filled only as queries need them.
	lz      *lazy
	damaged error // damage found decoding it whole

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
	if m.terms == nil {
		m.terms = indexStrings(m.termStr)
	}
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
	if m.names == nil {
		m.names = indexStrings(m.nameStr)
	}
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

// indexStrings maps each string of l to its index. A decoded model has
// its terms and names in sorted lists and no maps: queries search the
// sorted terms, and the maps are made by the first Put, which needs them.
func indexStrings(l []string) map[string]uint32 {
	m := make(map[string]uint32, len(l)+len(l)/8)
	for i, s := range l {
		m[s] = uint32(i)
	}
	return m
}

// lookupTerm returns the number of term t.
func (m *Model) lookupTerm(t string) (uint32, bool) {
	if m.terms != nil {
		id, ok := m.terms[t]
		return id, ok
	}
	i, ok := slices.BinarySearch(m.termStr, t)
	return uint32(i), ok
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

// maxIdentCache bounds the identifiers whose terms a Preparer remembers.
const maxIdentCache = 1 << 20

// A Preparer makes files ready for the model: it splits, stems and counts
// their words, the costly part of Put, without touching any model, so
// that several goroutines, each with its own Preparer, can prepare files
// while one merges them with PutPrepared. A Preparer is not safe for
// concurrent use.
type Preparer struct {
	ident map[string][]uint32 // identifier -> its terms, numbered in words
	dict  map[string]uint32   // term -> number
	words []string            // number -> term
	b     bag
	syms  map[uint32]uint32 // term -> index in the file's symTerms
	defs  map[string]bool
}

// NewPreparer returns a Preparer with an empty cache.
func NewPreparer() *Preparer {
	return &Preparer{ident: map[string][]uint32{}, dict: map[string]uint32{}, syms: map[uint32]uint32{}, defs: map[string]bool{}}
}

// Prepared is a file ready for PutPrepared: its terms counted per field,
// its symbols' likewise, the names it uses.
type Prepared struct {
	path, lang string
	terms      []tcount // the file's terms, first seen first
	len        [nFields]uint32
	syms       []psym
	symTerms   []string // the terms its symbols hold, first seen first
	symCount   []uint32 // how many of its symbols hold each
	refs       []pref   // the names it uses, first used first
}

// tcount is a term and its count in each field; term indexes the
// Prepared's terms or symTerms.
type tcount struct {
	term string
	at   uint32 // index in symTerms, for a symbol's terms
	c    [nFields]uint32
}

type psym struct {
	name, parent, kind string
	line               int32
	terms              []tcount
	len                [nFields]uint32
}

// pref is a used name with its count; def when the file defines it too.
type pref struct {
	name  string
	count uint32
	def   bool
}

// Prepare makes d ready for PutPrepared.
func (p *Preparer) Prepare(d Doc) *Prepared { return p.prepare(docInput(d)) }

func (p *Preparer) term(t string) uint32 {
	if id, ok := p.dict[t]; ok {
		return id
	}
	id := uint32(len(p.words))
	p.dict[t] = id
	p.words = append(p.words, t)
	return id
}

func (p *Preparer) addText(f int, lens *[nFields]uint32, text []byte) {
	identifiers(text, func(id []byte) { p.addIdent(f, lens, id) })
}

func (p *Preparer) addIdent(f int, lens *[nFields]uint32, id []byte) {
	ts, ok := p.ident[string(id)]
	if !ok {
		terms(string(id), text.Stem, func(t string) { ts = append(ts, p.term(t)) })
		p.ident[string(id)] = ts
	}
	for _, t := range ts {
		p.b.add(t, f)
	}
	lens[f] += uint32(len(ts))
}

// take empties the bag into a list of term counts, first seen first.
func (p *Preparer) take() []tcount {
	out := make([]tcount, len(p.b.touched))
	for i, t := range p.b.touched {
		out[i] = tcount{term: p.words[t], c: p.b.counts[t]}
	}
	return out
}

func (p *Preparer) prepare(in input) *Prepared {
	if len(p.ident) >= maxIdentCache || len(p.words) >= maxIdentCache {
		clear(p.ident)
		clear(p.dict)
		p.words = p.words[:0:0]
		p.b = bag{}
	}
	out := &Prepared{path: in.path, lang: in.lang}
	p.addText(fPath, &out.len, []byte(pathWords(in.path)))
	for _, s := range in.syms {
		p.addIdent(fName, &out.len, []byte(s.Name))
		p.addText(fDoc, &out.len, []byte(s.Doc))
	}
	p.addText(fBody, &out.len, in.text)
	out.terms = p.take()
	p.b.reset()

	clear(p.syms)
	clear(p.defs)
	out.syms = make([]psym, len(in.syms))
	for i, s := range in.syms {
		ps := psym{name: s.Name, parent: s.Parent, kind: kind(s.Kind), line: int32(s.Line)}
		p.addIdent(sName, &ps.len, []byte(s.Name))
		if s.Parent != "" {
			p.addIdent(sParent, &ps.len, []byte(s.Parent))
		}
		p.addText(sSig, &ps.len, []byte(s.Signature))
		p.addText(sDoc, &ps.len, []byte(s.Doc))
		ps.terms = p.take()
		for j, t := range p.b.touched {
			at, ok := p.syms[t]
			if !ok {
				at = uint32(len(out.symTerms))
				p.syms[t] = at
				out.symTerms = append(out.symTerms, p.words[t])
				out.symCount = append(out.symCount, 0)
			}
			out.symCount[at]++
			ps.terms[j].at = at
		}
		p.b.reset()
		out.syms[i] = ps
		if s.Name != "" {
			p.defs[s.Name] = true
		}
	}

	at := map[string]int{}
	for _, r := range in.refs {
		if r.Name == "" {
			continue
		}
		i, ok := at[r.Name]
		if !ok {
			i = len(out.refs)
			at[r.Name] = i
			out.refs = append(out.refs, pref{name: r.Name, def: p.defs[r.Name]})
		}
		out.refs[i].count++
	}
	return out
}

func sat(n uint32) uint8 {
	if n > 255 {
		return 255
	}
	return uint8(n)
}

// put adds or replaces one file.
func (m *Model) put(in input) {
	if m.prep == nil {
		m.prep = NewPreparer()
	}
	m.PutPrepared(m.prep.prepare(in))
}

// PutPrepared adds a prepared file, or replaces the file of the same path:
// Put without the work of Prepare.
func (m *Model) PutPrepared(in *Prepared) {
	m.thaw()
	m.remove(in.path)
	id := uint32(len(m.files))
	f := file{path: in.path, lang: in.lang, symLo: uint32(len(m.syms)), len: in.len}

	f.terms = make([]uint32, len(in.terms))
	for i := range in.terms {
		t := m.term(in.terms[i].term)
		f.terms[i] = t
		m.post[t] = append(m.post[t], posting{id: id, tf: sats(&in.terms[i].c)})
		m.df[t]++
	}
	for i := range f.len {
		m.sumLen[i] += uint64(f.len[i])
	}

	var defs []uint32
	symTerm := make([]uint32, len(in.symTerms))
	made := make([]bool, len(in.symTerms))
	for i := range in.syms {
		s := &in.syms[i]
		sid := uint32(len(m.syms))
		sy := sym{file: id, name: m.name(s.name), kind: s.kind, line: s.line}
		m.symbolName(sy.name)
		if s.parent != "" {
			sy.parent = m.name(s.parent)
			m.symbolName(sy.parent)
		}
		for j := range s.terms {
			tc := &s.terms[j]
			if !made[tc.at] {
				symTerm[tc.at] = m.term(tc.term)
				made[tc.at] = true
			}
			t := symTerm[tc.at]
			m.symPost[t] = append(m.symPost[t], posting{id: sid, tf: sats(&tc.c)})
			m.symDF[t]++
		}
		for j := range s.len {
			sy.len[j] = uint16(min(s.len[j], 65535))
			m.symSumLen[j] += uint64(sy.len[j])
		}
		m.syms = append(m.syms, sy)
		m.nameSyms[sy.name] = append(m.nameSyms[sy.name], sid)
		if s.name != "" && !has(defs, sy.name) {
			defs = append(defs, sy.name)
			m.definers[sy.name] = append(m.definers[sy.name], id)
		}
	}
	f.defs = defs
	m.liveSyms += len(in.syms)
	if len(in.symTerms) > 0 {
		f.symTerms = make([]ref, len(in.symTerms))
		for i := range in.symTerms {
			f.symTerms[i] = ref{symTerm[i], in.symCount[i]}
		}
	}
	f.symHi = uint32(len(m.syms))

	for _, r := range in.refs {
		n := m.name(r.name)
		if r.def {
			continue // a file's own definitions are no edge
		}
		f.refs = append(f.refs, ref{n, r.count})
		m.users[n] = append(m.users[n], id)
	}

	m.files = append(m.files, f)
	m.byPath[in.path] = id
	m.live++
}

// has reports whether the few ids of a file's definitions hold n; a map
// costs more below some hundreds.
func has(ids []uint32, n uint32) bool {
	if len(ids) > 64 {
		return slices.Contains(ids, n)
	}
	for _, x := range ids {
		if x == n {
			return true
		}
	}
	return false
}

func sats(c *[nFields]uint32) (tf [nFields]uint8) {
	for i := range c {
		tf[i] = sat(c[i])
	}
	return tf
}

// remove drops a file if present.
func (m *Model) remove(path string) {
	id, ok := m.byPath[path]
	if !ok {
		return
	}
	if m.lz != nil {
		m.thaw()
		if id, ok = m.byPath[path]; !ok {
			return
		}
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
	m.thaw()
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
