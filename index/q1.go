package index

import (
	"container/heap"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// A large store's scan first goes through one bit per dimension of each
// vector: whether its 8-bit code lies above the mean of the base's, the
// sign of the vector less that mean. The query stays in 4 bits a
// dimension (signed, in bit planes), so that a vector's coarse score, the
// query's sum over the dimensions whose bit is set, is four popcounts a
// word: 48 bytes a vector to read at 384 dimensions, an eighth of the
// 8-bit codes. The coarseShare best vectors by that score that pass the
// filters are the candidates; nearestQ8's bounds and the exact cosines
// then rank them as before. The n nearest among the candidates are
// exactly those; a row outside them is not seen, so the result is the
// exact scan's only as far as the coarse score keeps the nearest rows
// among its best (see coarseShare for the measured loss).

// coarseMin is the fewest vectors a scan goes through the sign codes for;
// below it a scan goes through the 8-bit codes of every row, exact. A
// variable, so that tests take the coarse path on small stores.
var coarseMin = 1 << 17

// coarseShare: a coarse pass keeps the vectors/coarseShare best candidates
// (and at least coarseFloor, and 32 for each row asked for). On a
// generated store of 1M entries (random texts of a common vocabulary,
// whose cosines lie close together: the 60th nearest 0.40 where the
// nearest is 0.50), 15,600 candidates held 99.9% of the exact scan's 60
// nearest rows over 200 queries and all of its 10 nearest; see
// TestCoarseRecall.
const (
	coarseShare = 64
	coarseFloor = 4096
)

// q1Planes is how many bits a dimension of the query has.
const q1Planes = 4

// q1Set is the sign codes of a run of vectors and the rows they belong to.
type q1Set struct {
	words int      // 64-bit words per vector
	signs []uint64 // vector i at signs[i*words:(i+1)*words]
	row   []int32  // the row of vector i
}

// signsOf builds the sign codes of codes' vectors against center (dim
// values), for vectors first, first+1, ... of s.
func (s *q1Set) fill(first int, codes *q8Set, from, to int, center []float32) {
	dim := len(center)
	for i := from; i < to; i++ {
		c := codes.codes[i*codes.stride : i*codes.stride+dim]
		sc := codes.scale[i]
		w := s.signs[(first+i-from)*s.words : (first+i-from+1)*s.words]
		clear(w)
		if sc == 0 {
			continue // no codes (see q8Set.fill): no bit set
		}
		// A word at a time, each bit set without a branch: which
		// side of the mean a code falls is a coin toss for the
		// predictor (3 s of a million vectors' first search).
		for k := range w {
			lo := k * 64
			var word uint64
			for j, x := range c[lo:min(lo+64, dim)] {
				word |= b2u(sc*float32(x) > center[lo+j]) << j
			}
			w[k] = word
		}
	}
}

// b2u is 1 for true and 0 for false.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// newQ1Set makes room for the sign codes of n vectors of dim dimensions.
func newQ1Set(n, dim int) *q1Set {
	words := (dim + 63) / 64
	return &q1Set{words: words, signs: make([]uint64, n*words), row: make([]int32, n)}
}

// codeCenter is the mean of the vectors codes stands for (each code
// times its scale): what the signs are taken against.
func codeCenter(codes *q8Set, dim int) []float32 {
	n := len(codes.scale)
	sum := make([]float64, dim)
	for i := range n {
		sc := float64(codes.scale[i])
		for j, x := range codes.codes[i*codes.stride : i*codes.stride+dim] {
			sum[j] += sc * float64(x)
		}
	}
	center := make([]float32, dim)
	for j := range sum {
		center[j] = float32(sum[j] / float64(max(n, 1)))
	}
	return center
}

// buildSigns returns the sign codes of codes' vectors against center,
// over parts goroutines, and rowOf: the row of each vector.
func buildSigns(codes *q8Set, dim int, center []float32, parts int, rowOf func(s *q1Set)) *q1Set {
	n := len(codes.scale)
	s := newQ1Set(n, dim)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Go(func() { s.fill(lo, codes, lo, hi, center) })
	}
	wg.Wait()
	rowOf(s)
	return s
}

