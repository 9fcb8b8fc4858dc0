package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"

	"github.com/miramem/mira/internal/atomicfile"
)

// vecPlacer writes a rebuild's vectors straight into its base file as they
// are made, each at its row's place: they are made in store order and the
// rows are in path order. A million vectors are 1.5 GB; written to a spill
// file first and copied from there, they were written twice (14 s of
// system time of a 63 s rebuild at 1M, on a 2-core machine).
//
// The file has no name while the vectors go in (see openUnnamed), so a
// build killed meanwhile leaves nothing behind; finish gives it its name
// once it is whole. The vectors of neighbouring rows are gathered into
// blocks and written together; the blocks held at once are bounded
// (placeHeld), whatever the two orders. The vector section's place
// assumes every row gets a vector and the header names the embedder the
// placer was made for: otherwise (a text without words, an embedder that
// failed or renamed itself) finish writes the file again from this one,
// as the spill was.
type vecPlacer struct {
	f        *os.File
	dim      int
	size     int     // bytes a vector
	rowOf    []int32 // document (store order) -> row (path order)
	l        *baseLayout
	embedder string
	off      int64 // where the vector section starts; -1 until laid out
	per      int   // rows a block
	have     []bool
	offered  []int32 // rows put so far, by block
	blocks   map[int]*placeBlock
	free     []*placeBlock
	held     int // bytes in blocks
	limit    int
	n        int  // vectors put
	badDim   int  // a vector's length other than dim; -1: none
	rewrote  bool // finish wrote the file again
}

type placeBlock struct {
	buf  []byte
	fill []bool // which rows' vectors buf holds
}

const (
	// placeBlockSize is how much of the vector section a block holds.
	placeBlockSize = 1 << 20
	// placeHeld bounds the bytes of the blocks held at once; past it,
	// every block is written as it stands.
	placeHeld = 64 << 20
)

// placeVectors is false for the tests of the spill, which systems without
// unnamed files take.
var placeVectors = true

// errNoPlacer says the system cannot make a file without a name.
var errNoPlacer = errors.New("no unnamed files here")

// newVecPlacer makes a placer for a base file in dir whose rows are laid
// out by l, in the order byPath gives (row i holds document byPath[i]),
// for vectors of dim dimensions from the embedder named embedder.
func newVecPlacer(dir string, dim int, embedder string, byPath []int, l *baseLayout) (*vecPlacer, error) {
	if dim <= 0 || !placeVectors {
		return nil, errNoPlacer
	}
	f, err := openUnnamed(dir)
	if err != nil {
		return nil, err
	}
	size := dim * 4
	per := max(1, placeBlockSize/size)
	p := &vecPlacer{
		f: f, dim: dim, size: size, rowOf: make([]int32, len(byPath)), l: l, embedder: embedder,
		off: -1, per: per, have: make([]bool, len(byPath)), offered: make([]int32, (len(byPath)+per-1)/per),
		blocks: map[int]*placeBlock{}, limit: placeHeld, badDim: -1,
	}
	for row, d := range byPath {
		p.rowOf[d] = int32(row)
	}
	return p, nil
}

// sectionStart is where the vector section of a base file starts, with
// rows and lex laid out and the header naming embedder (as
// writeVecFileFrom writes it).
func sectionStart(embedder string, rows, lex int) int64 {
	n := vecHeaderSize + uvarintLen(uint64(len(embedder))) + len(embedder) + rows + lex + 4
	return int64(n + vecPad(n))
}

func uvarintLen(x uint64) int {
	var b [binary.MaxVarintLen64]byte
	return len(binary.AppendUvarint(b[:0], x))
}

// laidOut waits for the layout and learns where the vectors go.
func (p *vecPlacer) laidOut() int64 {
	if p.off < 0 {
		<-p.l.done
		p.off = sectionStart(p.embedder, len(p.l.rows), len(p.l.lex))
	}
	return p.off
}

func (p *vecPlacer) rowsIn(b int) int {
	return min(p.per, len(p.rowOf)-b*p.per)
}

// put places document i's vector (nil: none). It is called once for
// every document, in any order.
func (p *vecPlacer) put(i int, v []float32) error {
	row := int(p.rowOf[i])
	b := row / p.per
	if v != nil && len(v) != p.dim {
		if p.badDim < 0 {
			p.badDim = len(v)
		}
		v = nil
	}
	if v != nil {
		blk := p.blocks[b]
		if blk == nil {
			blk = p.block(b)
		}
		at := (row - b*p.per) * p.size
		for _, x := range v {
			binary.LittleEndian.PutUint32(blk.buf[at:], math.Float32bits(x))
			at += 4
		}
		blk.fill[row-b*p.per] = true
		p.have[row] = true
		p.n++
	}
	p.offered[b]++
	if p.offered[b] == int32(p.rowsIn(b)) {
		if blk := p.blocks[b]; blk != nil {
			return p.write(b, blk)
		}
		return nil
	}
	if p.held > p.limit {
		return p.writeAll()
	}
	return nil
}

