package embed

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
)

const (
	modelMagic   = "MIRAEMB\x00"
	modelVersion = 1
	// maxDFBits bounds the table a file may ask for, so a damaged header
	// cannot make ReadModel allocate without limit.
	maxDFBits = 28
)

// encode returns the model's bytes without the checksum.
func (m *Model) encode() []byte {
	k := m.p.SemDim
	b := make([]byte, 0, 128+len(m.dfTab)+len(m.terms)*(12+k)+4*k)
	b = append(b, modelMagic...)
	b = binary.LittleEndian.AppendUint32(b, modelVersion)
	for _, v := range []int{m.p.LexDim, m.p.SemDim, m.p.MinGram, m.p.MaxGram, m.p.Window} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	for _, v := range []float64{m.p.WordWeight, m.p.BigramWeight, m.p.CharWeight, m.p.StopWeight, m.p.SemWeight, m.p.WindowWeight} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	b = binary.LittleEndian.AppendUint64(b, m.docs)
	b = binary.LittleEndian.AppendUint32(b, uint32(m.dfBits))
	b = append(b, m.dfTab...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.terms)))
	for _, h := range m.terms {
		b = binary.LittleEndian.AppendUint64(b, h)
	}
	for _, s := range m.scale {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(s))
	}
	for _, q := range m.qvec {
		b = append(b, byte(q))
	}
	for _, s := range m.sigma {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(s))
	}
	return b
}

func (m *Model) checksum() [sha256.Size]byte { return sha256.Sum256(m.encode()) }

// WriteTo writes the model in its binary file format (see "Model file" in
// the package documentation) and returns the number of bytes written.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	b := m.encode()
	sum := sha256.Sum256(b)
	n, err := w.Write(append(b, sum[:]...))
	if err != nil {
		return int64(n), fmt.Errorf("write embedding model: %w", err)
	}
	return int64(n), nil
}

// ErrBadModel is wrapped by the errors ReadModel returns for a file that is
// not a model of this version or is damaged: the caller should refit.
var ErrBadModel = errors.New("bad embedding model")

// ReadModel reads a model written by WriteTo. A damaged or foreign file is
// an error wrapping ErrBadModel.
func ReadModel(r io.Reader) (*Model, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("read embedding model: %w", err)
	}
	if len(data) < len(modelMagic)+4+sha256.Size || string(data[:len(modelMagic)]) != modelMagic {
		return nil, fmt.Errorf("read embedding model: %w: not a model file", ErrBadModel)
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("read embedding model: %w: checksum mismatch", ErrBadModel)
	}
	d := decoder{b: body[len(modelMagic):]}
	if v := d.u32(); v != modelVersion {
		return nil, fmt.Errorf("read embedding model: %w: version %d, want %d", ErrBadModel, v, modelVersion)
	}
	m := &Model{}
	m.p.LexDim, m.p.SemDim = int(d.u32()), int(d.u32())
	m.p.MinGram, m.p.MaxGram, m.p.Window = int(d.u32()), int(d.u32()), int(d.u32())
	m.p.WordWeight, m.p.BigramWeight, m.p.CharWeight = d.f64(), d.f64(), d.f64()
	m.p.StopWeight, m.p.SemWeight, m.p.WindowWeight = d.f64(), d.f64(), d.f64()
	m.docs = d.u64()
	bitsN := d.u32()
	if d.err != nil || m.p.LexDim <= 0 || m.p.LexDim > 1<<16 || m.p.SemDim > 1<<14 || bitsN > maxDFBits ||
		m.p.MinGram < 1 || m.p.MaxGram < m.p.MinGram || m.p.MaxGram > 16 || m.p.Window > 1<<10 ||
		!(m.p.SemWeight >= 0 && m.p.SemWeight <= 1) {
		return nil, fmt.Errorf("read embedding model: %w: bad header", ErrBadModel)
	}
	m.dfBits = uint8(bitsN)
	m.dfTab = d.bytes(1 << bitsN) // data is ours: no copy
	nterms := int(d.u32())
	if d.err != nil || nterms > len(d.b)/8 {
		return nil, fmt.Errorf("read embedding model: %w: bad term count", ErrBadModel)
	}
	m.terms = make([]uint64, nterms)
	for i := range m.terms {
		m.terms[i] = d.u64()
	}
	m.scale = make([]float32, nterms)
	for i := range m.scale {
		m.scale[i] = d.f32()
	}
	q := d.bytes(nterms * m.p.SemDim)
	m.qvec = make([]int8, len(q))
	for i, x := range q {
		m.qvec[i] = int8(x)
	}
	m.sigma = make([]float32, m.p.SemDim)
	for i := range m.sigma {
		m.sigma[i] = d.f32()
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, fmt.Errorf("read embedding model: %w: bad length", ErrBadModel)
	}
	if !slices.IsSorted(m.terms) {
		return nil, fmt.Errorf("read embedding model: %w: terms out of order", ErrBadModel)
	}
	var known [sha256.Size]byte
	copy(known[:], sum)
	m.finishWith(known)
	return m, nil
}

// readAll reads r to its end into one buffer of the file's size when r is
// a file: io.ReadAll grows its buffer step by step, copying megabytes at
// every query that loads a model.
func readAll(r io.Reader) ([]byte, error) {
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			b := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
			_, err := b.ReadFrom(r)
			return b.Bytes(), err
		}
	}
	return io.ReadAll(r)
}

// decoder reads little-endian values from a byte slice, remembering the
// first short read.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.err = io.ErrUnexpectedEOF
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) f32() float32 { return math.Float32frombits(d.u32()) }
func (d *decoder) f64() float64 { return math.Float64frombits(d.u64()) }
