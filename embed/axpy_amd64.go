package embed

import "golang.org/x/sys/cpu"

// useAVX2 is whether this processor runs the AVX2 steps. A variable, so
// that tests can take the portable path too.
var useAVX2 = cpu.X86.HasAVX2

// The AVX2 steps of axpy.go; n is a positive multiple of 8.
//
//go:noescape
func axpyWidenAVX2(acc *float64, v float64, x *float32, n int)

//go:noescape
func axpy64AVX2(acc *float64, v float64, x *float64, n int)

//go:noescape
func axpyQ8AVX2(acc *float64, v float64, q *int8, scale float32, n int)
