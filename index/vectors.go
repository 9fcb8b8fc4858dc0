package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/internal/rawfile"
)

// The vector store of a generation: one row per live document (what the
// filters and the ranking need, and the hash of the embedded text) and the
// document's vector, in a base file written whole and an append-only log of
// the changes since, replayed on load. See "Vectors" in doc.go for the
// format.

const (
	vecMagic   = "MIRAVEC\x00"
	vecVersion = 5
	vecPrefix  = "vectors-"
	logSuffix  = ".log"

	opPut = 1
	opDel = 2

	flagVector  = 1 // the row has a vector
	flagPending = 2 // the embedder failed: the row waits for its vector
	flagCreated = 4 // the row's creation time is known
	flagFrom    = 8 // the row names the entries it was taken from (facts.go)

	// maxRecord bounds a log record, so that a damaged length cannot make
	// a reader allocate without limit: a row and a vector of 65,536
	// dimensions with room to spare.
	maxRecord = 1 << 20
)

// castagnoli is the CRC used for every checksum of the vector files: the
// processor computes it (SSE 4.2, ARMv8 CRC), about ten times as fast as
// reading the bytes from memory.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// vecRow is one live document of the vector store. A server keeps one per
// memory, so its fields are laid out without padding and its tags are in
// the store's pool: 120 bytes (it was 152 with the content hash a string
// and the tags a slice of their own), plus the strings it points to.
type vecRow struct {
	path, id   string
	hash       textHash // of the embedded text
	content    docHash  // Doc.Hash: the store's hash of the text, for duplicates
	created    int64    // unix ns, valid when hasCreated
	lsum       uint64   // lexSum of its BM25 text, role and pin
	kind       int32    // kind, scope, project, role and pin index vecStore.dict
	scope      int32
	project    int32
	role, pin  int32
	flen       uint32 // the number of terms of its BM25 text (lexical.go)
	vec        int32  // vector ordinal, -1: none (no words, or pending)
	tagOff     uint32 // its tags are vecStore.tagPool[tagOff:][:ntag]
	ntag       uint32
	hasCreated bool
	pending    bool // the embedder failed; embedded again later
	dead       bool // removed or replaced by a later log record
	linked     bool // it names entries it was taken from: vecStore.from
}

// docHash is a Doc.Hash in 16 bytes: the 32 lowercase hex digits
// mem.ContentHash gives, decoded (at 100k entries a server kept 3.2 MB of
// them as text). Any other string, which Mira does not make, is kept as
// the first 16 bytes of its SHA-256 and written back as their digits,
// which pack to the same bytes: equal hashes stay equal and different
// ones different (but for a collision of SHA-256). The zero value is no
// hash.
type docHash [16]byte

func packHash(s string) docHash {
	var h docHash
	if s == "" {
		return h
	}
	if len(s) == 2*len(h) {
		// Decoded here, a byte at a time: with strings.IndexFunc and
		// hex.Decode, the hashes of a million rows took 0.25 s of a
		// server's first search.
		ok := true
		for i := range h {
			hi, lo := lowerHex(s[2*i]), lowerHex(s[2*i+1])
			if hi|lo > 0xf {
				ok = false
				break
			}
			h[i] = hi<<4 | lo
		}
		if ok && h != (docHash{}) {
			return h
		}
	}
	sum := sha256.Sum256([]byte(s))
	copy(h[:], sum[:])
	if h == (docHash{}) {
		h[0] = 1
	}
	return h
}

// lowerHex is the value of a lower-case hexadecimal digit, 0xff for any
// other byte.
func lowerHex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return 0xff
}

// String returns the hash as Doc.Hash spells it, "" for none.
func (h docHash) String() string {
	if h == (docHash{}) {
		return ""
	}
	return hex.EncodeToString(h[:])
}

// textHash identifies an embedded text: the first 16 bytes of its SHA-256.
type textHash [16]byte

// vecStore is a generation's vectors in memory.
type vecStore struct {
	embedder string
	dim      int
	dict     []string
	dictIx   map[string]int32
	rows     []vecRow
	tagPool  []int32          // the rows' tags (see tagsOf), of dead rows too
	nbase    int              // rows[:nbase] come from the base file, sorted by path
	logIx    map[string]int32 // path → row, for rows from the log
	// base holds the base file's vectors (vector i is base[i*dim:(i+1)*dim]
	// for i < nbaseVec), mapped from the file where possible, and vecs
	// those the log or an update added after them.
	base     []float32
	nbaseVec int
	vecs     []float32
	mapped   *sharedMap // base's mapping, shared with the stores extended from this one
	// logged counts the records of the log (for compaction), replayed
	// the bytes of it applied.
	logged   int
	replayed int64
	// rowsOnly: the vectors were not read (vecs is empty); a row's vec
	// says only whether it has one.
	rowsOnly bool
	// q8 is the base's 8-bit codes, shared with the stores extended from
	// this one, and q8log those of the vectors after the base's, this
	// store's own (see codesFor).
	q8    *q8Base
	q8log *q8Log
	// lex is the base's postings, lexLog those of the rows the log and
	// updates added (lexical.go).
	lex     *lexBase
	lexLog  map[string][]lexPost
	lexNorm *lexNorms // nil: not kept (a store changed in place)
	// from holds the ids a linked row names (Doc.From), by row, and
	// links what facts.go makes of them.
	from  map[int32][]string
	links *linkTable
}

func newVecStore(embedder string, dim int) *vecStore {
	return &vecStore{embedder: embedder, dim: dim, dictIx: map[string]int32{}, logIx: map[string]int32{},
		q8: &q8Base{}, q8log: &q8Log{}, lexNorm: &lexNorms{}, links: &linkTable{}}
}

// intern returns the dictionary index of s.
func (vs *vecStore) intern(s string) int32 {
	if i, ok := vs.dictIx[s]; ok {
		return i
	}
	i := int32(len(vs.dict))
	s = strings.Clone(s)
	vs.dict = append(vs.dict, s)
	vs.dictIx[s] = i
	return i
}

// internBytes is intern without allocating when b is known.
func (vs *vecStore) internBytes(b []byte) int32 {
	if i, ok := vs.dictIx[string(b)]; ok {
		return i
	}
	return vs.intern(string(b))
}

// tagsOf returns the tags of row r of vs.
func (vs *vecStore) tagsOf(r *vecRow) []int32 {
	return vs.tagPool[r.tagOff : r.tagOff+r.ntag]
}

// addTags makes room for n tags of a row at the end of the pool and
// returns where they start and n.
func (vs *vecStore) addTags(n int) (off, count uint32) {
	off = uint32(len(vs.tagPool))
	if n > 0 {
		vs.tagPool = slices.Grow(vs.tagPool, n)[:len(vs.tagPool)+n]
	}
	return off, uint32(n)
}

// fields sets c's id, project and creation time from row r.
func (vs *vecStore) fields(r int, c *Candidate) {
	row := &vs.rows[r]
	c.ID, c.Project, c.Kind = row.id, vs.dict[row.project], vs.dict[row.kind]
	if row.hasCreated {
		c.CreatedAt = time.Unix(0, row.created).UTC()
	}
}

