package index

import "golang.org/x/sys/cpu"

// useSIMD is whether this processor runs dotSIMD. A variable, so that
// tests can take the portable path too.
var useSIMD = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// dotSIMD returns the dot product of the n floats at a and b; n is a
// positive multiple of simdBlock.
//
//go:noescape
func dotSIMD(a, b *float32, n int) float32

// dotQ8SIMD returns the integer dot product of the n codes at u and c; n
// is a positive multiple of q8Block.
//
//go:noescape
func dotQ8SIMD(u *int16, c *int8, n int) int32

// coarseScores6 writes the coarse scores of the n vectors of six words of
// signs at signs to out, for the query's four bit planes at planes
// (q1Query); n is positive.
//
//go:noescape
func coarseScores6(signs, planes *uint64, n int, out *int32)