// q1Query is a query in bit planes: dimension j's value u_j in [-7, 7]
// is the sum over the planes k of plane k's bit j times 1, 2, 4 and -8;
// planes[w*q1Planes+k] is plane k's word w.
type q1Query struct {
	planes []uint64
}

// quantizePlanes puts q into bit planes, scaled so that its largest
// value in size is 7.
func quantizePlanes(q []float32, words int) q1Query {
	qq := q1Query{planes: make([]uint64, words*q1Planes)}
	var m float64
	for _, x := range q {
		m = max(m, math.Abs(float64(x)))
	}
	if m == 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		return qq
	}
	for j, x := range q {
		u := int(math.Round(float64(x) * 7 / m))
		b := uint(u) & (1<<q1Planes - 1) // two's complement in 4 bits
		for k := range q1Planes {
			if b>>k&1 == 1 {
				qq.planes[(j/64)*q1Planes+k] |= 1 << (j % 64)
			}
		}
	}
	return qq
}

// score is the query's sum over the dimensions whose bit is set in
// signs (one vector's words).
func (qq *q1Query) score(signs []uint64) int32 {
	if len(signs) == 6 { // 384 dimensions, the built-in embedder's
		return qq.score6((*[6]uint64)(signs), (*[6 * q1Planes]uint64)(qq.planes))
	}
	p := qq.planes[:len(signs)*q1Planes]
	s := 0
	for w, x := range signs {
		pw := (*[q1Planes]uint64)(p[w*q1Planes:])
		s += bits.OnesCount64(x&pw[0]) + bits.OnesCount64(x&pw[1])<<1 + bits.OnesCount64(x&pw[2])<<2 - bits.OnesCount64(x&pw[3])<<3
	}
	return int32(s)
}

// scores writes the scores of s's vectors [from, to) to out.
func (qq *q1Query) scores(s *q1Set, from, to int, out []int32) {
	if s.words == 6 && q1SIMD && useSIMD {
		coarseScores6(&s.signs[from*6], &qq.planes[0], to-from, &out[0])
		return
	}
	for i := from; i < to; i++ {
		out[i-from] = qq.score(s.signs[i*s.words : (i+1)*s.words])
	}
}

// q1SIMD is whether scores takes the processor's path (POPCNT, which
// every processor with AVX2 has); tests turn it off.
var q1SIMD = true

// score6 is score for six words, one sum (the compiler keeps it and the
// word in registers).
func (qq *q1Query) score6(x *[6]uint64, p *[6 * q1Planes]uint64) int32 {
	s := 0
	for w := 0; w < 6; w++ {
		v := x[w]
		pw := (*[q1Planes]uint64)(p[w*q1Planes:])
		s += bits.OnesCount64(v&pw[0]) + bits.OnesCount64(v&pw[1])<<1 + bits.OnesCount64(v&pw[2])<<2 - bits.OnesCount64(v&pw[3])<<3
	}
	return int32(s)
}

// coarseScratch is one coarse pass's scores, by vector, reused.
var coarseScratch keptPool[[]int32]