// find returns the live row of path, or -1.
func (vs *vecStore) find(p string) int {
	if i, ok := vs.logIx[p]; ok {
		if vs.rows[i].dead {
			return -1
		}
		return int(i)
	}
	i, ok := slices.BinarySearchFunc(vs.rows[:vs.nbase], p, func(r vecRow, p string) int { return strings.Compare(r.path, p) })
	if !ok || vs.rows[i].dead {
		return -1
	}
	return i
}

// vector returns row i's vector, nil when it has none.
func (vs *vecStore) vector(i int) []float32 {
	v := vs.rows[i].vec
	if v < 0 {
		return nil
	}
	if int(v) < vs.nbaseVec {
		return vs.base[int(v)*vs.dim : (int(v)+1)*vs.dim : (int(v)+1)*vs.dim]
	}
	v -= int32(vs.nbaseVec)
	return vs.vecs[int(v)*vs.dim : (int(v)+1)*vs.dim : (int(v)+1)*vs.dim]
}

// counts returns the number of live rows, of those with a vector and of
// those waiting for one.
func (vs *vecStore) counts() (live, vectors, pending int) {
	for i := range vs.rows {
		r := &vs.rows[i]
		if r.dead {
			continue
		}
		live++
		if r.vec >= 0 {
			vectors++
		}
		if r.pending {
			pending++
		}
	}
	return
}

// vecDoc is a document as the vector store keeps it, with its vector (nil:
// none).
type vecDoc struct {
	path, id, kind, scope, project string
	role, pin                      string
	tags                           []string
	created                        time.Time
	hash                           textHash
	content                        string // Doc.Hash
	vec                            []float32
	pending                        bool
	// The BM25 text's terms (as appendTerms encodes them; nil: none) and
	// length, and lexSum of it, role and pin.
	terms []byte
	flen  uint32
	lsum  uint64
	from  []string // Doc.From
}

// put adds or replaces the row of d.
func (vs *vecStore) put(d vecDoc) {
	vs.lexNorm, vs.links = &lexNorms{}, &linkTable{}
	if i := vs.find(d.path); i >= 0 {
		vs.rows[i].dead = true
	}
	r := vecRow{
		path: d.path, id: d.id, hash: d.hash, content: packHash(d.content),
		kind: vs.intern(d.kind), scope: vs.intern(d.scope), project: vs.intern(d.project),
		role: vs.intern(d.role), pin: vs.intern(d.pin), flen: d.flen, lsum: d.lsum,
		vec: -1, pending: d.pending,
	}
	if !d.created.IsZero() {
		r.created, r.hasCreated = d.created.UnixNano(), true
	}
	r.tagOff, r.ntag = vs.addTags(len(d.tags))
	for j, t := range d.tags {
		vs.tagPool[int(r.tagOff)+j] = vs.intern(t)
	}
	switch {
	case d.vec != nil && vs.rowsOnly:
		r.vec = 0
	case d.vec != nil:
		r.vec = int32(vs.nbaseVec + len(vs.vecs)/vs.dim)
		vs.vecs = append(vs.vecs, d.vec...)
	}
	vs.logIx[d.path] = int32(len(vs.rows))
	vs.addTerms(len(vs.rows), decodeTerms(d.terms))
	r.linked = vs.setFrom(len(vs.rows), d.from)
	vs.rows = addRow(vs.rows, r)
}

// addRow appends r to rows, growing them by a sixteenth when full: the
// log adds rows a few at a time to a base of up to 100,000 and more,
// which append's quarter would leave 3 MB too large at 100,000 rows.
func addRow(rows []vecRow, r vecRow) []vecRow {
	if len(rows) == cap(rows) {
		grown := make([]vecRow, len(rows), len(rows)+max(64, len(rows)/16))
		copy(grown, rows)
		rows = grown
	}
	return append(rows, r)
}

// unchanged reports whether path already has a live, embedded row for
// exactly this document: same text and same fields. Such a document is
// re-read when its file was written moments before a check (its time stamp
// cannot yet rule out a same-size rewrite) and must not be embedded again:
// alone, outside its run of neighbours, it would get another vector.
func (vs *vecStore) unchanged(d *vecDoc) bool {
	i := vs.find(d.path)
	if i < 0 {
		return false
	}
	r := &vs.rows[i]
	if r.dead || r.pending || r.vec < 0 || r.hash != d.hash || r.id != d.id || r.content != packHash(d.content) ||
		vs.dict[r.kind] != d.kind || vs.dict[r.scope] != d.scope || vs.dict[r.project] != d.project ||
		vs.dict[r.role] != d.role || vs.dict[r.pin] != d.pin || r.flen != d.flen || r.lsum != d.lsum ||
		int(r.ntag) != len(d.tags) || r.hasCreated == d.created.IsZero() ||
		(r.hasCreated && r.created != d.created.UnixNano()) || !slices.Equal(vs.fromOf(i), d.from) {
		return false
	}
	for j, t := range vs.tagsOf(r) {
		if vs.dict[t] != d.tags[j] {
			return false
		}
	}
	return true
}

// del removes the row of path, if any.
func (vs *vecStore) del(p string) {
	vs.lexNorm, vs.links = &lexNorms{}, &linkTable{}
	if i := vs.find(p); i >= 0 {
		vs.rows[i].dead = true
	}
}

// doc returns row i as a vecDoc (its vector not copied).
func (vs *vecStore) doc(i int) vecDoc {
	r := &vs.rows[i]
	d := vecDoc{
		path: r.path, id: r.id, hash: r.hash, content: r.content.String(), pending: r.pending,
		kind: vs.dict[r.kind], scope: vs.dict[r.scope], project: vs.dict[r.project],
		role: vs.dict[r.role], pin: vs.dict[r.pin], flen: r.flen, lsum: r.lsum,
		vec: vs.vector(i), from: vs.fromOf(i),
	}
	if r.hasCreated {
		d.created = time.Unix(0, r.created).UTC()
	}
	for _, t := range vs.tagsOf(r) {
		d.tags = append(d.tags, vs.dict[t])
	}
	return d
}

// maxRowSize bounds the length of d's encoded row (appendRow).
func maxRowSize(d *vecDoc) int {
	n := len(d.path) + len(d.id) + len(d.kind) + len(d.scope) + len(d.project) + len(d.role) + len(d.pin) +
		len(d.content) + len(d.hash) + 8
	for _, t := range d.tags {
		n += len(t)
	}
	for _, id := range d.from {
		n += len(id)
	}
	// A uvarint length per string and the tag and id counts, the flags
	// byte, the creation time's and the length's varints.
	return n + (11+len(d.tags)+len(d.from))*binary.MaxVarintLen64 + 1
}

