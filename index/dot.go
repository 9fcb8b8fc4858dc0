package index

// dot is the cosine of two unit vectors: their dot product. The vector
// scan spends nearly all its time here, so on amd64 processors with AVX2
// and FMA the bulk of it runs eight lanes at a time (dot_amd64.s); the
// rest, and other machines, take the portable loop.
func dot(a, b []float32) float64 {
	b = b[:len(a)]
	n := 0
	var s float32
	if useSIMD && len(a) >= simdBlock {
		n = len(a) &^ (simdBlock - 1)
		s = dotSIMD(&a[0], &b[0], n)
	}
	return float64(s + dotGo(a[n:], b[n:]))
}

// simdBlock is how many floats dotSIMD takes per step: four registers of
// eight, summed apart so that the additions do not wait on each other.
const simdBlock = 32

// dotGo is the portable dot product, four sums apart for the same reason.
func dotGo(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	b = b[:len(a)]
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
	return s0 + s1 + s2 + s3
}