// coarseCandidates returns the rows (and vectors) of the want vectors
// with the best coarse scores among those that are live, have a vector
// and pass f (nil: all), ties at the last score all taken, in row order. sets are the
// sign codes of the base's vectors and the log's, in that order.
func (vq *vecQuery) coarseCandidates(f *rowFilter, want int, sets []*q1Set, parts int) []coarseHit {
	vs := vq.side.vs
	total := 0
	for _, s := range sets {
		total += len(s.row)
	}
	qq := quantizePlanes(vq.vec, sets[0].words)
	bound := 8 * vs.dim // no score is larger in size
	sp := coarseScratch.get()
	defer coarseScratch.put(sp)
	if cap(*sp) < total {
		*sp = make([]int32, total)
	}
	scores := (*sp)[:total]
	hists := make([][]int32, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*total/parts, (p+1)*total/parts
		wg.Go(func() {
			h := make([]int32, 2*bound+1)
			off := 0
			for _, s := range sets {
				// This part's vectors of s: [from, to) of all.
				from, to := max(lo, off), min(hi, off+len(s.row))
				if from < to {
					qq.scores(s, from-off, to-off, scores[from:to])
				}
				off += len(s.row)
			}
			for _, sc := range scores[lo:hi] {
				h[int(sc)+bound]++
			}
			hists[p] = h
		})
	}
	wg.Wait()
	hist := hists[0]
	for _, h := range hists[1:] {
		for i, c := range h {
			hist[i] += c
		}
	}
	rowOf := func(v int) int32 {
		for _, s := range sets {
			if v < len(s.row) {
				return s.row[v]
			}
			v -= len(s.row)
		}
		return -1
	}
	// Lower the threshold bin by bin until want vectors that pass are
	// in: each round takes the bins that should bring in what is
	// missing, at the share of vectors that passed so far.
	out := make([]coarseHit, 0, want+want/8)
	top, taken, passed := len(hist), 0, 0
	for top > 0 && len(out) < want {
		need := want - len(out)
		if taken > 0 && passed < taken {
			need = int(min(float64(total), float64(need)*float64(taken)/float64(max(passed, 1))))
		}
		t, got := top, 0
		for t > 0 && got < need {
			t--
			got += int(hist[t])
		}
		lo, width := int32(t-bound), uint32(top-t)
		for v, sc := range scores {
			if uint32(sc-lo) >= width {
				continue
			}
			taken++
			row := rowOf(v)
			r := &vs.rows[row]
			if r.dead || r.vec < 0 || (f != nil && !f.pass(r)) {
				continue
			}
			passed++
			out = append(out, coarseHit{row, int32(v)})
		}
		top = t
	}
	slices.SortFunc(out, func(a, b coarseHit) int { return int(a.row - b.row) })
	return out
}

// coarseHit is a candidate of the coarse pass: its row and its vector.
type coarseHit struct{ row, vec int32 }

// signsFor returns the sign codes to go with the 8-bit codes base and
// log (codesFor), the base's then the log's, or nil when the scan goes
// through the 8-bit codes alone.
func (vs *vecStore) signsFor(base, log *q8Set) []*q1Set {
	if base == nil || log == nil || vs.q8.signs == nil || vs.q8log.signs == nil || len(base.scale)+len(log.scale) < coarseMin {
		return nil
	}
	return []*q1Set{vs.q8.signs, vs.q8log.signs}
}

// coarseWant is how many candidates a coarse pass over total vectors
// keeps for the n nearest.
func coarseWant(total, n int) int {
	return min(total, max(total/coarseShare, coarseFloor, 32*n))
}

// nearestCoarse is nearestQ8 over the candidates of a coarse pass: the n
// rows among them with the highest cosines above minCos, best first.
func (vq *vecQuery) nearestCoarse(f *rowFilter, n int, minCos float64, base, log *q8Set, sets []*q1Set, parts int) []vecHit {
	vs := vq.side.vs
	total := 0
	for _, s := range sets {
		total += len(s.row)
	}
	cands := vq.coarseCandidates(f, coarseWant(total, n), sets, parts)
	stride := log.stride
	qq := quantizeQuery(vq.vec, stride)
	slack := q8Slack(vs.dim)
	type bounded struct {
		u   float64
		row int32
	}
	ubs := make([]bounded, 0, len(cands))
	h := make(lowHeap, 0, n)
	for _, c := range cands {
		i, set, v := c.row, base, int(c.vec)
		if v >= vs.nbaseVec {
			set, v = log, v-vs.nbaseVec
		}
		a := qq.t * float64(set.scale[v]) * float64(dotQ8(qq.u, set.codes[v*stride:(v+1)*stride]))
		b := float64(set.bound[v]) + qq.f*float64(set.norm[v]) + slack
		if a+b <= minCos {
			continue
		}
		ubs = append(ubs, bounded{a + b, i})
		if low := a - b; len(h) < n {
			heap.Push(&h, low)
		} else if low > h[0] {
			h[0] = low
			heap.Fix(&h, 0)
		}
	}
	tau := math.Inf(-1)
	if len(h) == n {
		tau = h[0]
	}
	var left []uint64
	for _, b := range ubs {
		if b.u >= tau {
			left = append(left, boundKey(b.u, int(b.row)))
		}
	}
	return vq.q8Finish(left, n, minCos, base)
}
