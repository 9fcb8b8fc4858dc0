package index

import (
	"container/heap"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The vector scan of a long-lived process (a server, the proxy, the MCP
// server) reads 8-bit codes of the vectors instead of their float32s: a
// quarter of the memory to stream through for every query. The codes
// only choose which rows to score exactly: each code's scalar product
// with the query comes with a bound on its distance from the exact
// cosine, the rows whose bound leaves them a chance of the top n are
// scored with dot as before, and the rest are provably out. The result is
// the exact scan's, to the bit (TestNearestQ8MatchesExact).
//
// A vector v of unit length is stored as s·c, c in [-127, 127]^dim and s =
// max|v_i|/127, with e = ‖v − s·c‖ and m = ‖s·c‖ kept beside it; the query
// q as t·u, u 16-bit, with f = ‖q − t·u‖. Then
//
//	q·v − (t·u)·(s·c) = q·(v − s·c) + (q − t·u)·(s·c)
//
// is at most e + f·m in size (Cauchy–Schwarz, ‖q‖ = 1), and u·c is an
// integer the processor sums exactly (dotQ8SIMD). A command that searches
// once never builds codes: building them costs more than one scan of the
// floats (see q8Scans).

// q8Set is the 8-bit codes of a run of vectors.
type q8Set struct {
	stride int       // codes per vector: dim rounded up to q8Block, zeros after dim
	codes  []int8    // vector i at codes[i*stride:(i+1)*stride]
	scale  []float32 // s of each vector
	bound  []float32 // e of each vector, rounded up
	norm   []float32 // m of each vector, rounded up
}

// q8Block is how many codes dotQ8SIMD takes per step.
const q8Block = 32

// buildCodes starts building the codes of vs's base vectors in the
// background, unless they are built or being built. Scans read the floats
// until the codes are there.
func (vs *vecStore) buildCodes() {
	if code := vs.coder(); code != nil {
		go code(1)
	}
}

// codeNow builds the codes of vs's base vectors before it returns, over
// every processor, unless they are built or being built.
func (vs *vecStore) codeNow() {
	if code := vs.coder(); code != nil {
		code(runtime.GOMAXPROCS(0))
	}
}

// coder returns the function that builds the codes of vs's base vectors
// in parts goroutines, nil if they are built or being built. The function
// holds the floats (a reference to their mapping) until it has built the
// codes and dropped the floats' pages, even if vs is closed meanwhile.
func (vs *vecStore) coder() func(parts int) {
	b := vs.q8
	if !q8Enabled || b == nil || vs.nbaseVec == 0 || !b.building.CompareAndSwap(false, true) {
		return nil
	}
	floats, mapped, n, dim := vs.base[:vs.nbaseVec*vs.dim], vs.mapped, vs.nbaseVec, vs.dim
	rows := vs.rows[:vs.nbase]
	if mapped != nil {
		mapped.refs.Add(1)
	}
	return func(parts int) {
		codes := newQ8Set(n, dim)
		per := max(1, behindChunk/(4*dim))
		// Floats whose pages the load let go of behind it are read
		// into a buffer, not through the mapping: faulting them back
		// in and dropping them again, from every core at once, made
		// coding a million vectors 5 s of a server's first search
		// where the arithmetic is 1.2 s.
		read := mapped != nil && mapped.behind
		var wg sync.WaitGroup
		for p := range parts {
			wg.Go(func() {
				var buf []float32
				for lo := p * per; lo < n; lo += parts * per {
					hi := min(lo+per, n)
					v := floats[lo*dim : hi*dim]
					if read {
						if buf == nil {
							buf = make([]float32, per*dim)
						}
						b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), 4*len(v))
						if _, err := mapped.file.ReadAt(b, mapped.off+int64(lo)*int64(4*dim)); err == nil {
							v = buf[:len(v)]
						}
					}
					codes.fill(lo, v, dim)
					if !read {
						mapped.dropVecs(lo, hi, dim)
					}
				}
			})
		}
		wg.Wait()
		if mapped != nil {
			if mapped.behind {
				// From now on a scan reads a few rows' floats, and
				// reads them from the file (see vecStore.exact).
				mapped.paged.Store(true)
				mapped.drop()
			}
			if mapped.refs.Add(-1) == 0 {
				mapped.unmap()
			}
		}
		if n >= coarseMin {
			b.center = codeCenter(codes, dim)
			b.signs = buildSigns(codes, dim, b.center, parts, func(s *q1Set) {
				for i := range rows {
					if v := rows[i].vec; v >= 0 && int(v) < n {
						s.row[v] = int32(i)
					}
				}
			})
		}
		b.set.Store(codes) // once the floats are let go of
	}
}

