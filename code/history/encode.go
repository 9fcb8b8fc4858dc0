package history

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// magic starts an encoded Stats; its last byte is the format's version.
const magic = "MIRAHIST\x01"

// MarshalBinary encodes the Stats. The same Stats always gives the same
// bytes.
func (s *Stats) MarshalBinary() ([]byte, error) {
	s.init()
	e := encoder{b: make([]byte, 0, 1<<16)}
	e.b = append(e.b, magic...)
	e.int(int64(s.opt.HalfLife))
	e.uint(uint64(s.opt.MaxFiles))
	e.uint(uint64(s.opt.Partners))
	e.uint(uint64(s.opt.Authors))
	e.uint(uint64(s.opt.LogLen))
	e.str(s.Head)
	e.int(s.newest)
	e.uint(uint64(s.added))
	e.uint(uint64(len(s.paths)))
	for _, p := range s.paths {
		e.str(p)
	}
	for i := range s.files {
		f := &s.files[i]
		e.uint(uint64(f.commits))
		if f.gone {
			e.b = append(e.b, 1)
		} else {
			e.b = append(e.b, 0)
		}
		e.decayed(f.weight)
		e.pairs(f.partners)
		e.pairs(f.authors)
		e.uint(uint64(len(f.log)))
		for _, slot := range f.log {
			e.uint(uint64(slot))
		}
	}
	e.uint(uint64(len(s.authors)))
	for _, a := range s.authors {
		e.str(a.name)
		e.str(a.email)
		e.int(a.last)
	}
	e.uint(uint64(len(s.commits)))
	for i := range s.commits {
		c := &s.commits[i]
		e.str(c.hash)
		e.int(c.when)
		if c.hash == "" {
			continue // no longer in any log
		}
		e.uint(uint64(c.author))
		e.str(c.subject)
		e.uint(uint64(len(c.files)))
		for _, f := range c.files {
			e.uint(uint64(f))
		}
		e.uint(uint64(c.refs))
	}
	return e.b, nil
}

type encoder struct{ b []byte }

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string)  { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *encoder) decayed(d decayed) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(d.w))
	e.int(d.last)
}

func (e *encoder) pairs(m map[int32]*pairStats) {
	keys := make([]int32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.uint(uint64(len(keys)))
	for _, k := range keys {
		e.uint(uint64(k))
		e.uint(uint64(m[k].count))
		e.decayed(m[k].weight)
	}
}

// UnmarshalBinary replaces the Stats with the one data encodes. Data that
// is not an encoded Stats, or one cut short, gives an error naming the
// byte where it went wrong, and leaves the Stats as it was.
func (s *Stats) UnmarshalBinary(data []byte) error {
	d := decoder{b: data}
	n, err := d.decode()
	if err != nil {
		return fmt.Errorf("history stats: byte %d: %w", d.off, err)
	}
	*s = *n
	return nil
}

type decoder struct {
	b   []byte
	off int
}

var errShort = errors.New("data cut short")

func (d *decoder) uint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		return 0, errShort
	}
	d.off += n
	return v, nil
}

func (d *decoder) int() (int64, error) {
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		return 0, errShort
	}
	d.off += n
	return v, nil
}

// count reads a number of items, each at least min bytes long: a count
// the rest of the data cannot hold is an error, not an allocation.
func (d *decoder) count(what string, min int) (int, error) {
	v, err := d.uint()
	if err != nil {
		return 0, err
	}
	if v > uint64(len(d.b)-d.off)/uint64(min) || v > math.MaxInt32 {
		return 0, fmt.Errorf("%s count %d exceeds the data", what, v)
	}
	return int(v), nil
}

// index reads a number below n.
func (d *decoder) index(what string, n int) (int32, error) {
	v, err := d.uint()
	if err != nil {
		return 0, err
	}
	if v >= uint64(n) {
		return 0, fmt.Errorf("%s %d out of range (%d)", what, v, n)
	}
	return int32(v), nil
}

func (d *decoder) str() (string, error) {
	n, err := d.count("string length", 1)
	if err != nil {
		return "", err
	}
	s := string(d.b[d.off : d.off+n])
	d.off += n
	return s, nil
}

func (d *decoder) decayed() (decayed, error) {
	if len(d.b)-d.off < 8 {
		return decayed{}, errShort
	}
	w := math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.off:]))
	d.off += 8
	if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
		return decayed{}, fmt.Errorf("bad weight %v", w)
	}
	last, err := d.int()
	return decayed{w, last}, err
}

func (d *decoder) pairs(what string, n int) (map[int32]*pairStats, error) {
	k, err := d.count(what, 10)
	if err != nil || k == 0 {
		return nil, err
	}
	m := make(map[int32]*pairStats, k)
	for range k {
		key, err := d.index(what, n)
		if err != nil {
			return nil, err
		}
		c, err := d.uint()
		if err != nil {
			return nil, err
		}
		w, err := d.decayed()
		if err != nil {
			return nil, err
		}
		if c > math.MaxInt32 {
			return nil, fmt.Errorf("%s count %d too large", what, c)
		}
		m[key] = &pairStats{count: int32(c), weight: w}
	}
	return m, nil
}