// block takes a block for block number b.
func (p *vecPlacer) block(b int) *placeBlock {
	var blk *placeBlock
	if k := len(p.free); k > 0 {
		blk, p.free = p.free[k-1], p.free[:k-1]
		clear(blk.fill)
	} else {
		blk = &placeBlock{buf: make([]byte, p.per*p.size), fill: make([]bool, p.per)}
	}
	p.blocks[b] = blk
	p.held += len(blk.buf)
	return blk
}

// write writes block b's vectors to their places and lets go of it: at
// once if it holds every row of its own, else by runs.
func (p *vecPlacer) write(b int, blk *placeBlock) error {
	off := p.laidOut() + int64(b*p.per*p.size)
	rows := p.rowsIn(b)
	var err error
	if allTrue(blk.fill[:rows]) {
		_, err = p.f.WriteAt(blk.buf[:rows*p.size], off)
	} else {
		for lo := 0; lo < rows && err == nil; {
			if !blk.fill[lo] {
				lo++
				continue
			}
			hi := lo + 1
			for hi < rows && blk.fill[hi] {
				hi++
			}
			_, err = p.f.WriteAt(blk.buf[lo*p.size:hi*p.size], off+int64(lo*p.size))
			lo = hi
		}
	}
	delete(p.blocks, b)
	p.free = append(p.free, blk)
	p.held -= len(blk.buf)
	if err != nil {
		return fmt.Errorf("write vectors: %w", err)
	}
	return nil
}

// writeAll writes every block held.
func (p *vecPlacer) writeAll() error {
	for b, blk := range p.blocks {
		if err := p.write(b, blk); err != nil {
			return err
		}
	}
	return nil
}

func allTrue(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return true
}

// finish writes the rest of the base file name, of docs (in path order,
// their pending marks set) with the vectors put, from the embedder named
// embedder, syncs it and gives it its name. The placer is closed.
func (p *vecPlacer) finish(name, embedder string, docs []*vecDoc) (err error) {
	defer p.close()
	if err := p.writeAll(); err != nil {
		return err
	}
	off := p.laidOut()
	if p.n < len(docs) || sectionStart(embedder, len(p.l.rows), len(p.l.lex)) != off {
		// Rows without a vector, or a header of another length: the
		// vectors are not where the file wants them.
		p.rewrote = true
		return writeVecFileFrom(name, embedder, p.dim, docs, p.l, p.source(off))
	}
	rows, lex := p.l.rows, p.l.lex
	for i := range docs {
		rows[p.l.flagsAt[i]] |= vecFlags(true, docs[i].pending)
	}
	head, tail := vecHead(embedder, p.dim, len(docs), p.n, rows, lex)
	at := int64(0)
	for _, b := range [][]byte{head, rows, lex, tail} {
		if _, err := p.f.WriteAt(b, at); err != nil {
			return fmt.Errorf("write vectors: %w", err)
		}
		at += int64(len(b))
	}
	if at != off {
		return fmt.Errorf("write vectors: the vectors start at %d, want %d", off, at)
	}
	// The vectors' checksum, read back from the page cache: a tenth of
	// a second for a million.
	end := off + int64(p.n)*int64(p.size)
	crc, buf := uint32(0), make([]byte, placeBlockSize)
	for pos := off; pos < end; {
		b := buf[:min(int64(len(buf)), end-pos)]
		if _, err := p.f.ReadAt(b, pos); err != nil {
			return fmt.Errorf("read back vectors: %w", err)
		}
		crc = crc32.Update(crc, castagnoli, b)
		pos += int64(len(b))
	}
	if _, err := p.f.WriteAt(binary.LittleEndian.AppendUint32(nil, crc), end); err != nil {
		return fmt.Errorf("write vectors: %w", err)
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("write vectors: %w", err)
	}
	if err := nameUnnamed(p.f, name); err != nil {
		// No way to name it here: written again, under its name.
		p.rewrote = true
		return writeVecFileFrom(name, embedder, p.dim, docs, p.l, p.source(off))
	}
	return atomicfile.SyncDir(filepath.Dir(name))
}

// source gives the vectors put, for writeVecFileFrom: rows' vectors lie
// at their rows' places from off.
func (p *vecPlacer) source(off int64) vecSource {
	return vecSource{
		has: func(i int) bool { return p.have[i] },
		each: func(yield func([]byte) error) error {
			buf := make([]byte, p.per*p.size)
			for lo := 0; lo < len(p.have); {
				if !p.have[lo] {
					lo++
					continue
				}
				hi := lo + 1
				for hi < len(p.have) && hi-lo < p.per && p.have[hi] {
					hi++
				}
				b := buf[:(hi-lo)*p.size]
				if _, err := p.f.ReadAt(b, off+int64(lo*p.size)); err != nil {
					return fmt.Errorf("read back vectors: %w", err)
				}
				if err := yield(b); err != nil {
					return err
				}
				lo = hi
			}
			return nil
		},
	}
}

func (p *vecPlacer) close() {
	p.blocks, p.free = nil, nil
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}
