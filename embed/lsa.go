package embed

import (
	"cmp"
	"math"
	"slices"
)

// selectVocab picks the words that get learned vectors: document frequency
// at least MinDF, at most MaxVocab of them, most frequent first (ties by
// hash, so the choice is deterministic). It sets m.terms (ascending) and
// returns each term's row.
func (m *Model) selectVocab(wordDF map[uint64]uint32, o FitOptions) map[uint64]int32 {
	type cand struct {
		h  uint64
		df uint32
	}
	cands := make([]cand, 0, len(wordDF))
	for h, df := range wordDF {
		if int(df) >= o.MinDF {
			cands = append(cands, cand{h, df})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if c := cmp.Compare(b.df, a.df); c != 0 {
			return c
		}
		return cmp.Compare(a.h, b.h)
	})
	if len(cands) > o.MaxVocab {
		cands = cands[:o.MaxVocab]
	}
	m.terms = make([]uint64, len(cands))
	for i, c := range cands {
		m.terms[i] = c.h
	}
	slices.Sort(m.terms)
	ix := make(map[uint64]int32, len(m.terms))
	for i, h := range m.terms {
		ix[h] = int32(i)
	}
	return ix
}

// fitLSA learns the term vectors: a rank-SemDim truncated SVD of the
// contexts × words matrix. Row r holds the TF-IDF weights of text r's
// content words plus WindowWeight times those of the Window texts on either
// side, scaled to unit length. A word's vector is its row of the top right
// singular vectors, so words that share contexts, directly or through other
// words, get nearby vectors, and a word seen once still lands where its
// conversation was.
//
// Rows of windows rather than single texts, and LSA rather than random
// indexing or singular-value scaling, because they scored best on LoCoMo
// (TestLoCoMo; docs/performance.md).
func (m *Model) fitLSA(words []docWords, ix map[uint64]int32, o FitOptions) {
	k := m.p.SemDim
	m.sigma = make([]float32, k)
	m.qvec = make([]int8, len(m.terms)*k)
	m.scale = make([]float32, len(m.terms))
	if len(m.terms) == 0 {
		return
	}
	op := m.contextOp(words, ix, o)

	l := min(k+lsaOversample, len(m.terms), len(words))
	// Start from ±1 entries of a fixed-seed SplitMix64 stream: a model
	// depends on its texts only.
	y := newTall(len(m.terms), l)
	state := uint64(0x6d697261)
	for i := range y.v {
		state += 0x9e3779b97f4a7c15
		if mix(state)&1 == 0 {
			y.v[i] = 1
		} else {
			y.v[i] = -1
		}
	}
	// Subspace iteration: y ← AᵀA·y, re-orthonormalised in between so the
	// columns do not all collapse onto the top singular vector.
	for it := range lsaPowerIters {
		if it > 0 {
			y.orthonormalize(o.Workers, 1)
		}
		y = op.gramMul(y, o.Workers)
	}
	y.orthonormalize(o.Workers, 2)
	// Rayleigh–Ritz: the eigenvectors of yᵀ(AᵀA)y rotate y onto the right
	// singular directions; the eigenvalues are the squared singular values.
	g := y.cross(op.gramMul(y, o.Workers), o.Workers)
	for i := 0; i < l; i++ {
		for j := 0; j < i; j++ {
			avg := (g.v[i*l+j] + g.v[j*l+i]) / 2
			g.v[i*l+j], g.v[j*l+i] = avg, avg
		}
	}
	vals, w := symEigen(g)
	// Term vectors: y·w restricted to the top k directions with a
	// positive eigenvalue.
	kk := min(k, l)
	for kk > 0 && vals[kk-1] <= 0 {
		kk--
	}
	// Each term's row is its own: the terms are split over the workers
	// (with 20,000 terms, a second of one core's time otherwise), and
	// taken crossBlock at a time, each row of w applied to all of them in
	// turn so that w is read once per block. A row's sums run in the same
	// order either way.
	parallelRows(len(m.terms), o.Workers, func(lo, hi int) {
		rows := make([]float64, crossBlock*k)
		for t0 := lo; t0 < hi; t0 += crossBlock {
			n := min(crossBlock, hi-t0)
			clear(rows[:n*k])
			for j := range l {
				wj := w.v[j*l : j*l+kk]
				for t := range n {
					qj := y.v[(t0+t)*l+j]
					if qj == 0 {
						continue
					}
					axpy64(rows[t*k:t*k+kk], float64(qj), wj)
				}
			}
			for t := range n {
				m.quantizeRow(t0+t, rows[t*k:t*k+k])
			}
		}
	})
	for c := 0; c < min(k, l); c++ {
		m.sigma[c] = float32(math.Sqrt(max(vals[c], 0)))
	}
}