// decode reads a whole Stats. Every number that indexes something is
// checked; what cannot be checked before the tables it refers to are read
// (authors of partner files, log slots) is checked at the end.
func (d *decoder) decode() (*Stats, error) {
	if len(d.b) < len(magic) || string(d.b[:len(magic)-1]) != magic[:len(magic)-1] {
		return nil, errors.New("not encoded history stats")
	}
	if d.b[len(magic)-1] != magic[len(magic)-1] {
		return nil, fmt.Errorf("format version %d, this program reads %d", d.b[len(magic)-1], magic[len(magic)-1])
	}
	d.off = len(magic)
	s := &Stats{}
	hl, err := d.int()
	if err != nil {
		return nil, err
	}
	var o [4]uint64
	for i, name := range []string{"MaxFiles", "Partners", "Authors", "LogLen"} {
		if o[i], err = d.uint(); err != nil {
			return nil, err
		}
		limit := uint64(MaxKept)
		if i == 0 {
			limit = MaxMaxFiles
		}
		if o[i] < 1 || i == 0 && o[i] < 2 || o[i] > limit {
			return nil, fmt.Errorf("option %s %d out of range", name, o[i])
		}
	}
	if hl <= 0 {
		return nil, fmt.Errorf("option HalfLife %v out of range", time.Duration(hl))
	}
	s.opt = Options{HalfLife: time.Duration(hl), MaxFiles: int(o[0]), Partners: int(o[1]), Authors: int(o[2]), LogLen: int(o[3])}
	s.ready = true
	if s.Head, err = d.str(); err != nil {
		return nil, err
	}
	if s.newest, err = d.int(); err != nil {
		return nil, err
	}
	added, err := d.uint()
	if err != nil {
		return nil, err
	}
	if added > math.MaxInt32 {
		return nil, fmt.Errorf("commit count %d too large", added)
	}
	s.added = int(added)
	np, err := d.count("path", 1)
	if err != nil {
		return nil, err
	}
	s.paths = make([]string, np)
	s.pathID = make(map[string]int32, np)
	for i := range s.paths {
		if s.paths[i], err = d.str(); err != nil {
			return nil, err
		}
	}
	s.files = make([]fileStats, np)
	var authorKeys, slots []int32
	for i := range s.files {
		f := &s.files[i]
		c, err := d.uint()
		if err != nil {
			return nil, err
		}
		if c > math.MaxInt32 {
			return nil, fmt.Errorf("commit count %d too large", c)
		}
		f.commits = int32(c)
		if d.off >= len(d.b) {
			return nil, errShort
		}
		switch d.b[d.off] {
		case 0:
		case 1:
			f.gone = true
		default:
			return nil, fmt.Errorf("bad flag %d", d.b[d.off])
		}
		d.off++
		if f.weight, err = d.decayed(); err != nil {
			return nil, err
		}
		if f.partners, err = d.pairs("partner", np); err != nil {
			return nil, err
		}
		if f.authors, err = d.pairs("author", math.MaxInt32); err != nil {
			return nil, err
		}
		for k := range f.authors {
			authorKeys = append(authorKeys, k)
		}
		nl, err := d.count("log", 1)
		if err != nil {
			return nil, err
		}
		f.log = make([]int32, nl)
		for j := range f.log {
			if f.log[j], err = d.index("log slot", math.MaxInt32); err != nil {
				return nil, err
			}
		}
		slots = append(slots, f.log...)
	}
	// A path removed by forget keeps its name in paths but not in pathID.
	for i, p := range s.paths {
		if s.files[i].gone && s.files[i].commits == 0 {
			continue
		}
		if _, dup := s.pathID[p]; dup {
			return nil, fmt.Errorf("path %q twice", p)
		}
		s.pathID[p] = int32(i)
	}
	na, err := d.count("author", 3)
	if err != nil {
		return nil, err
	}
	s.authors = make([]author, na)
	s.byEmail = make(map[string]int32, na)
	for i := range s.authors {
		a := &s.authors[i]
		if a.name, err = d.str(); err != nil {
			return nil, err
		}
		if a.email, err = d.str(); err != nil {
			return nil, err
		}
		if a.last, err = d.int(); err != nil {
			return nil, err
		}
		s.byEmail[a.email] = int32(i)
	}
	for _, k := range authorKeys {
		if int(k) >= na {
			return nil, fmt.Errorf("author %d out of range (%d)", k, na)
		}
	}
	nc, err := d.count("commit", 2)
	if err != nil {
		return nil, err
	}
	s.commits = make([]commitRec, nc)
	for i := range s.commits {
		c := &s.commits[i]
		if c.hash, err = d.str(); err != nil {
			return nil, err
		}
		if c.when, err = d.int(); err != nil {
			return nil, err
		}
		if c.hash == "" {
			c.author = -1
			continue
		}
		if c.author, err = d.index("author", na); err != nil {
			return nil, err
		}
		if c.subject, err = d.str(); err != nil {
			return nil, err
		}
		nf, err := d.count("file", 1)
		if err != nil {
			return nil, err
		}
		c.files = make([]int32, nf)
		for j := range c.files {
			if c.files[j], err = d.index("path", np); err != nil {
				return nil, err
			}
		}
		r, err := d.uint()
		if err != nil {
			return nil, err
		}
		if r > math.MaxInt32 {
			return nil, fmt.Errorf("reference count %d too large", r)
		}
		c.refs = int32(r)
	}
	for _, slot := range slots {
		if int(slot) >= nc || s.commits[slot].hash == "" {
			return nil, fmt.Errorf("log slot %d names no commit", slot)
		}
	}
	if d.off != len(d.b) {
		return nil, fmt.Errorf("%d bytes of trailing data", len(d.b)-d.off)
	}
	return s, nil
}