// q8Base is the codes of a base file's vectors, shared like its mapping
// by every store extended from the one that read it. A process that keeps
// the index builds them as it loads the vectors (large ones once its first
// search has scanned them), another once it has scanned them twice
// (codesFor).
type q8Base struct {
	scans    atomic.Int32
	building atomic.Bool
	set      atomic.Pointer[q8Set]
	// coded counts the scans through the codes; every q8Drop-th drops
	// the mapping's pages again (see sharedMap.drop), which what else
	// reads the floats through it, such as a log compaction, maps back.
	coded atomic.Int32
	// center and signs, for a base of coarseMin vectors or more, are the
	// mean the sign codes are taken against and the codes (q1.go); set
	// before set, read after it.
	center []float32
	signs  *q1Set
	// afterScan: the codes are built once a scan has read the floats
	// (a server's large base, see Index.loadVectors); set before the
	// base is shared.
	afterScan bool
}

// q8Drop is how many scans through the codes come between two drops of
// the floats' pages: with few of them resident, a drop takes a few
// microseconds at 100,000 entries.
const q8Drop = 64

// q8Log is the codes of the vectors a store has beyond its base file's
// (from the log): a few, built by the first scan that uses codes.
type q8Log struct {
	once  sync.Once
	set   *q8Set
	signs *q1Set // when the base has them (q1.go)
}

// q8Enabled is whether scans may use codes: only where the processor
// sums them (AVX2); elsewhere the float scan is as fast. A variable, so
// that tests take the code path on any machine.
var q8Enabled = useSIMD

// q8Scans is how many scans of a base file's vectors come before its
// codes are built: a command that searches once never pays for them.
const q8Scans = 2

// codesFor returns the codes to scan vs with, or nil while there are
// none (the caller scans the floats). Each call counts as a scan of the
// base; the second starts building its codes in the background.
func (vs *vecStore) codesFor() (base, log *q8Set) {
	if !q8Enabled || vs.q8 == nil || vs.q8log == nil || vs.dim == 0 || vs.rowsOnly {
		return nil, nil
	}
	b := vs.q8
	if vs.nbaseVec > 0 {
		base = b.set.Load()
		if base == nil {
			if b.scans.Add(1) >= q8Scans {
				vs.buildCodes()
			}
			return nil, nil
		}
	}
	vs.q8log.once.Do(func() {
		set := quantize(vs.vecs, vs.dim)
		if base != nil && b.signs != nil {
			vs.q8log.signs = buildSigns(set, vs.dim, b.center, 1, func(s *q1Set) {
				for i := vs.nbase; i < len(vs.rows); i++ {
					if v := int(vs.rows[i].vec) - vs.nbaseVec; v >= 0 && v < len(s.row) {
						s.row[v] = int32(i)
					}
				}
			})
		}
		vs.q8log.set = set
	})
	log = vs.q8log.set
	if len(log.scale) != len(vs.vecs)/vs.dim {
		return nil, nil // vectors put after the codes were made
	}
	return base, log
}

// quantize codes the vectors of dim floats each in vecs.
func quantize(vecs []float32, dim int) *q8Set {
	s := newQ8Set(len(vecs)/dim, dim)
	s.fill(0, vecs, dim)
	return s
}

// newQ8Set makes room for the codes of n vectors of dim floats.
func newQ8Set(n, dim int) *q8Set {
	stride := (dim + q8Block - 1) / q8Block * q8Block
	return &q8Set{
		stride: stride,
		codes:  make([]int8, n*stride),
		scale:  make([]float32, n),
		bound:  make([]float32, n),
		norm:   make([]float32, n),
	}
}