const (
	lsaOversample = 16
	// lsaPowerIters trades fit time for accuracy of the trailing singular
	// directions: one iteration scores on LoCoMo as more do (TestLoCoMo,
	// per conversation and with one model for all; docs/performance.md)
	// for a fraction of the fit's products (BenchmarkFit100k).
	lsaPowerIters = 1
)

// contextOp is the context matrix A = D·W·X, kept factored: X is texts ×
// terms with TF-IDF weights, W the band that adds WindowWeight times the
// Window texts on either side, D the diagonal that makes A's rows unit
// length. Forming A would multiply X's nonzeros by 2·Window+1; applying
// the band to dense rows instead made the fit three times faster.
type contextOp struct {
	x, xt  *csr
	window int
	weight float64
	scale  []float64 // D
	t1, t2 *tall     // gramMul's room
}

func (m *Model) contextOp(words []docWords, ix map[uint64]int32, o FitOptions) *contextOp {
	x := &csr{rows: len(words), cols: len(m.terms), ptr: make([]int32, len(words)+1)}
	for r, dw := range words {
		for _, f := range dw {
			if c, ok := ix[f.h]; ok {
				x.ind = append(x.ind, c)
				x.val = append(x.val, float32(sublinearTF(f.tf)*m.idf(f.h)))
			}
		}
		x.ptr[r+1] = int32(len(x.ind))
	}
	op := &contextOp{x: x, xt: x.transpose(), window: o.Window, weight: o.WindowWeight, scale: make([]float64, len(words))}
	// Row norms of W·X: sum the window's sparse rows into a scratch row.
	acc := make([]float64, len(m.terms))
	var touched []int32
	for r := range words {
		touched = touched[:0]
		for nb := max(r-op.window, 0); nb <= min(r+op.window, len(words)-1); nb++ {
			w := op.w(nb - r)
			for j := x.ptr[nb]; j < x.ptr[nb+1]; j++ {
				c := x.ind[j]
				if acc[c] == 0 {
					touched = append(touched, c)
				}
				acc[c] += w * float64(x.val[j])
			}
		}
		slices.Sort(touched) // a fixed order for the sum
		var ss float64
		for _, c := range touched {
			ss += acc[c] * acc[c]
			acc[c] = 0
		}
		if ss > 0 {
			op.scale[r] = 1 / math.Sqrt(ss)
		}
	}
	return op
}

// w is the weight of the text at offset d in a window.
func (op *contextOp) w(d int) float64 {
	if d == 0 {
		return 1
	}
	return op.weight
}

// band returns D·W·z (before) or W·D·z (after) for tall z, rows texts,
// in out if it has the shape (and is not z), else in a new matrix.
func (op *contextOp) band(z *tall, scaleAfter bool, workers int, out *tall) *tall {
	n, l := z.rows, z.cols
	out = out.reuse(n, l)
	parallelRows(n, workers, func(lo, hi int) {
		acc := make([]float64, l)
		for r := lo; r < hi; r++ {
			clear(acc)
			for nb := max(r-op.window, 0); nb <= min(r+op.window, n-1); nb++ {
				w := op.w(nb - r)
				if !scaleAfter {
					w *= op.scale[nb]
				}
				axpyWiden(acc, w, z.row(nb))
			}
			s := 1.0
			if scaleAfter {
				s = op.scale[r]
			}
			o := out.row(r)
			for c, x := range acc {
				o[c] = float32(s * x)
			}
		}
	})
	return out
}

// gramMul returns AᵀA·y = Xᵀ·W·D·D·W·X·y.
func (op *contextOp) gramMul(y *tall, workers int) *tall {
	// The products by texts go through two matrices kept for the next
	// call: at 25,000 texts each is 27 MB, and a fit made a dozen.
	op.t1 = op.x.mul(y, workers, op.t1)
	op.t2 = op.band(op.t1, true, workers, op.t2) // D·W·X·y
	op.t1 = op.band(op.t2, false, workers, op.t1)
	return op.xt.mul(op.t1, workers, nil)
}

// quantizeRow stores row t of the term vectors as int8 with a per-row
// scale: a quarter of the size of float32, and the rounding (under 0.4% of
// the row's largest component) is far below the noise of a fitted LSA.
func (m *Model) quantizeRow(t int, row []float64) {
	k := m.p.SemDim
	mx := 0.0
	for _, x := range row {
		mx = max(mx, math.Abs(x))
	}
	if mx == 0 {
		return
	}
	m.scale[t] = float32(mx / 127)
	for j, x := range row {
		m.qvec[t*k+j] = int8(math.Round(x / mx * 127))
	}
}