// appendRow encodes a document's row (without its vector).
func appendRow(b []byte, d *vecDoc, hasVec bool) []byte {
	b, at := appendRowAt(b, d)
	b[at] |= vecFlags(hasVec, d.pending)
	return b
}

// vecFlags are a row's flags that its vector decides.
func vecFlags(hasVec, pending bool) byte {
	var flags byte
	if hasVec {
		flags |= flagVector
	}
	if pending {
		flags |= flagPending
	}
	return flags
}

// appendRowAt encodes a document's row with the flags of its vector
// (vecFlags) clear, and returns where its flags byte is. It reads neither
// d.vec nor d.pending, which may be set meanwhile (see layBase).
func appendRowAt(b []byte, d *vecDoc) ([]byte, int) {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(d.path)
	str(d.id)
	str(d.kind)
	str(d.scope)
	str(d.project)
	b = binary.AppendUvarint(b, uint64(len(d.tags)))
	for _, t := range d.tags {
		str(t)
	}
	var flags byte
	var created int64
	if !d.created.IsZero() {
		flags |= flagCreated
		created = d.created.UnixNano()
	}
	if len(d.from) > 0 {
		flags |= flagFrom
	}
	at := len(b)
	b = append(b, flags)
	b = binary.AppendVarint(b, created)
	b = append(b, d.hash[:]...)
	str(d.content)
	str(d.role)
	str(d.pin)
	b = binary.AppendUvarint(b, uint64(d.flen))
	b = binary.LittleEndian.AppendUint64(b, d.lsum)
	if len(d.from) > 0 {
		b = binary.AppendUvarint(b, uint64(len(d.from)))
		for _, id := range d.from {
			str(id)
		}
	}
	return b, at
}

// rowReader decodes rows. Strings are cut from src, which the caller makes
// sure is not modified afterwards (the rows of a base file are substrings
// of one string holding the whole row section).
type rowReader struct {
	src string
	off int
	err error
	// from holds the ids the last row read names (flagFrom), nil for none.
	from []string
}

func (r *rowReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := uvarintString(r.src[r.off:])
	if n <= 0 {
		r.err = errors.New("bad number")
		return 0
	}
	r.off += n
	return v
}

func uvarintString(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, 0
}

func (r *rowReader) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.src)-r.off) {
		r.err = errors.New("string past the end")
		return ""
	}
	s := r.src[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *rowReader) bytes(n int) string {
	if r.err != nil {
		return ""
	}
	if n > len(r.src)-r.off {
		r.err = errors.New("row past the end")
		return ""
	}
	s := r.src[r.off : r.off+n]
	r.off += n
	return s
}

// row decodes one row into vs's dictionary; it reports whether the row has
// a vector.
func (r *rowReader) row(vs *vecStore) (vecRow, bool) {
	row := vecRow{vec: -1}
	row.path = r.str()
	row.id = r.str()
	row.kind = vs.intern(r.str())
	row.scope = vs.intern(r.str())
	row.project = vs.intern(r.str())
	nt := r.uvarint()
	if nt > uint64(len(r.src)) {
		r.err = errors.New("bad tag count")
		return row, false
	}
	row.tagOff, row.ntag = vs.addTags(int(nt))
	for i := range int(nt) {
		vs.tagPool[int(row.tagOff)+i] = vs.intern(r.str())
	}
	flags := r.bytes(1)
	if r.err != nil {
		return row, false
	}
	ux, n := uvarintString(r.src[r.off:])
	created := int64(ux >> 1) // zig-zag, as binary.AppendVarint writes it
	if ux&1 != 0 {
		created = ^created
	}
	if n <= 0 {
		r.err = errors.New("bad time")
		return row, false
	}
	r.off += n
	copy(row.hash[:], r.bytes(len(row.hash)))
	row.content = packHash(r.str())
	row.role = vs.intern(r.str())
	row.pin = vs.intern(r.str())
	if fl := r.uvarint(); fl > math.MaxUint32 {
		r.err = errors.New("bad length")
	} else {
		row.flen = uint32(fl)
	}
	if s := r.bytes(8); r.err == nil {
		for i := range 8 {
			row.lsum |= uint64(s[i]) << (8 * i)
		}
	}
	r.from = nil
	if flags[0]&flagFrom != 0 {
		n := r.uvarint()
		if n == 0 || n > uint64(len(r.src)-r.off) {
			r.err = errors.New("bad id count")
			return row, false
		}
		r.from = make([]string, n)
		for i := range r.from {
			r.from[i] = r.str()
		}
	}
	row.pending = flags[0]&flagPending != 0
	if flags[0]&flagCreated != 0 {
		row.created, row.hasCreated = created, true
	}
	return row, flags[0]&flagVector != 0
}

// vecFiles names the base and the log of sequence number seq.
func vecFiles(genDir string, seq int) (base, log string) {
	base = filepath.Join(genDir, vecPrefix+strconv.Itoa(seq))
	return base, base + logSuffix
}

// vecHeaderSize is the fixed part of a base file's header.
const vecHeaderSize = 8 + 4*6

// writeVecBase writes a base file holding docs (sorted by path here), with
// their vectors, and syncs it.
func writeVecBase(name, embedder string, dim int, docs []vecDoc) error {
	slices.SortFunc(docs, func(a, b vecDoc) int { return strings.Compare(a.path, b.path) })
	ptrs := make([]*vecDoc, len(docs))
	for i := range docs {
		ptrs[i] = &docs[i]
	}
	return writeVecFile(name, embedder, dim, ptrs, layBase(ptrs))
}

// baseLayout is what a base file holds besides its vectors (see layBase).
type baseLayout struct {
	done    chan struct{}
	rows    []byte // with the flags of the vectors clear
	flagsAt []int  // where each row's flags byte is in rows
	lex     []byte // the postings section
}

// layBase lays out, in a goroutine, the rows and the postings section of
// a base file holding docs, which are in path order: everything but what
// their vectors decide, so that it can run before they are known. Until
// the layout is done, only the vectors and pending marks of docs may
// change.
func layBase(docs []*vecDoc) *baseLayout {
	l := &baseLayout{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		terms := make([][]byte, len(docs))
		for i := range docs {
			terms[i] = docs[i].terms
		}
		l.lex = appendLexSection(nil, terms)
		// The postings hold them now: at a million documents the terms
		// are a quarter of a gigabyte that the rest of a build needs no
		// more. (The embedding meanwhile touches the texts alone.)
		terms = nil
		for i := range docs {
			docs[i].terms = nil
		}
		// Sized once: at 100k rows, growing the section as it was
		// written cost a second of copying and fresh pages.
		size := 0
		for i := range docs {
			size += maxRowSize(docs[i])
		}
		l.rows, l.flagsAt = make([]byte, 0, size), make([]int, len(docs))
		for i := range docs {
			l.rows, l.flagsAt[i] = appendRowAt(l.rows, docs[i])
		}
	}()
	return l
}