// fill codes the vectors of dim floats each in vecs as vectors first,
// first+1, ...
func (s *q8Set) fill(first int, vecs []float32, dim int) {
	stride := s.stride
	for k := range len(vecs) / dim {
		i := first + k
		v := vecs[k*dim : (k+1)*dim]
		c := s.codes[i*stride : i*stride+dim]
		// The largest size, compared as bits: for floats of one sign
		// their order (a NaN's bits beat every number's).
		var mb uint32
		for _, x := range v {
			mb = max(mb, math.Float32bits(x)&^(1<<31))
		}
		m := math.Float32frombits(mb)
		if m == 0 || math.IsInf(float64(m), 0) || math.IsNaN(float64(m)) {
			// No codes: the bound alone keeps the row in play.
			s.bound[i] = roundUp(norm64(v))
			continue
		}
		sc, inv := m/127, 127/m
		var e2, n2 float64
		for j, x := range v {
			// To the nearest code, without a branch on the sign (a
			// coin toss for the predictor); how it rounds does not
			// matter to the bound, which is measured below.
			y := x * inv
			q := max(-127, min(127, int32(y+math.Float32frombits(math.Float32bits(0.5)|math.Float32bits(y)&(1<<31)))))
			c[j] = int8(q)
			back := float64(sc) * float64(q)
			d := float64(x) - back
			e2 += d * d
			n2 += back * back
		}
		s.scale[i] = sc
		s.bound[i] = roundUp(math.Sqrt(e2))
		s.norm[i] = roundUp(math.Sqrt(n2))
	}
}

