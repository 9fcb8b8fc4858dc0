package embed

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// csr is a sparse matrix in compressed-row form.
type csr struct {
	rows, cols int
	ptr        []int32 // row r is ind/val[ptr[r]:ptr[r+1]]
	ind        []int32
	val        []float32
}

// transpose returns the matrix in compressed-row form of its transpose (so
// its columns can be walked one at a time, each independently).
func (a *csr) transpose() *csr {
	t := &csr{rows: a.cols, cols: a.rows, ptr: make([]int32, a.cols+1), ind: make([]int32, len(a.ind)), val: make([]float32, len(a.val))}
	for _, c := range a.ind {
		t.ptr[c+1]++
	}
	for i := 1; i <= a.cols; i++ {
		t.ptr[i] += t.ptr[i-1]
	}
	fill := make([]int32, a.cols)
	copy(fill, t.ptr[:a.cols])
	for r := 0; r < a.rows; r++ {
		for j := a.ptr[r]; j < a.ptr[r+1]; j++ {
			c := a.ind[j]
			t.ind[fill[c]] = int32(r)
			t.val[fill[c]] = a.val[j]
			fill[c]++
		}
	}
	return t
}

// dense is a small row-major matrix of float64 (Gram matrices, their
// eigenvectors).
type dense struct {
	rows, cols int
	v          []float64
}

func newDense(r, c int) *dense { return &dense{rows: r, cols: c, v: make([]float64, r*c)} }

// tall is a tall row-major matrix (texts × l or terms × l) stored as
// float32 to halve memory: at 100,000 texts and l = 272 one is 109 MB.
// Every sum over it is taken in float64.
type tall struct {
	rows, cols int
	v          []float32
}

func newTall(r, c int) *tall { return &tall{rows: r, cols: c, v: make([]float32, r*c)} }

// reuse returns d if it is r×c, else a new r×c matrix.
func (d *tall) reuse(r, c int) *tall {
	if d != nil && d.rows == r && d.cols == c {
		return d
	}
	return newTall(r, c)
}

func (d *tall) row(i int) []float32 { return d.v[i*d.cols : (i+1)*d.cols] }

// parallelRows runs f over [0,n) split into contiguous ranges, one per
// worker. f must write only to rows of its own range, so the result does not
// depend on the number of workers.
func parallelRows(n, workers int, f func(lo, hi int)) {
	if workers <= 1 || n < 2 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(lo+step, n))
	}
	wg.Wait()
}

// mulRow sets acc to row r of a·b.
func (a *csr) mulRow(r int, b *tall, acc []float64) {
	clear(acc)
	for j := a.ptr[r]; j < a.ptr[r+1]; j++ {
		axpyWiden(acc, float64(a.val[j]), b.row(int(a.ind[j])))
	}
}

// mul returns a·b for sparse a and tall b, in out if it has the shape
// (its contents are overwritten), else in a new matrix.
func (a *csr) mul(b *tall, workers int, out *tall) *tall {
	out = out.reuse(a.rows, b.cols)
	parallelRows(a.rows, workers, func(lo, hi int) {
		acc := make([]float64, b.cols)
		for r := lo; r < hi; r++ {
			a.mulRow(r, b, acc)
			o := out.row(r)
			for c, x := range acc {
				o[c] = float32(x)
			}
		}
	})
	return out
}

// gramChunk is the fixed number of rows summed together when computing
// aᵀb: fixing it (rather than splitting by worker) keeps the floating-point
// summation order, and so the result, independent of the core count.
const gramChunk = 4096

// crossBlock is how many rows cross takes at a time: their columns are
// copied out as contiguous float64s, and each cell of the result gets the
// dot product of two of them, so that the result (592 KB at 272 columns)
// is read and written once per block rather than once per row.
const crossBlock = 64

// cross returns aᵀb (a.cols × b.cols) for tall a and b with equal rows.
func (a *tall) cross(b *tall, workers int) *dense {
	la, lb := a.cols, b.cols
	sym := a == b
	nChunks := (a.rows + gramChunk - 1) / gramChunk
	parts := make([][]float64, nChunks)
	parallelRows(nChunks, workers, func(lo, hi int) {
		at := make([]float64, la*crossBlock)
		bt := at
		if !sym {
			bt = make([]float64, lb*crossBlock)
		}
		for ch := lo; ch < hi; ch++ {
			g := make([]float64, la*lb)
			end := min((ch+1)*gramChunk, a.rows)
			for r0 := ch * gramChunk; r0 < end; r0 += crossBlock {
				n := min(crossBlock, end-r0)
				for r := range n {
					for i, x := range a.row(r0 + r) {
						at[i*crossBlock+r] = float64(x)
					}
					if !sym {
						for j, x := range b.row(r0 + r) {
							bt[j*crossBlock+r] = float64(x)
						}
					}
				}
				for i := range la {
					ai := at[i*crossBlock : i*crossBlock+n]
					// aᵀa is symmetric: its upper triangle is enough.
					from := 0
					if sym {
						from = i
					}
					gi := g[i*lb : i*lb+lb]
					j := from
					for ; j+4 <= lb; j += 4 {
						d0, d1, d2, d3 := dot64x4(ai, bt[j*crossBlock:], crossBlock)
						gi[j] += d0
						gi[j+1] += d1
						gi[j+2] += d2
						gi[j+3] += d3
					}
					for ; j < lb; j++ {
						gi[j] += dot64(ai, bt[j*crossBlock:j*crossBlock+n])
					}
				}
			}
			parts[ch] = g
		}
	})
	out := newDense(la, lb)
	for _, g := range parts {
		for i, x := range g {
			out.v[i] += x
		}
	}
	if sym {
		for i := 0; i < la; i++ {
			for j := 0; j < i; j++ {
				out.v[i*lb+j] = out.v[j*lb+i]
			}
		}
	}
	return out
}