// writeVecFile writes a base file holding docs, which are in path order,
// with the rows and postings l lays out.
func writeVecFile(name, embedder string, dim int, docs []*vecDoc, l *baseLayout) error {
	for i := range docs {
		if v := docs[i].vec; v != nil && len(v) != dim {
			return fmt.Errorf("write vectors: %s: %d dimensions, want %d", docs[i].path, len(v), dim)
		}
	}
	return writeVecFileFrom(name, embedder, dim, docs, l, memVecs(docs))
}

// vecSource gives a base file's vectors: whether row i has one, and then
// the vectors of the rows that have one, in row order, as little-endian
// float32s in slices of any length.
type vecSource struct {
	has  func(i int) bool
	each func(yield func(b []byte) error) error
}

// memVecs is the vectors of docs themselves (vecDoc.vec).
func memVecs(docs []*vecDoc) vecSource {
	return vecSource{
		has: func(i int) bool { return docs[i].vec != nil },
		each: func(yield func([]byte) error) error {
			if nativeLittleEndian {
				// The vectors' bytes are the file's: no copy.
				for i := range docs {
					v := docs[i].vec
					if err := yield(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))); err != nil {
						return err
					}
				}
				return nil
			}
			buf := make([]byte, 0, 64<<10)
			for i := range docs {
				for _, x := range docs[i].vec {
					buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
				}
				if len(buf) >= 60<<10 {
					if err := yield(buf); err != nil {
						return err
					}
					buf = buf[:0]
				}
			}
			return yield(buf)
		},
	}
}

// writeVecFileFrom writes a base file holding docs, which are in path
// order, with the rows and postings l lays out and the vectors of vs.
func writeVecFileFrom(name, embedder string, dim int, docs []*vecDoc, l *baseLayout, vs vecSource) error {
	<-l.done
	rows, lex := l.rows, l.lex
	nvec := 0
	for i := range docs {
		has := vs.has(i)
		rows[l.flagsAt[i]] |= vecFlags(has, docs[i].pending)
		if has {
			nvec++
		}
	}
	// The header, the rows and the postings are written as they are,
	// not gathered into one buffer first: at 100k entries that copy of
	// 23 MB into fresh memory took a quarter of a second.
	head, tail := vecHead(embedder, dim, len(docs), nvec, rows, lex)
	return atomicfile.WriteWith(name, 0o600, true, func(w io.Writer) error {
		for _, b := range [][]byte{head, rows, lex, tail} {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		crc, n := uint32(0), int64(0)
		err := vs.each(func(b []byte) error {
			crc = crc32.Update(crc, castagnoli, b)
			n += int64(len(b))
			_, err := w.Write(b)
			return err
		})
		if err != nil {
			return err
		}
		if n != int64(nvec)*int64(dim)*4 {
			return fmt.Errorf("write vectors: %d bytes of vectors, want %d", n, int64(nvec)*int64(dim)*4)
		}
		_, err = w.Write(binary.LittleEndian.AppendUint32(nil, crc))
		return err
	})
}

// vecHead returns the header of a base file and what follows its rows and
// postings section: their checksum and the padding before the vectors.
func vecHead(embedder string, dim, docs, nvec int, rows, lex []byte) (head, tail []byte) {
	head = make([]byte, 0, vecHeaderSize+len(embedder)+binary.MaxVarintLen64)
	head = append(head, vecMagic...)
	for _, v := range []int{vecVersion, dim, docs, nvec, len(rows), len(lex)} {
		head = binary.LittleEndian.AppendUint32(head, uint32(v))
	}
	head = binary.AppendUvarint(head, uint64(len(embedder)))
	head = append(head, embedder...)
	sum := crc32.Update(crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, rows), castagnoli, lex)
	tail = binary.LittleEndian.AppendUint32(nil, sum)
	tail = append(tail, make([]byte, vecPad(len(head)+len(rows)+len(lex)+len(tail)))...)
	return head, tail
}

// vecSpill holds a rebuild's vectors on disk as they are made, in the
// order they are made, until they are written into the base file in its
// own (see buildVectors). Its file is removed at once where the system
// allows it, so that a killed build leaves nothing behind.
type vecSpill struct {
	f      *os.File
	name   string // "": removed already
	dim    int    // the vectors' length, from the first when 0
	n      int32  // vectors spilled
	slot   []int32
	badDim int // a vector's length other than dim; -1: none
	buf    []byte
	err    error
}

// spillBuffer is how much of the spill is gathered before it is written,
// and read back at once.
const spillBuffer = 1 << 20

func newVecSpill(dir string, dim, docs int) (*vecSpill, error) {
	f, err := os.CreateTemp(dir, ".vectors.*.tmp")
	if err != nil {
		return nil, fmt.Errorf("write vectors: %w", err)
	}
	s := &vecSpill{f: f, name: f.Name(), dim: dim, slot: make([]int32, docs), badDim: -1}
	if dim > 0 {
		// Room for a flush's worth and one more, or for them all.
		s.buf = make([]byte, 0, min(spillBuffer, docs*dim*4)+dim*4)
	}
	if os.Remove(s.name) == nil {
		s.name = ""
	}
	for i := range s.slot {
		s.slot[i] = -1
	}
	return s, nil
}

// put spills document i's vector (nil: none).
func (s *vecSpill) put(i int, v []float32) error {
	if v == nil {
		s.slot[i] = -1
		return nil
	}
	if s.dim == 0 {
		s.dim = len(v)
	}
	if len(v) != s.dim {
		if s.badDim < 0 {
			s.badDim = len(v)
		}
		return nil
	}
	for _, x := range v {
		s.buf = binary.LittleEndian.AppendUint32(s.buf, math.Float32bits(x))
	}
	s.slot[i] = s.n
	s.n++
	if len(s.buf) >= spillBuffer {
		return s.flush()
	}
	return nil
}

func (s *vecSpill) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	if _, err := s.f.Write(s.buf); err != nil {
		return fmt.Errorf("write vectors: %w", err)
	}
	s.buf = s.buf[:0]
	return nil
}

// reader gives the spilled vectors of the documents order names (row i
// is document order[i]), reading runs of them that lie together at once.
func (s *vecSpill) reader(order []int32) vecSource {
	return vecSource{
		has: func(i int) bool { return s.slot[order[i]] >= 0 },
		each: func(yield func([]byte) error) error {
			if err := s.flush(); err != nil {
				return err
			}
			size := int64(s.dim) * 4
			per := max(1, spillBuffer/int(size))
			buf := make([]byte, per*int(size))
			for i := 0; i < len(order); {
				first := s.slot[order[i]]
				if first < 0 {
					i++
					continue
				}
				k := 1
				for k < per && i+k < len(order) && s.slot[order[i+k]] == first+int32(k) {
					k++
				}
				b := buf[:int64(k)*size]
				if _, err := s.f.ReadAt(b, int64(first)*size); err != nil {
					return fmt.Errorf("read back vectors: %w", err)
				}
				if err := yield(b); err != nil {
					return err
				}
				i += k
			}
			return nil
		},
	}
}

func (s *vecSpill) close() {
	s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
}

