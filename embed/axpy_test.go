package embed

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAxpyMatchesGo: the AVX2 steps give the portable loops' results bit
// for bit, at every length around their step of eight.
func TestAxpyMatchesGo(t *testing.T) {
	if !useAVX2 {
		t.Log("no AVX2 here: the portable loops are checked against themselves")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	run := func(simd bool, f func()) {
		was := useAVX2
		useAVX2 = useAVX2 && simd
		defer func() { useAVX2 = was }()
		f()
	}
	for n := 0; n <= 41; n++ {
		x32 := make([]float32, n)
		x64 := make([]float64, n)
		q := make([]int8, n)
		acc := make([]float64, n)
		for i := range n {
			x32[i] = float32(rng.NormFloat64())
			x64[i] = rng.NormFloat64() * 1e3
			q[i] = int8(rng.IntN(256) - 128)
			acc[i] = rng.NormFloat64()
		}
		v, scale := rng.NormFloat64(), float32(rng.Float64()/127)
		for name, step := range map[string]func(a []float64){
			"widen": func(a []float64) { axpyWiden(a, v, x32) },
			"64":    func(a []float64) { axpy64(a, v, x64) },
			"q8":    func(a []float64) { axpyQ8(a, v, q, scale) },
		} {
			want, got := append([]float64(nil), acc...), append([]float64(nil), acc...)
			run(false, func() { step(want) })
			run(true, func() { step(got) })
			for i := range n {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s, n=%d: element %d is %v, want %v", name, n, i, got[i], want[i])
				}
			}
		}
	}
}