func norm64(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// roundUp is x as a float32 no smaller than x (NaN and ±Inf as +Inf).
func roundUp(x float64) float32 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x > math.MaxFloat32 {
		return float32(math.Inf(1))
	}
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// q8Query is a query vector in 16 bits: q ≈ t·u, ‖q − t·u‖ ≤ f.
type q8Query struct {
	u []int16
	t float64
	f float64
}

// quantizeQuery codes q for codes of the given stride. The range of u is
// limited so that no sum dotQ8SIMD makes can overflow 32 bits.
func quantizeQuery(q []float32, stride int) q8Query {
	qq := q8Query{u: make([]int16, stride)}
	var mb uint32
	for _, x := range q {
		mb = max(mb, math.Float32bits(x)&^(1<<31))
	}
	m := math.Float32frombits(mb)
	if m == 0 {
		qq.f = norm64(q)
		return qq
	}
	lim := min(32767, math.Floor(float64(math.MaxInt32)/(127*float64(stride))))
	t := float64(m) / lim
	var e2 float64
	for j, x := range q {
		u := max(-lim, min(lim, math.Round(float64(x)/t)))
		qq.u[j] = int16(u)
		d := float64(x) - t*u
		e2 += d * d
	}
	qq.t = t
	qq.f = math.Sqrt(e2)
	return qq
}

// dotQ8 is u·c over the first len(c) codes; len(c) is a multiple of
// q8Block.
func dotQ8(u []int16, c []int8) int32 {
	if useSIMD && q8SIMD {
		return dotQ8SIMD(&u[0], &c[0], len(c))
	}
	return dotQ8Go(u, c)
}

// q8SIMD is whether dotQ8 takes the processor's path; tests turn it off.
var q8SIMD = true

func dotQ8Go(u []int16, c []int8) int32 {
	u = u[:len(c)]
	var s0, s1, s2, s3 int32
	for i := 0; i+4 <= len(c); i += 4 {
		s0 += int32(u[i]) * int32(c[i])
		s1 += int32(u[i+1]) * int32(c[i+1])
		s2 += int32(u[i+2]) * int32(c[i+2])
		s3 += int32(u[i+3]) * int32(c[i+3])
	}
	return s0 + s1 + s2 + s3
}

// q8Slack covers what the bound leaves out: the rounding of dot's float32
// sums, of the float64 products here, and of a query of length 1 ± ε.
func q8Slack(dim int) float64 { return 1e-5 + 1e-7*float64(dim) }

// nearestQ8 is nearest's scan through the codes: the same rows, in the
// same order, with the same cosines.
func (vq *vecQuery) nearestQ8(f *rowFilter, n int, minCos float64, base, log *q8Set, parts int) []vecHit {
	vs := vq.side.vs
	stride := log.stride
	qq := quantizeQuery(vq.vec, stride)
	slack := q8Slack(vs.dim)
	ub := ubPool.get(len(vs.rows))
	defer ubPool.put(ub)
	// First pass: each row's upper bound on its cosine, and each part's
	// n best lower bounds.
	lows := make([]lowHeap, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(vs.rows)/parts, (p+1)*len(vs.rows)/parts
		wg.Go(func() {
			h := make(lowHeap, 0, n)
			for i := lo; i < hi; i++ {
				r := &vs.rows[i]
				ub[i] = math.Inf(-1)
				if r.dead || r.vec < 0 || (f != nil && !f.pass(r)) {
					continue
				}
				set, v := base, int(r.vec)
				if v >= vs.nbaseVec {
					set, v = log, v-vs.nbaseVec
				}
				a := qq.t * float64(set.scale[v]) * float64(dotQ8(qq.u, set.codes[v*stride:(v+1)*stride]))
				b := float64(set.bound[v]) + qq.f*float64(set.norm[v]) + slack
				if a+b <= minCos {
					continue
				}
				ub[i] = a + b
				if low := a - b; len(h) < n {
					heap.Push(&h, low)
				} else if low > h[0] {
					h[0] = low
					heap.Fix(&h, 0)
				}
			}
			lows[p] = h
		})
	}
	wg.Wait()
	// tau: the n-th best lower bound. n rows have a cosine of at least
	// tau, so a row whose upper bound is under it is not among the n.
	tau := math.Inf(-1)
	all := lows[0]
	for _, h := range lows[1:] {
		for _, low := range h {
			if len(all) < n {
				heap.Push(&all, low)
			} else if low > all[0] {
				all[0] = low
				heap.Fix(&all, 0)
			}
		}
	}
	if len(all) == n {
		tau = all[0]
	}
	var left []uint64
	for i, u := range ub {
		if u >= tau && u != math.Inf(-1) {
			left = append(left, boundKey(u, i))
		}
	}
	return vq.q8Finish(left, n, minCos, base)
}

// q8Finish returns the n rows of left (keys of rows and their upper
// bounds, boundKey) with the highest cosines above minCos, best first.
func (vq *vecQuery) q8Finish(left []uint64, n int, minCos float64, base *q8Set) []vecHit {
	vs := vq.side.vs
	// The exact cosines of the rows left, highest bound first: once n
	// rows are in hand, a row whose bound is under the n-th cosine cannot
	// enter, nor can any after it. At 10k entries a hybrid recall had
	// 500 rows over tau and needed the cosines of a few dozen.
	slices.Sort(left)
	top := make([]vecHit, 0, n+1)
	for _, k := range left {
		u, i := keyBound(k)
		if len(top) == n && u < top[n-1].cos {
			break
		}
		if c := dot(vq.vec, vq.exact(i)); c > minCos {
			top = insertTop(top, vecHit{row: i, cos: c}, n) // ties go to the lower row, as in a scan
		}
	}
	if base != nil && vs.paged() && vs.q8.coded.Add(1)%q8Drop == 0 {
		vs.mapped.drop()
	}
	return top
}

// boundKey packs a row and its upper bound u into a number that sorts
// before the keys of lower bounds: the bound as a float32 rounded up (so
// that it still bounds the cosine), then the row.
func boundKey(u float64, row int) uint64 {
	f := float32(u)
	if float64(f) < u {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	b := math.Float32bits(f)
	if b>>31 == 1 {
		b = ^b // negative: larger magnitudes first
	} else {
		b |= 1 << 31
	}
	return uint64(^b)<<32 | uint64(uint32(row))
}

// keyBound is what boundKey packed: the rounded bound and the row.
func keyBound(k uint64) (float64, int) {
	b := ^uint32(k >> 32)
	if b>>31 == 1 {
		b &^= 1 << 31
	} else {
		b = ^b
	}
	return float64(math.Float32frombits(b)), int(uint32(k))
}

// lowHeap is a min-heap of lower bounds.
type lowHeap []float64

func (h lowHeap) Len() int           { return len(h) }
func (h lowHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h lowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lowHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *lowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// ubPool keeps the scans' bound arrays, one per search under way.
var ubPool = floatPool{p: sync.Pool{New: func() any { return new([]float64) }}}

type floatPool struct{ p sync.Pool }

func (fp *floatPool) get(n int) []float64 {
	s := fp.p.Get().(*[]float64)
	if cap(*s) < n {
		*s = make([]float64, n)
	}
	return (*s)[:n]
}

func (fp *floatPool) put(s []float64) { fp.p.Put(&s) }