// vecHeader is what a base file's header says.
type vecHeader struct {
	embedder                 string
	dim, rows, nvec, rowsLen int
	lexLen                   int   // the postings section's, after the rows
	vecOff                   int64 // where the vectors start
	size                     int64 // the file's size the header implies
}

// vecPad is the number of zero bytes after a base file's row section that
// start the vectors at a multiple of 4, so that a mapped file can be read
// as float32s in place.
func vecPad(n int) int { return (4 - n%4) % 4 }

// readVecHeader reads and checks the header of a base file, and that the
// file has the size it implies: enough to trust the file's shape at Open
// without reading it.
func readVecHeader(f *os.File) (vecHeader, []byte, error) {
	var h vecHeader
	fi, err := f.Stat()
	if err != nil {
		return h, nil, err
	}
	head := make([]byte, vecHeaderSize+binary.MaxVarintLen64)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return h, nil, err
	}
	head = head[:n]
	if n < vecHeaderSize || string(head[:8]) != vecMagic {
		return h, nil, errors.New("not a vector file")
	}
	u := func(i int) int { return int(binary.LittleEndian.Uint32(head[8+4*i:])) }
	if v := u(0); v != vecVersion {
		return h, nil, fmt.Errorf("vector file version %d, want %d", v, vecVersion)
	}
	h.dim, h.rows, h.nvec, h.rowsLen, h.lexLen = u(1), u(2), u(3), u(4), u(5)
	idLen, k := binary.Uvarint(head[vecHeaderSize:])
	// A dimension of 0 is an external embedder's that was never reached:
	// there are no vectors then.
	if k <= 0 || idLen > 4096 || h.dim < 0 || h.dim > 1<<16 || h.nvec > h.rows || (h.dim == 0 && h.nvec > 0) {
		return h, nil, errors.New("bad vector file header")
	}
	start := int64(vecHeaderSize + k)
	h.vecOff = start + int64(idLen) + int64(h.rowsLen) + int64(h.lexLen) + 4
	h.vecOff += int64(vecPad(int(h.vecOff)))
	h.size = h.vecOff + int64(h.nvec)*int64(h.dim)*4 + 4
	if fi.Size() != h.size {
		return h, nil, fmt.Errorf("vector file has %d bytes, its header says %d", fi.Size(), h.size)
	}
	id := make([]byte, idLen)
	if _, err := f.ReadAt(id, start); err != nil {
		return h, nil, err
	}
	h.embedder = string(id)
	// The bytes before the row section, which its checksum covers too.
	pre := make([]byte, start+int64(idLen))
	if _, err := f.ReadAt(pre, 0); err != nil {
		return h, nil, err
	}
	return h, pre, nil
}

// checkVecFiles is the cheap check of a generation's vector files that Open
// makes: the base exists and its header agrees with the meta, and the log
// is at least as long as the meta says.
func checkVecFiles(genDir string, m meta) error {
	if b, err := rawfile.Read(filepath.Join(genDir, damagedMark)); err == nil {
		return damaged("a search found: %s", strings.TrimSpace(string(b)))
	}
	base, log := vecFiles(genDir, m.VecSeq)
	f, err := rawfile.Open(base)
	if err != nil {
		return damaged("vectors: %w", err)
	}
	defer f.Close()
	h, _, err := readVecHeader(f)
	if err != nil {
		return damaged("vectors: %s: %w", filepath.Base(base), err)
	}
	if h.embedder != m.Embedder || h.dim != m.Dim {
		return damaged("vectors are of %s/%d, the meta says %s/%d", h.embedder, h.dim, m.Embedder, m.Dim)
	}
	if m.VecLog == 0 && h.rows != m.Docs {
		return damaged("%d documents have rows, the meta says %d", h.rows, m.Docs)
	}
	if m.VecLog > 0 {
		fi, err := os.Stat(log)
		if err != nil {
			return damaged("vectors: %w", err)
		}
		if fi.Size() < m.VecLog {
			return damaged("vector log has %d bytes, the meta says %d", fi.Size(), m.VecLog)
		}
	}
	return nil
}

// loadVecStore reads a generation's vectors: the base file and the log up
// to its committed length (and the complete records after it, which a
// writer that crashed before its meta left, which the next writer keeps).
// With rowsOnly, the vectors themselves are not read.
func loadVecStore(genDir string, m meta, rowsOnly bool) (*vecStore, error) {
	return loadVecStoreFor(genDir, m, rowsOnly, false)
}

// loadKeptVecStore loads a generation's vectors for a process that keeps
// them (a server). Where they are large, the checksum reads their mapped
// pages in as it comes to them and lets go of them behind it, rather than
// all read in and held at once (see sharedMap.behind).
func loadKeptVecStore(genDir string, m meta) (*vecStore, error) {
	return loadVecStoreFor(genDir, m, false, true)
}

