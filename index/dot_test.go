package index

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDot checks both dot products, the SIMD one where the processor has
// it, against a float64 sum, at lengths around every block edge and at the
// embedders' usual sizes.
func TestDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lengths := []int{0, 1, 3, 4, 7, 31, 32, 33, 63, 64, 65, 100, 255, 256, 384, 768, 1536, 3072}
	paths := []bool{false}
	if useSIMD {
		paths = append(paths, true)
	}
	for _, simd := range paths {
		for _, n := range lengths {
			a, b := make([]float32, n), make([]float32, n+5) // b may be longer
			want := 0.0
			for i := range n {
				a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
				want += float64(a[i]) * float64(b[i])
			}
			got := dotWith(simd, a, b)
			if tol := 1e-5 * math.Sqrt(float64(n)+1) * 4; math.Abs(got-want) > tol {
				t.Errorf("simd=%v n=%d: dot = %v, want %v (±%v)", simd, n, got, want, tol)
			}
		}
	}
}

// TestDotUnit: the cosine of a unit vector with itself is 1 on both paths.
func TestDotUnit(t *testing.T) {
	v := make([]float32, 384)
	for i := range v {
		v[i] = float32(i%7) - 3
	}
	normalize(v)
	for _, simd := range []bool{false, useSIMD} {
		if got := dotWith(simd, v, v); math.Abs(got-1) > 1e-6 {
			t.Errorf("simd=%v: dot(v, v) = %v, want 1", simd, got)
		}
	}
}

func dotWith(simd bool, a, b []float32) float64 {
	if !simd {
		return float64(dotGo(a, b[:len(a)]))
	}
	return dot(a, b)
}

func BenchmarkDot(b *testing.B) {
	x, y := make([]float32, 384), make([]float32, 384)
	for i := range x {
		x[i], y[i] = float32(i), float32(384-i)
	}
	b.Run("simd", func(b *testing.B) {
		if !useSIMD {
			b.Skip("no AVX2 and FMA here")
		}
		for b.Loop() {
			dot(x, y)
		}
	})
	b.Run("go", func(b *testing.B) {
		for b.Loop() {
			dotGo(x, y)
		}
	})
}
