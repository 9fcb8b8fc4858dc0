//go:build !amd64

package index

const useSIMD = false

func dotSIMD(a, b *float32, n int) float32 { panic("index: no SIMD dot product on this architecture") }

func dotQ8SIMD(u *int16, c *int8, n int) int32 {
	panic("index: no SIMD dot product on this architecture")
}

func coarseScores6(signs, planes *uint64, n int, out *int32) {
	panic("index: no SIMD coarse scores on this architecture")
}