func loadVecStoreFor(genDir string, m meta, rowsOnly, kept bool) (*vecStore, error) {
	base, log := vecFiles(genDir, m.VecSeq)
	f, err := rawfile.Open(base)
	if err != nil {
		return nil, damaged("vectors: %w", err)
	}
	var vs *vecStore
	defer func() {
		if vs == nil || vs.mapped == nil || vs.mapped.file != f {
			f.Close() // else the mapping keeps it, to read rows from
		}
	}()
	h, pre, err := readVecHeader(f)
	if err != nil {
		return nil, damaged("vectors: %s: %w", filepath.Base(base), err)
	}
	if h.embedder != m.Embedder || h.dim != m.Dim {
		return nil, damaged("vectors are of %s/%d, the meta says %s/%d", h.embedder, h.dim, m.Embedder, m.Dim)
	}
	// The vectors are read, and their checksum checked (a pass over all
	// of them), beside the decoding of the rows: at a million entries
	// each takes a second or more.
	var based chan baseVecs
	if !rowsOnly {
		based = make(chan baseVecs, 1)
		go func() { based <- readBase(f, h, kept) }()
		defer func() {
			if based != nil { // returned before taking them: let them go
				if b := <-based; b.mapped != nil {
					b.mapped.unmap()
				}
			}
		}()
	}
	vs = newVecStore(h.embedder, h.dim)
	vs.rowsOnly = rowsOnly
	// The section is read through a mapping where the system has one:
	// its pages leave the process with it, once the rows are decoded and
	// the strings they keep copied (below), where a buffer read into the
	// heap stayed until the collector and the runtime gave it back, and a
	// server loading 100k entries held its 23 MB beside the codes it then
	// built. Nothing may point into sec once this function returns.
	secLen := h.rowsLen + h.lexLen
	var sec []byte
	if m, unmap, err := mapFile(f, len(pre)+secLen+4, true); err == nil {
		defer unmap()
		sec = m[len(pre):]
	} else {
		sec = make([]byte, secLen+4)
		if _, err := f.ReadAt(sec, int64(len(pre))); err != nil {
			return nil, damaged("vectors: read rows: %w", err)
		}
	}
	crc := crc32.Update(crc32.Checksum(pre, castagnoli), castagnoli, sec[:secLen])
	if crc != binary.LittleEndian.Uint32(sec[secLen:]) {
		return nil, damaged("vectors: rows: checksum mismatch")
	}
	all := unsafe.String(unsafe.SliceData(sec), secLen)
	rr := rowReader{src: all[:h.rowsLen]}
	vs.rows = make([]vecRow, 0, h.rows)
	nvec := int32(0)
	for range h.rows {
		row, hasVec := rr.row(vs)
		if rr.err != nil {
			return nil, damaged("vectors: row %d: %w", len(vs.rows), rr.err)
		}
		if hasVec {
			row.vec = nvec
			nvec++
		}
		if n := len(vs.rows); n > 0 && vs.rows[n-1].path >= row.path {
			return nil, damaged("vectors: rows out of order at %s", row.path)
		}
		row.linked = vs.setFrom(len(vs.rows), rr.from)
		vs.rows = append(vs.rows, row)
	}
	if rr.off != h.rowsLen || int(nvec) != h.nvec {
		return nil, damaged("vectors: row section does not add up")
	}
	vs.nbase = len(vs.rows)
	// The strings the rows keep and the postings move to buffers of
	// their own, so that the section, most of it decoded into the rows
	// already (a fifth of a server's heap at 100k), can go.
	size := h.lexLen
	for i := range vs.rows {
		r := &vs.rows[i]
		size += len(r.path)
		if !strings.Contains(r.path, r.id) {
			size += len(r.id)
		}
	}
	arena := make([]byte, 0, size)
	keep := func(s string) string {
		at := len(arena)
		arena = append(arena, s...)
		return unsafe.String(unsafe.SliceData(arena[at:]), len(s))
	}
	for i := range vs.rows {
		r := &vs.rows[i]
		r.path = keep(r.path)
		// An entry Mira wrote is named after its id: the id is then
		// kept as part of the path (2.6 MB at 100k entries).
		if at := strings.LastIndex(r.path, r.id); at >= 0 {
			r.id = r.path[at : at+len(r.id)]
		} else {
			r.id = keep(r.id)
		}
	}
	if vs.lex, err = parseLexSection(keep(all[h.rowsLen:])); err != nil {
		return nil, damaged("vectors: %w", err)
	}
	if based != nil {
		b := <-based
		based = nil
		if b.err != nil {
			return nil, damaged("vectors: %w", b.err)
		}
		vs.base, vs.mapped, vs.nbaseVec = b.floats, b.mapped, h.nvec
	}
	if err := vs.replay(log, m.VecLog, rowsOnly); err != nil {
		vs.close()
		return nil, err
	}
	return vs, nil
}

// baseVecs is a base file's vectors as readBase read them.
type baseVecs struct {
	floats []float32
	mapped *sharedMap // nil: floats are in the heap
	err    error
}

// readBase reads the base file's vectors: mapped into memory where the
// system can (no copy, and the pages come from the page cache), else read.
// Either way their checksum is checked.
func readBase(f *os.File, h vecHeader, kept bool) baseVecs {
	n := h.nvec * h.dim
	if n == 0 {
		return baseVecs{}
	}
	if nativeLittleEndian {
		// A command reads every page at once, in one system call; a
		// server as it goes (see behind).
		paging := int64(n)*4 >= pageMin && (kept || int64(n)*4 >= commandPageMin)
		if data, unmap, err := mapFile(f, int(h.size), !paging); err == nil {
			m := &sharedMap{data: data, file: f, off: h.vecOff, behind: paging, unmap: func() error {
				f.Close()
				return unmap()
			}}
			raw := data[h.vecOff : h.vecOff+int64(n)*4]
			sum := binary.LittleEndian.Uint32(data[h.vecOff+int64(n)*4:])
			crc := uint32(0)
			for off := 0; off < len(raw); off += behindChunk {
				end := min(off+behindChunk, len(raw))
				crc = crc32.Update(crc, castagnoli, raw[off:end])
				m.dropBehind(h.vecOff+int64(off), h.vecOff+int64(end))
			}
			if crc != sum {
				unmap()
				return baseVecs{err: errors.New("vectors: checksum mismatch")}
			}
			m.refs.Store(1)
			return baseVecs{floats: unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(raw))), n), mapped: m}
		}
	}
	floats := make([]float32, n)
	if err := readFloats(f, h.vecOff, floats); err != nil {
		return baseVecs{err: err}
	}
	return baseVecs{floats: floats}
}

// sharedMap is a base file mapped into memory, shared by the stores that
// read its vectors; the last to close unmaps it.
type sharedMap struct {
	refs  atomic.Int32
	unmap func() error
	data  []byte   // the whole mapping
	file  *os.File // the file mapped, open while it is
	off   int64    // where its vectors start
	// paged: the pages were dropped once the vectors were coded; a row's
	// floats are read from the file (see vecStore.exact).
	paged atomic.Bool
	// behind: the floats are large (pageMin) and kept by a server. The
	// passes through all of them at load (the checksum, the coding) let
	// go of the pages they have read, behindChunk at a time, and once
	// coded the pages are dropped and a query's rows read from the file.
	// A server that loaded 100,000 entries held all 168 MB of them at
	// once, for codes that, once built, need them no more.
	behind bool
}

// pageMin is the size of the floats from which a process that keeps them
// lets go of their pages and reads a query's rows from the file (see
// behind and vecStore.exact): about 42,000 vectors of 384 dimensions.
// Reading a row costs a system call where a read through the mapping
// costs nothing, and a query reads a few hundred: at 10,000 entries,
// where the floats take 15 MB, a proxy's recall took 4.3 ms instead of
// 1.2 ms.
var pageMin int64 = 64 << 20 // a variable for tests

// commandPageMin is the size of the floats from which a command too, which
// searches once, lets go of their pages behind its passes (the checksum,
// the scan) instead of reading them all in at once: about 350,000
// vectors of 384 dimensions. A recall in its own process at a million
// entries held all 1.5 GB of them.
var commandPageMin int64 = 512 << 20 // a variable for tests

// behindChunk is how many bytes of floats a pass reads before it drops
// their pages (see sharedMap.behind).
const behindChunk = 4 << 20

// dropBehind drops the pages wholly within bytes [lo, hi) of the mapping,
// if m drops pages behind its passes.
func (m *sharedMap) dropBehind(lo, hi int64) {
	if m == nil || !m.behind {
		return
	}
	ps := int64(os.Getpagesize())
	lo = (lo + ps - 1) / ps * ps
	if hi < int64(len(m.data)) {
		hi = hi / ps * ps
	}
	if lo < hi {
		dropPages(m.data[lo:hi])
	}
}

// dropVecs is dropBehind for the floats of base vectors [lo, hi) of dim
// floats each.
func (m *sharedMap) dropVecs(lo, hi, dim int) {
	if m == nil || !m.behind || lo >= hi {
		return
	}
	stride := int64(4 * dim)
	m.dropBehind(m.off+int64(lo)*stride, m.off+int64(hi)*stride)
}

