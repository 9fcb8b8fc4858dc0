package embed

// The fit's products and a text's learned sum are made of one step
// repeated: add a multiple of a row to an accumulator of float64s. On
// amd64 with AVX2 the steps below take four to eight elements at a time
// (axpy_amd64.s). They multiply and then add, rounding after each as the
// Go code does (no fused multiply-add), so the results are the same bit
// for bit either way (TestAxpyMatchesGo).

// axpyWiden adds v·x to acc: acc[i] += v·float64(x[i]), len(x) >= len(acc).
func axpyWiden(acc []float64, v float64, x []float32) {
	x = x[:len(acc)]
	n := 0
	if useAVX2 && len(acc) >= 8 {
		n = len(acc) &^ 7
		axpyWidenAVX2(&acc[0], v, &x[0], n)
	}
	for i := n; i < len(acc); i++ {
		acc[i] += v * float64(x[i])
	}
}

// axpy64 adds v·x to acc: acc[i] += v·x[i], len(x) >= len(acc).
func axpy64(acc []float64, v float64, x []float64) {
	x = x[:len(acc)]
	n := 0
	if useAVX2 && len(acc) >= 8 {
		n = len(acc) &^ 7
		axpy64AVX2(&acc[0], v, &x[0], n)
	}
	for i := n; i < len(acc); i++ {
		acc[i] += v * x[i]
	}
}

// axpyQ8 adds v times the dequantised codes q to acc: acc[i] +=
// v·float64(float32(q[i])·scale), len(q) >= len(acc).
func axpyQ8(acc []float64, v float64, q []int8, scale float32) {
	q = q[:len(acc)]
	n := 0
	if useAVX2 && len(acc) >= 8 {
		n = len(acc) &^ 7
		axpyQ8AVX2(&acc[0], v, &q[0], scale, n)
	}
	for i := n; i < len(acc); i++ {
		acc[i] += v * float64(float32(q[i])*scale)
	}
}
