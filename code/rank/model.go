package rank

import (
	"slices"
	"sort"
	"strings"
	"sync/atomic"

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

	// epoch names the numbering of terms and names: a new one for each
	// model and each compaction, so that a Preparer's memory of the
	// numbers (see known) is never used across them.
	epoch uint64

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

// epochs numbers the models' numberings (Model.epoch).
var epochs atomic.Uint64

func (m *Model) init() {
	m.epoch = epochs.Add(1)
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
// A variable for the tests.
var maxIdentCache = 1 << 20

// frontBits sizes a Preparer's table of the identifiers met last, by
// hash: most occurrences are of a few identifiers, found there without a
// lookup in the large map of all of them.
const frontBits = 13

// identRec is an identifier a Preparer met, and its terms.
type identRec struct {
	key    string
	off, n uint32 // its terms: the Preparer's arena[off:off+n]
}

// A Preparer makes files ready for the model: it splits, stems and counts
// their words, the costly part of Put, without touching any model, so
// that several goroutines, each with its own Preparer, can prepare files
// while one merges them with PutPrepared. A Preparer is not safe for
// concurrent use, but the files it prepared may be merged by another
// goroutine while it prepares more.
//
// It numbers the terms and names it meets, and splits each identifier
// once; PutPrepared remembers the model's numbers for a Preparer's, so
// that merging looks no string up twice either.
type Preparer struct {
	ident   map[string]uint32 // identifier -> index in idents
	idents  []identRec
	arena   []uint32               // the identifiers' terms, numbered in words
	front   [1 << frontBits]uint32 // hash of an identifier -> 1 + index in idents
	dict    map[string]uint32      // term -> number
	parts   map[string]uint32      // lower-case part of an identifier -> its stem's number, or noTerm
	scratch []byte
	words   []string          // number -> term
	names   map[string]uint32 // symbol and used name -> number; "" is 0
	nameL   []string          // number -> name
	gen     uint32            // bumped each time the numbers above start again
	b       bag

	// Marks of the file being prepared, by term and by name number,
	// valid where the stamp is the file's: no map per file.
	stamp     uint32
	symStamp  []uint32
	symAt     []uint32 // term -> index in the file's symTerms
	nameStamp []uint32
	nameRef   []uint32 // name -> index in the file's refs
	defStamp  []uint32 // name -> the file defines it, where equal to stamp

	// The numbers a model gave the terms and names above: 1 + the
	// model's, 0 when not yet asked. PutPrepared alone reads and writes
	// these, under the model's exclusive access; they hold for the model
	// of epoch kEpoch and the numbering kGen.
	kEpoch uint64
	kGen   uint32
	kTerms []uint32
	kNames []uint32
}

// NewPreparer returns a Preparer with an empty cache.
func NewPreparer() *Preparer {
	p := &Preparer{}
	p.forget()
	return p
}

// forget starts the numbers of terms, names and identifiers again. The
// lists are made anew, not emptied: files prepared before still name
// their terms and names in the old ones.
func (p *Preparer) forget() {
	p.ident = map[string]uint32{}
	p.idents = nil
	p.arena = nil
	p.front = [1 << frontBits]uint32{}
	p.dict = map[string]uint32{}
	p.parts = map[string]uint32{}
	p.words = nil
	p.names = map[string]uint32{"": 0}
	p.nameL = []string{""}
	p.b = bag{}
	p.symStamp, p.symAt, p.nameStamp, p.nameRef, p.defStamp = nil, nil, nil, nil, nil
	p.gen++
}

// Prepared is a file ready for PutPrepared: its terms counted per field,
// its symbols' likewise, the names it uses. Terms and names are numbered
// as its Preparer numbered them when it was prepared (words, names).
type Prepared struct {
	path, lang string
	prep       *Preparer
	gen        uint32
	words      []string // the Preparer's terms, by number
	names      []string // and names
	terms      []tcount // the file's terms, first seen first
	len        [nFields]uint32
	syms       []psym
	symTerms   []uint32 // the terms its symbols hold, first seen first
	symCount   []uint32 // how many of its symbols hold each
	refs       []pref   // the names it uses, first used first
}

// tcount is a term and its count in each field; at indexes the
// Prepared's symTerms, for a symbol's terms.
type tcount struct {
	term uint32
	at   uint32
	c    [nFields]uint32
}

type psym struct {
	name, parent uint32 // numbers of names; 0 is ""
	kind         string
	line         int32
	terms        []tcount
	len          [nFields]uint32
}

// pref is a used name with its count; def when the file defines it too.
type pref struct {
	name  uint32
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

func (p *Preparer) name(s string) uint32 {
	if id, ok := p.names[s]; ok {
		return id
	}
	id := uint32(len(p.nameL))
	p.names[s] = id
	p.nameL = append(p.nameL, s)
	return id
}

func (p *Preparer) addText(f int, lens *[nFields]uint32, text []byte) {
	identifiers(text, func(id []byte) { p.addIdent(f, lens, id) })
}

// lookup returns where the terms of identifier id are in the arena,
// splitting and stemming it the first time.
func (p *Preparer) lookup(id []byte) (uint32, uint32) {
	h := uint32(2166136261) // FNV-1a
	for _, c := range id {
		h = (h ^ uint32(c)) * 16777619
	}
	slot := &p.front[h>>(32-frontBits)]
	if i := *slot; i != 0 && p.idents[i-1].key == string(id) {
		r := &p.idents[i-1]
		return r.off, r.n
	}
	i, ok := p.ident[string(id)]
	if !ok {
		key := string(id)
		off := uint32(len(p.arena))
		p.terms(key)
		i = uint32(len(p.idents))
		p.idents = append(p.idents, identRec{key: key, off: off, n: uint32(len(p.arena)) - off})
		p.ident[key] = i
	}
	*slot = i + 1
	r := &p.idents[i]
	return r.off, r.n
}

// noTerm marks a part of an identifier that is no term: short, or a stop
// word.
const noTerm = ^uint32(0)

// terms appends the terms of a new identifier to the arena, as the
// function terms gives them. An ASCII identifier's parts are lower-cased
// in place and each part's stem is remembered, so that what is computed
// for an identifier the Preparer never met is a few lookups, with no
// allocation but for a new part or term.
func (p *Preparer) terms(key string) {
	for i := 0; i < len(key); i++ {
		if key[i] >= 0x80 {
			terms(key, text.Stem, func(t string) { p.arena = append(p.arena, p.term(t)) })
			return
		}
	}
	w := p.scratch[:0]
	n := 0
	splitBounds(key, func(a, b int) {
		n++
		at := len(w)
		for i := a; i < b; i++ {
			c := key[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			w = append(w, c)
		}
		part := w[at:]
		if len(part) < 2 {
			return
		}
		t, ok := p.parts[string(part)]
		if !ok {
			s := string(part)
			t = noTerm
			if !stopWords[s] {
				t = p.term(text.Stem(s))
			}
			p.parts[s] = t
		}
		if t != noTerm {
			p.arena = append(p.arena, t)
		}
	})
	if n > 1 && len(w) >= 3 && !stopWords[string(w)] {
		t, ok := p.dict[string(w)]
		if !ok {
			t = p.term(string(w))
		}
		p.arena = append(p.arena, t)
	}
	p.scratch = w
}

func (p *Preparer) addIdent(f int, lens *[nFields]uint32, id []byte) {
	off, n := p.lookup(id)
	for _, t := range p.arena[off : off+n] {
		p.b.add(t, f)
	}
	lens[f] += n
}

// take empties the bag into a list of term counts, first seen first.
func (p *Preparer) take() []tcount {
	out := make([]tcount, len(p.b.touched))
	for i, t := range p.b.touched {
		out[i] = tcount{term: t, c: p.b.counts[t]}
	}
	return out
}

// grow makes l hold n entries.
func grow(l []uint32, n int) []uint32 {
	if len(l) < n {
		l = append(l, make([]uint32, n-len(l)+len(l)/2)...)
	}
	return l
}

func (p *Preparer) prepare(in input) *Prepared {
	if len(p.ident) >= maxIdentCache || len(p.words) >= maxIdentCache || len(p.nameL) >= maxIdentCache {
		p.forget()
	}
	p.stamp++
	if p.stamp == 0 {
		clear(p.symStamp)
		clear(p.nameStamp)
		clear(p.defStamp)
		p.stamp = 1
	}
	out := &Prepared{path: in.path, lang: in.lang, prep: p, gen: p.gen}
	p.addText(fPath, &out.len, []byte(pathWords(in.path)))
	for _, s := range in.syms {
		p.addIdent(fName, &out.len, []byte(s.Name))
		p.addText(fDoc, &out.len, []byte(s.Doc))
	}
	p.addText(fBody, &out.len, in.text)
	out.terms = p.take()
	p.b.reset()

	out.syms = make([]psym, len(in.syms))
	for i, s := range in.syms {
		ps := psym{name: p.name(s.Name), kind: kind(s.Kind), line: int32(s.Line)}
		p.addIdent(sName, &ps.len, []byte(s.Name))
		if s.Parent != "" {
			ps.parent = p.name(s.Parent)
			p.addIdent(sParent, &ps.len, []byte(s.Parent))
		}
		p.addText(sSig, &ps.len, []byte(s.Signature))
		p.addText(sDoc, &ps.len, []byte(s.Doc))
		ps.terms = p.take()
		p.symStamp = grow(p.symStamp, len(p.words))
		p.symAt = grow(p.symAt, len(p.words))
		for j, t := range p.b.touched {
			if p.symStamp[t] != p.stamp {
				p.symStamp[t] = p.stamp
				p.symAt[t] = uint32(len(out.symTerms))
				out.symTerms = append(out.symTerms, t)
				out.symCount = append(out.symCount, 0)
			}
			at := p.symAt[t]
			out.symCount[at]++
			ps.terms[j].at = at
		}
		p.b.reset()
		out.syms[i] = ps
		if ps.name != 0 {
			p.defStamp = grow(p.defStamp, int(ps.name)+1)
			p.defStamp[ps.name] = p.stamp
		}
	}

	for _, r := range in.refs {
		if r.Name == "" {
			continue
		}
		n := p.name(r.Name)
		if int(n) >= len(p.nameStamp) {
			p.nameStamp = grow(p.nameStamp, int(n)+1)
			p.nameRef = grow(p.nameRef, len(p.nameStamp))
		}
		if int(n) >= len(p.defStamp) {
			p.defStamp = grow(p.defStamp, int(n)+1)
		}
		if p.nameStamp[n] != p.stamp {
			p.nameStamp[n] = p.stamp
			p.nameRef[n] = uint32(len(out.refs))
			out.refs = append(out.refs, pref{name: n, def: p.defStamp[n] == p.stamp})
		}
		out.refs[p.nameRef[n]].count++
	}
	out.words, out.names = p.words, p.nameL
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

// known returns the Preparer of in when the model's numbers it remembers
// may be used for in's terms and names, nil when not (in was prepared
// before its Preparer started its numbers again, and newer files of it
// were merged since).
func (m *Model) known(in *Prepared) *Preparer {
	p := in.prep
	if p == nil {
		return nil
	}
	if p.kEpoch != m.epoch || p.kGen != in.gen {
		if p.kEpoch == m.epoch && in.gen < p.kGen {
			return nil
		}
		p.kEpoch, p.kGen = m.epoch, in.gen
		clear(p.kTerms)
		clear(p.kNames)
	}
	return p
}

// termOf returns the model's number of in's term t.
func (m *Model) termOf(k *Preparer, in *Prepared, t uint32) uint32 {
	if k != nil && int(t) < len(k.kTerms) && k.kTerms[t] != 0 {
		return k.kTerms[t] - 1
	}
	id := m.term(in.words[t])
	if k != nil {
		k.kTerms = grow(k.kTerms, int(t)+1)
		k.kTerms[t] = id + 1
	}
	return id
}

// nameID returns the model's number of in's name n.
func (m *Model) nameID(k *Preparer, in *Prepared, n uint32) uint32 {
	if k != nil && int(n) < len(k.kNames) && k.kNames[n] != 0 {
		return k.kNames[n] - 1
	}
	id := m.name(in.names[n])
	if k != nil {
		k.kNames = grow(k.kNames, int(n)+1)
		k.kNames[n] = id + 1
	}
	return id
}

// PutPrepared adds a prepared file, or replaces the file of the same path:
// Put without the work of Prepare.
func (m *Model) PutPrepared(in *Prepared) {
	m.thaw()
	m.remove(in.path)
	k := m.known(in)
	id := uint32(len(m.files))
	f := file{path: in.path, lang: in.lang, symLo: uint32(len(m.syms)), len: in.len}

	f.terms = make([]uint32, len(in.terms))
	for i := range in.terms {
		t := m.termOf(k, in, in.terms[i].term)
		f.terms[i] = t
		m.post[t] = append(m.post[t], posting{id: id, tf: sats(&in.terms[i].c)})
		m.df[t]++
	}
	for i := range f.len {
		m.sumLen[i] += uint64(f.len[i])
	}

	var defs []uint32
	symTerm := make([]uint32, len(in.symTerms))
	for i, t := range in.symTerms {
		symTerm[i] = m.termOf(k, in, t)
	}
	for i := range in.syms {
		s := &in.syms[i]
		sid := uint32(len(m.syms))
		sy := sym{file: id, name: m.nameID(k, in, s.name), kind: s.kind, line: s.line}
		m.symbolName(sy.name)
		if s.parent != 0 {
			sy.parent = m.nameID(k, in, s.parent)
			m.symbolName(sy.parent)
		}
		for j := range s.terms {
			tc := &s.terms[j]
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
		if s.name != 0 && !has(defs, sy.name) {
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
		n := m.nameID(k, in, r.name)
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
	m.epoch = epochs.Add(1) // terms renumbered
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