// paged reports whether exact reads rows from the file.
func (vs *vecStore) paged() bool { return vs.mapped != nil && vs.mapped.paged.Load() }

// exact returns the floats of row i's vector, nil if it has none. Once
// the scans of a mapped base go through its codes, the few rows a query
// scores exactly are read from the file into buf (dim floats, or nil for
// a new slice) rather than through the mapping: a read through it would
// map the pages around the row as well (the kernel's fault-around, 64 KB
// each), and a few hundred rows per query would bring back most of the
// memory dropping the pages gave back, within a few queries.
func (vs *vecStore) exact(i int, buf []float32) []float32 {
	v := vs.rows[i].vec
	if !vs.paged() || v < 0 || int(v) >= vs.nbaseVec {
		return vs.vector(i)
	}
	if buf == nil {
		buf = make([]float32, vs.dim)
	}
	buf = buf[:vs.dim]
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), 4*vs.dim)
	if _, err := vs.mapped.file.ReadAt(b, vs.mapped.off+int64(v)*int64(4*vs.dim)); err != nil {
		return vs.vector(i) // the mapping has the same bytes
	}
	return buf
}

// drop takes the mapped pages out of the process's resident memory (see
// dropPages). Once a process searches codes (see q8.go) it reads the
// floats of a few rows per query only, and keeping every page it read at
// load, for the checksum and the codes, would cost as much memory as the
// vectors: 168 MB at 100,000 entries. The caller holds a reference.
func (m *sharedMap) drop() {
	if m != nil {
		dropPages(m.data)
	}
}

// close releases the mapped vectors. The store's vectors must not be used
// afterwards.
func (vs *vecStore) close() {
	if vs.mapped != nil {
		vs.base = nil
		if vs.mapped.refs.Add(-1) == 0 {
			vs.mapped.unmap()
		}
		vs.mapped = nil
	}
}

// fork returns a copy of vs that put, del and apply may change without
// changing vs; the two share the base's vectors.
func (vs *vecStore) fork() *vecStore {
	nv := *vs
	nv.rows = slices.Clone(vs.rows)
	// Clipped, so that the two stores' rows to come add their tags to
	// pools of their own.
	nv.tagPool = slices.Clip(vs.tagPool)
	nv.dict = slices.Clip(vs.dict)
	nv.dictIx = maps.Clone(vs.dictIx)
	nv.logIx = maps.Clone(vs.logIx)
	nv.vecs = slices.Clip(vs.vecs)
	nv.q8log = &q8Log{}
	nv.lexNorm, nv.links = &lexNorms{}, &linkTable{}
	nv.from = maps.Clone(vs.from)
	if vs.lexLog != nil {
		// Clipped, so that an append to a term's postings copies them.
		nv.lexLog = make(map[string][]lexPost, len(vs.lexLog))
		for t, ps := range vs.lexLog {
			nv.lexLog[t] = slices.Clip(ps)
		}
	}
	if nv.mapped != nil {
		nv.mapped.refs.Add(1)
	}
	return &nv
}

// extend returns a new store: vs with the log's records that came after
// the ones vs applied, up to committed. vs is not changed, and the two
// share the base's vectors, so bringing a searched store up to date after
// a few turns costs those turns, not a reload of every vector: at 10k
// entries well under a millisecond against about fifteen.
func (vs *vecStore) extend(log string, committed int64) (*vecStore, error) {
	if vs.rowsOnly {
		return nil, errors.New("a store of rows only cannot be extended")
	}
	// What put and apply change in place is copied; what they only
	// append to is clipped, so that an append copies it then.
	nv := vs.fork()
	if err := nv.replay(log, committed, false); err != nil {
		nv.close()
		return nil, err
	}
	return nv, nil
}

// readFloats reads len(dst) little-endian float32 values at off followed
// by their checksum. On a little-endian machine the bytes go straight into
// dst; one pass of reading and one of checking, chunk by chunk while the
// chunk is in the cache.
func readFloats(f *os.File, off int64, dst []float32) error {
	crc := crc32.New(castagnoli)
	r := io.NewSectionReader(f, off, int64(len(dst))*4+4)
	if nativeLittleEndian {
		raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)*4)
		for len(raw) > 0 {
			n := min(len(raw), 1<<20)
			if _, err := io.ReadFull(r, raw[:n]); err != nil {
				return fmt.Errorf("read vectors: %w", err)
			}
			crc.Write(raw[:n])
			raw = raw[n:]
		}
	} else {
		buf := make([]byte, 1<<16)
		for i := 0; i < len(dst); {
			n := min(len(dst)-i, len(buf)/4)
			if _, err := io.ReadFull(r, buf[:n*4]); err != nil {
				return fmt.Errorf("read vectors: %w", err)
			}
			crc.Write(buf[:n*4])
			for j := range n {
				dst[i+j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
			}
			i += n
		}
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return fmt.Errorf("read vectors: %w", err)
	}
	if crc.Sum32() != binary.LittleEndian.Uint32(sum[:]) {
		return errors.New("vectors: checksum mismatch")
	}
	return nil
}

var nativeLittleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// replay applies the log's records after the vs.replayed bytes it
// already applied. Records up to committed must be sound; after it only a
// torn last record, from a writer that crashed, is forgiven. (A writer
// keeps the complete records after the committed length and cuts off only
// a torn one, so what a store applied is never taken back.)
func (vs *vecStore) replay(log string, committed int64, rowsOnly bool) error {
	b, err := readFrom(log, vs.replayed)
	if errors.Is(err, fs.ErrNotExist) && committed == 0 {
		return nil
	}
	if err != nil {
		return damaged("vector log: %w", err)
	}
	if vs.replayed+int64(len(b)) < committed {
		return damaged("vector log has %d bytes, the meta says %d", vs.replayed+int64(len(b)), committed)
	}
	off := 0
	for off < len(b) {
		at := vs.replayed + int64(off)
		payload, n, err := nextRecord(b[off:])
		if err != nil {
			if at >= committed {
				break // a torn tail
			}
			return damaged("vector log at byte %d: %w", at, err)
		}
		if err := vs.apply(payload, rowsOnly); err != nil {
			return damaged("vector log at byte %d: %w", at, err)
		}
		off += n
		vs.logged++
	}
	vs.replayed += int64(off)
	return nil
}

