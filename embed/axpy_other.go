//go:build !amd64

package embed

// useAVX2 is false here (a variable, as on amd64, for the tests).
var useAVX2 = false

func axpyWidenAVX2(acc *float64, v float64, x *float32, n int) {
	panic("embed: no AVX2 on this architecture")
}

func axpy64AVX2(acc *float64, v float64, x *float64, n int) {
	panic("embed: no AVX2 on this architecture")
}

func axpyQ8AVX2(acc *float64, v float64, q *int8, scale float32, n int) {
	panic("embed: no AVX2 on this architecture")
}