// dot64 returns a·b for len(a) <= len(b), in four independent sums.
func dot64(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dot64x4 returns a·b0 … a·b3 where bk is b[k*stride:], for len(a) <=
// stride: four products that share their loads of a.
func dot64x4(a, b []float64, stride int) (s0, s1, s2, s3 float64) {
	n := len(a)
	b0, b1, b2, b3 := b[:n], b[stride:stride+n], b[2*stride:2*stride+n], b[3*stride:3*stride+n]
	for k, x := range a {
		s0 += x * b0[k]
		s1 += x * b1[k]
		s2 += x * b2[k]
		s3 += x * b3[k]
	}
	return
}

// orthonormalize replaces the columns of a by an orthonormal basis of their
// span by Cholesky QR, repeated passes times: one pass is enough to keep a
// subspace iteration from collapsing, two give columns orthonormal to
// working precision. Columns that are numerically dependent on earlier ones
// become zero, so a rank-deficient input (a tiny corpus) is not an error.
func (a *tall) orthonormalize(workers, passes int) {
	for range passes {
		rinv := cholInverse(a.cross(a, workers))
		l := a.cols
		// Rows crossBlock at a time, each row of r⁻¹ applied to all of
		// them in turn: r⁻¹ (592 KB at 272 columns) is read once per
		// block rather than once per row. A row's sums run in the same
		// order either way.
		parallelRows(a.rows, workers, func(lo, hi int) {
			tmp := make([]float64, crossBlock*l)
			for r0 := lo; r0 < hi; r0 += crossBlock {
				n := min(crossBlock, hi-r0)
				clear(tmp[:n*l])
				for i := range l {
					ri := rinv[i*l+i : i*l+l]
					for r := range n {
						xi := a.v[(r0+r)*l+i]
						if xi == 0 {
							continue
						}
						axpy64(tmp[r*l+i:r*l+l], float64(xi), ri)
					}
				}
				for r := range n {
					x := a.row(r0 + r)
					for j, v := range tmp[r*l : r*l+l] {
						x[j] = float32(v)
					}
				}
			}
		})
	}
}

// cholInverse factors the symmetric positive semi-definite g = rᵀr (r upper
// triangular) and returns r⁻¹, row-major. Pivots too small to trust zero
// their row and column of the inverse.
func cholInverse(g *dense) []float64 {
	l := g.cols
	r := make([]float64, l*l)
	maxDiag := 0.0
	for i := 0; i < l; i++ {
		maxDiag = max(maxDiag, g.v[i*l+i])
	}
	tol := 1e-10 * maxDiag
	ok := make([]bool, l)
	for i := 0; i < l; i++ {
		d := g.v[i*l+i]
		for k := 0; k < i; k++ {
			d -= r[k*l+i] * r[k*l+i]
		}
		if d <= tol {
			continue
		}
		ok[i] = true
		d = math.Sqrt(d)
		r[i*l+i] = d
		for j := i + 1; j < l; j++ {
			s := g.v[i*l+j]
			for k := 0; k < i; k++ {
				s -= r[k*l+i] * r[k*l+j]
			}
			r[i*l+j] = s / d
		}
	}
	// Invert the upper-triangular r by back substitution, column by column.
	inv := make([]float64, l*l)
	for j := 0; j < l; j++ {
		if !ok[j] {
			continue
		}
		for i := j; i >= 0; i-- {
			if !ok[i] {
				continue
			}
			s := 0.0
			if i == j {
				s = 1
			}
			for k := i + 1; k <= j; k++ {
				s -= r[i*l+k] * inv[k*l+j]
			}
			inv[i*l+j] = s / r[i*l+i]
		}
	}
	return inv
}

// symEigen returns the eigenvalues (descending) and eigenvectors (as columns
// of a row-major matrix) of the symmetric matrix g. gonum's Dsyev reduces g
// to tridiagonal form and iterates on that: at the default 272×272, 35 ms
// where cyclic Jacobi rotations took 300 ms, on one core at the end of
// every fit (BenchmarkSymEigen). Its result is deterministic, and a
// vector's sign, which either method picks arbitrarily, flips a learned
// dimension of every vector alike and so changes no cosine.
func symEigen(g *dense) ([]float64, *dense) {
	n := g.cols
	a := slices.Clone(g.v) // row-major; its upper triangle is read
	w := make([]float64, n)
	var impl gonum.Implementation
	work := []float64{0}
	impl.Dsyev(lapack.EVCompute, blas.Upper, n, a, n, w, work, -1)
	work = make([]float64, int(work[0]))
	sv := make([]float64, n)
	out := newDense(n, n)
	if !impl.Dsyev(lapack.EVCompute, blas.Upper, n, a, n, w, work, len(work)) {
		// It did not converge: no usable learned block, which the fit
		// treats as eigenvalues of zero.
		return sv, out
	}
	// Dsyev leaves the eigenvalues ascending and eigenvector j in column
	// j of a (row-major, so a[r*n+j]).
	for c := range n {
		o := n - 1 - c
		sv[c] = w[o]
		for r := range n {
			out.v[r*n+c] = a[r*n+o]
		}
	}
	return sv, out
}