// readFrom reads the file at name from byte off to its end.
func readFrom(name string, off int64) ([]byte, error) {
	if off == 0 {
		return os.ReadFile(name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < off {
		return nil, fmt.Errorf("%d bytes, %d of them already read", fi.Size(), off)
	}
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// nextRecord cuts the first record of the log b: length, checksum, payload.
func nextRecord(b []byte) (payload []byte, n int, err error) {
	if len(b) < 8 {
		return nil, 0, io.ErrUnexpectedEOF
	}
	size := binary.LittleEndian.Uint32(b)
	if size > maxRecord {
		return nil, 0, fmt.Errorf("record of %d bytes", size)
	}
	if int(size) > len(b)-8 {
		return nil, 0, io.ErrUnexpectedEOF
	}
	payload = b[8 : 8+size]
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return nil, 0, errors.New("checksum mismatch")
	}
	return payload, 8 + int(size), nil
}

// apply applies one log record.
func (vs *vecStore) apply(payload []byte, rowsOnly bool) error {
	vs.lexNorm, vs.links = &lexNorms{}, &linkTable{}
	if len(payload) == 0 {
		return errors.New("empty record")
	}
	// Log rows are few: their strings are their own, not cut from a
	// shared buffer.
	rr := rowReader{src: string(payload[1:])}
	switch payload[0] {
	case opDel:
		p := rr.str()
		if rr.err != nil || rr.off != len(rr.src) {
			return errors.New("bad delete record")
		}
		vs.del(p)
		return nil
	case opPut:
		row, hasVec := rr.row(vs)
		terms := rr.terms()
		if rr.err != nil {
			return fmt.Errorf("bad put record: %w", rr.err)
		}
		rest := len(rr.src) - rr.off
		if (hasVec && rest != vs.dim*4) || (!hasVec && rest != 0) {
			return errors.New("bad put record: vector length")
		}
		if i := vs.find(row.path); i >= 0 {
			vs.rows[i].dead = true
		}
		if hasVec && !rowsOnly {
			row.vec = int32(vs.nbaseVec + len(vs.vecs)/vs.dim)
			raw := payload[1+rr.off:]
			for j := 0; j < vs.dim; j++ {
				vs.vecs = append(vs.vecs, math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:])))
			}
		} else if hasVec {
			row.vec = 0 // rows only: "has a vector", not where
		}
		vs.logIx[row.path] = int32(len(vs.rows))
		vs.addTerms(len(vs.rows), terms)
		row.linked = vs.setFrom(len(vs.rows), rr.from)
		vs.rows = addRow(vs.rows, row)
		return nil
	}
	return fmt.Errorf("unknown record type %d", payload[0])
}

// logRecord encodes one log record: a put of d (with its vector, if any)
// or, with d.path alone and del, a delete.
func logRecord(b []byte, d *vecDoc, del bool) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	if del {
		b = append(b, opDel)
		b = binary.AppendUvarint(b, uint64(len(d.path)))
		b = append(b, d.path...)
	} else {
		b = append(b, opPut)
		b = appendRow(b, d, d.vec != nil)
		if len(d.terms) == 0 {
			b = append(b, 0)
		}
		b = append(b, d.terms...)
		for _, x := range d.vec {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
	}
	payload := b[start+8:]
	binary.LittleEndian.PutUint32(b[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[start+4:], crc32.Checksum(payload, castagnoli))
	return b
}

// appendLog appends records to the log whose committed length is
// committed, first cutting off a torn record a crashed writer may have left
// after it, and syncs it. It returns the log's new length.
func appendLog(log string, committed int64, records []byte) (int64, error) {
	if err := atomicfile.Check(log); err != nil {
		return 0, fmt.Errorf("vector log: %w", err)
	}
	f, err := os.OpenFile(log, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("vector log: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("vector log: %w", err)
	}
	end := committed
	if fi.Size() > committed {
		// Keep the complete records after the committed length: a
		// reader may have applied them already (see replay).
		tail := make([]byte, fi.Size()-committed)
		if _, err := f.ReadAt(tail, committed); err != nil {
			return 0, fmt.Errorf("vector log: %w", err)
		}
		for off := 0; off < len(tail); {
			_, n, err := nextRecord(tail[off:])
			if err != nil {
				break
			}
			off += n
			end = committed + int64(off)
		}
	} else if fi.Size() < committed {
		return 0, damaged("vector log has %d bytes, the meta says %d", fi.Size(), committed)
	}
	if end != fi.Size() {
		if err := f.Truncate(end); err != nil {
			return 0, fmt.Errorf("vector log: %w", err)
		}
	}
	if _, err := f.WriteAt(records, end); err != nil {
		return 0, fmt.Errorf("vector log: %w", err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("vector log: %w", err)
	}
	if fi.Size() == 0 {
		if err := atomicfile.SyncDir(filepath.Dir(log)); err != nil {
			return 0, err
		}
	}
	return end + int64(len(records)), nil
}

// liveDocs returns every live row as a document with its terms, for a
// new base file.
func (vs *vecStore) liveDocs() ([]vecDoc, error) {
	terms, err := vs.baseTerms()
	if err != nil {
		return nil, err
	}
	terms = append(terms, make([][]termFreq, len(vs.rows)-len(terms))...)
	for t, ps := range vs.lexLog {
		for _, p := range ps {
			terms[p.row] = append(terms[p.row], termFreq{t, p.freq})
		}
	}
	docs := make([]vecDoc, 0, len(vs.rows))
	for i := range vs.rows {
		if !vs.rows[i].dead {
			d := vs.doc(i)
			slices.SortFunc(terms[i], func(a, b termFreq) int { return strings.Compare(a.term, b.term) })
			if len(terms[i]) > 0 {
				d.terms = appendTerms(nil, terms[i])
			}
			docs = append(docs, d)
		}
	}
	return docs, nil
}

// appendTerms encodes a document's terms for a log record: their count,
// then each term and its frequency.
func appendTerms(b []byte, terms []termFreq) []byte {
	b = binary.AppendUvarint(b, uint64(len(terms)))
	for _, t := range terms {
		b = binary.AppendUvarint(b, uint64(len(t.term)))
		b = append(b, t.term...)
		b = binary.AppendUvarint(b, uint64(t.freq))
	}
	return b
}

// decodeTerms decodes terms that appendTerms encoded, which are known to
// be sound (a document's own).
func decodeTerms(b []byte) []termFreq {
	if len(b) == 0 {
		return nil
	}
	r := rowReader{src: string(b)}
	return r.terms()
}

// terms decodes what appendTerms encoded.
func (r *rowReader) terms() []termFreq {
	n := r.uvarint()
	if r.err != nil || n == 0 {
		return nil
	}
	if n > uint64(len(r.src)-r.off) {
		r.err = errors.New("bad term count")
		return nil
	}
	out := make([]termFreq, n)
	for i := range out {
		out[i].term = r.str()
		f := r.uvarint()
		if r.err != nil {
			return nil
		}
		if f == 0 || f > math.MaxUint32 {
			r.err = errors.New("bad term frequency")
			return nil
		}
		out[i].freq = uint32(f)
	}
	return out
}

// removeVecFiles removes the vector files of other sequence numbers than
// keep (left by a compaction, or by one that crashed).
func removeVecFiles(genDir string, keep int) {
	ents, err := os.ReadDir(genDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Name(), vecPrefix)
		if !ok {
			continue
		}
		name = strings.TrimSuffix(name, logSuffix)
		if n, err := strconv.Atoi(name); err == nil && n != keep {
			os.Remove(filepath.Join(genDir, e.Name()))
		}
	}
}
