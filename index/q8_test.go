package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"
)

// TestDotQ8: both integer dot products, the SIMD one where the processor
// has it, equal an int64 sum, at the codes' extremes too (the query's
// range is what quantizeQuery allows at that stride, so nothing
// overflows).
func TestDotQ8(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, stride := range []int{32, 64, 384, 1536, 3072, 8192} {
		lim := int(min(32767, math.Floor(float64(math.MaxInt32)/(127*float64(stride)))))
		for trial := range 4 {
			u, c := make([]int16, stride), make([]int8, stride)
			var want int64
			for i := range stride {
				switch trial {
				case 0: // random
					u[i], c[i] = int16(rng.IntN(2*lim+1)-lim), int8(rng.IntN(255)-127)
				case 1: // every product at its largest
					u[i], c[i] = int16(lim), 127
				case 2: // at its most negative
					u[i], c[i] = int16(-lim), 127
				case 3: // alternating signs
					u[i], c[i] = int16(lim), int8(127*(1-2*(i%2)))
				}
				want += int64(u[i]) * int64(c[i])
			}
			if got := dotQ8Go(u, c); int64(got) != want {
				t.Errorf("stride %d trial %d: dotQ8Go = %d, want %d", stride, trial, got, want)
			}
			if useSIMD {
				if got := dotQ8SIMD(&u[0], &c[0], stride); int64(got) != want {
					t.Errorf("stride %d trial %d: dotQ8SIMD = %d, want %d", stride, trial, got, want)
				}
			}
		}
	}
}

// TestQ8Bound: the codes' estimate of a cosine is never further from dot's
// cosine than the bound says, for vectors of every shape the embedders
// give (spread out, spiky, sparse, and a zero vector).
func TestQ8Bound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dim := range []int{8, 100, 384, 1536} {
		var vecs []float32
		for i := range 200 {
			v := make([]float32, dim)
			for j := range v {
				switch i % 4 {
				case 0:
					v[j] = float32(rng.NormFloat64())
				case 1:
					v[j] = float32(rng.NormFloat64() * math.Pow(rng.Float64(), 8))
				case 2:
					if rng.IntN(20) == 0 {
						v[j] = float32(rng.NormFloat64())
					}
				}
			}
			if i%4 != 3 && !normalize(v) {
				v[0] = 1
			}
			vecs = append(vecs, v...)
		}
		set := quantize(vecs, dim)
		for range 20 {
			q := make([]float32, dim)
			for j := range q {
				q[j] = float32(rng.NormFloat64())
			}
			normalize(q)
			qq := quantizeQuery(q, set.stride)
			for v := range 200 {
				exact := dot(q, vecs[v*dim:(v+1)*dim])
				a := qq.t * float64(set.scale[v]) * float64(dotQ8(qq.u, set.codes[v*set.stride:(v+1)*set.stride]))
				b := float64(set.bound[v]) + qq.f*float64(set.norm[v]) + q8Slack(dim)
				if math.Abs(exact-a) > b {
					t.Fatalf("dim %d vector %d: cosine %v, estimate %v, bound %v", dim, v, exact, a, b)
				}
				if v%4 != 3 && b > 0.05 {
					t.Errorf("dim %d vector %d: bound %v is too loose to choose rows by", dim, v, b)
				}
			}
		}
	}
}

// TestNearestQ8MatchesExact: the scan through the codes returns exactly
// what the float scan returns (rows, order, cosines), over stores with
// many near ties, base and log vectors, dead rows, filters, thresholds
// and splits, on the portable and the processor's integer paths.
func TestNearestQ8MatchesExact(t *testing.T) {
	defer func(e, s bool) { q8Enabled, q8SIMD = e, s }(q8Enabled, q8SIMD)
	rng := rand.New(rand.NewPCG(9, 10))
	for _, dim := range []int{8, 96, 384} {
		for _, shape := range []string{"random", "clustered", "ties"} {
			const n = 2*scanChunk + 300
			vs := newVecStore("test", dim)
			centres := make([][]float32, 5)
			for c := range centres {
				centres[c] = make([]float32, dim)
				for j := range dim {
					centres[c][j] = float32(rng.NormFloat64())
				}
			}
			for i := range n {
				v := make([]float32, dim)
				for j := range v {
					switch shape {
					case "random":
						v[j] = float32(rng.NormFloat64())
					case "clustered": // near copies: cosines a hair apart
						v[j] = centres[i%5][j] + float32(rng.NormFloat64()*0.02)
					case "ties":
						v[j] = float32(rng.IntN(3) - 1)
					}
				}
				if !normalize(v) {
					v = nil
				}
				vs.put(vecDoc{path: fmt.Sprintf("entries/s%d/notes/%06d.md", i%3, i), scope: fmt.Sprintf("s%d", i%3), kind: "note", vec: v})
			}
			for i := 0; i < n; i += 97 {
				vs.rows[i].dead = true
			}
			// The first two thirds of the vectors as a base file's.
			k := 2 * n / 3
			vs.base, vs.nbaseVec = vs.vecs[:k*dim], k
			vs.vecs = slices.Clone(vs.vecs[k*dim:])
			vs.q8.set.Store(quantize(vs.base, dim))

			queries := [][]float32{vs.vector(1), vs.vector(k + 5)}
			for range 3 {
				q := make([]float32, dim)
				for j := range q {
					q[j] = float32(rng.NormFloat64())
				}
				normalize(q)
				queries = append(queries, q)
			}
			for qi, q := range queries {
				if q == nil {
					continue
				}
				vq := &vecQuery{side: &vecSide{vs: vs}, vec: slices.Clone(q)}
				for _, query := range []Query{{}, {Scopes: []string{"s1"}}} {
					for _, k := range []int{1, 10, 60} {
						for _, minCos := range []float64{-2, 0, 0.3} {
							q8Enabled = false
							want, err := vq.nearest(query, k, minCos)
							if err != nil {
								t.Fatal(err)
							}
							f := newRowFilter(vs, query)
							for _, simd := range []bool{false, true} {
								q8SIMD = simd
								base, log := vs.codesForAlways()
								for _, parts := range []int{1, 2, 3} {
									got := vq.nearestQ8(f, k, minCos, base, log, parts)
									if !slices.Equal(got, want) {
										t.Fatalf("dim %d %s query %d scopes %v k %d minCos %v simd %v parts %d:\n got %v\nwant %v",
											dim, shape, qi, query.Scopes, k, minCos, simd, parts, got, want)
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// codesForAlways returns the store's codes, building the log's.
func (vs *vecStore) codesForAlways() (base, log *q8Set) {
	vs.q8log.once.Do(func() { vs.q8log.set = quantize(vs.vecs, vs.dim) })
	return vs.q8.set.Load(), vs.q8log.set
}

// TestCodesBuiltOnSecondScan: a store's first scan reads the floats and
// builds nothing (a command that searches once); the second starts
// building the codes, and the scans after it use them. A store extended
// from it shares the base's codes and codes its own log vectors.
func TestCodesBuiltOnSecondScan(t *testing.T) {
	defer func(e bool) { q8Enabled = e }(q8Enabled)
	q8Enabled = true
	const dim = 16
	vs := newVecStore("test", dim)
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 100 {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		normalize(v)
		vs.put(vecDoc{path: fmt.Sprintf("entries/global/notes/%04d.md", i), vec: v})
	}
	vs.base, vs.nbaseVec, vs.vecs = vs.vecs, 100, nil

	if b, l := vs.codesFor(); b != nil || l != nil {
		t.Fatal("the first scan has codes")
	}
	if b, l := vs.codesFor(); b != nil || l != nil {
		t.Fatal("the second scan waited for the codes")
	}
	deadline := time.Now().Add(10 * time.Second)
	for vs.q8.set.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the codes were never built")
		}
		time.Sleep(time.Millisecond)
	}
	b, l := vs.codesFor()
	if b == nil || len(b.scale) != 100 || l == nil || len(l.scale) != 0 {
		t.Fatalf("after the build: base %v, log %v", b != nil, l != nil)
	}

	// An extended store: the same base codes, its own log codes.
	nv := *vs
	nv.q8log = &q8Log{}
	v := make([]float32, dim)
	v[0] = 1
	nv.put(vecDoc{path: "entries/global/notes/9999.md", vec: v})
	b2, l2 := nv.codesFor()
	if b2 != b || l2 == nil || len(l2.scale) != 1 {
		t.Fatalf("extended store: base shared %v, log codes %v", b2 == b, l2 != nil)
	}
	// A vector put after the codes were made: the floats are scanned.
	nv.put(vecDoc{path: "entries/global/notes/9998.md", vec: v})
	if _, l3 := nv.codesFor(); l3 != nil {
		t.Fatal("codes used with a vector they do not cover")
	}
	vq := &vecQuery{side: &vecSide{vs: &nv}, vec: v}
	got, err := vq.nearest(Query{}, 2, -2)
	if err != nil || len(got) != 2 || got[0].cos < 0.999999 || got[1].cos < 0.999999 {
		t.Fatalf("nearest with the floats: %v, %v", got, err)
	}
}

// unitVectors returns n random vectors of dim dimensions and unit length,
// one after the other.
func unitVectors(n, dim int) []float32 {
	rng := rand.New(rand.NewPCG(1, 1))
	vecs := make([]float32, n*dim)
	for i := range vecs {
		vecs[i] = float32(rng.NormFloat64())
	}
	for i := range n {
		normalize(vecs[i*dim : (i+1)*dim])
	}
	return vecs
}

func BenchmarkQuantize(b *testing.B) {
	const n, dim = 10_000, 384
	vecs := unitVectors(n, dim)
	b.SetBytes(int64(len(vecs) * 4))
	for b.Loop() {
		quantize(vecs, dim)
	}
}

// waitCodes waits for a build of vs's base codes under way to end.
func waitCodes(t *testing.T, vs *vecStore) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for vs.q8.building.Load() && vs.q8.set.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the codes were never built")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLoadCoded: a loaded store's base codes, built at once (as a
// long-lived process does, TestKeep), leave its vectors as one read
// plainly and give the same nearest rows; a damaged vector is still
// caught by the checksum.
func TestLoadCoded(t *testing.T) {
	defer func(e bool) { q8Enabled = e }(q8Enabled)
	q8Enabled = true
	const n, dim = 3000, 96
	rng := rand.New(rand.NewPCG(13, 14))
	dir := t.TempDir()
	var docs []vecDoc
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		normalize(v)
		docs = append(docs, vecDoc{path: fmt.Sprintf("entries/global/notes/%05d.md", i), scope: "global", vec: v})
	}
	base, _ := vecFiles(dir, 1)
	if err := writeVecBase(base, "emb", dim, docs); err != nil {
		t.Fatal(err)
	}
	m := meta{Embedder: "emb", Dim: dim, VecSeq: 1}
	plain, err := loadVecStore(dir, m, false)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.close()
	// Small floats stay in memory, coded or not; large ones kept by a
	// server are read from the file once coded.
	small, err := loadKeptVecStore(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	defer small.close()
	small.codeNow()
	if small.q8.set.Load() == nil || small.paged() {
		t.Fatalf("small kept floats: coded %v, read from the file %v; want coded, in memory", small.q8.set.Load() != nil, small.paged())
	}
	defer func(p int64) { pageMin = p }(pageMin)
	pageMin = 0
	coded, err := loadKeptVecStore(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	defer coded.close()
	coded.buildCodes()
	if !coded.q8.building.Load() {
		t.Fatal("the coded load did not start building the codes")
	}
	waitCodes(t, coded)
	if plain.q8.set.Load() != nil || coded.q8.set.Load() == nil || len(coded.q8.set.Load().scale) != n {
		t.Fatal("codes: want none for the plain load, all the base's for the coded one")
	}
	if mapped := coded.mapped != nil; coded.paged() != mapped {
		t.Fatalf("coded store reads rows from its file: %v, want %v (mapped)", coded.paged(), mapped)
	}
	for i := range n {
		if !slices.Equal(plain.vector(i), coded.exact(i, nil)) {
			t.Fatalf("vector %d differs", i)
		}
	}
	for range 5 {
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		normalize(q)
		q8Enabled = false
		want, _ := (&vecQuery{side: &vecSide{vs: plain}, vec: q}).nearest(Query{}, 20, -2)
		q8Enabled = true
		if b, _ := coded.codesFor(); b == nil {
			t.Fatal("the coded store's scan has no codes")
		}
		got, _ := (&vecQuery{side: &vecSide{vs: coded}, vec: q}).nearest(Query{}, 20, -2)
		if !slices.Equal(got, want) {
			t.Fatalf("nearest through the codes:\n got %v\nwant %v", got, want)
		}
	}
	if coded.mapped != nil {
		// The codes dropped the mapping's pages, and the scans since
		// read their rows from the file: none came back.
		if kb := residentKB(t, coded.mapped.data); kb > 0 {
			t.Errorf("%d KB of the coded store's mapping resident after its scans, want none", kb)
		}
	}
	for i := range n {
		if !slices.Equal(plain.vector(i), coded.vector(i)) {
			t.Fatalf("vector %d differs in the mapping", i)
		}
	}

	f, err := os.OpenFile(base, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := readVecHeader(f)
	if err != nil {
		t.Fatal(err)
	}
	at := h.vecOff + int64(n/2*dim*4) + 1
	b := []byte{0}
	f.ReadAt(b, at)
	b[0] ^= 0x40
	f.WriteAt(b, at)
	f.Close()
	if _, err := loadVecStore(dir, m, false); err == nil {
		t.Error("a damaged vector was loaded without complaint")
	}
}

// TestBoundKey: keys sort by bound, highest first, and give back a bound
// no lower than the one packed and the row.
func TestBoundKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	type pair struct {
		u   float64
		row int
	}
	var ps []pair
	for i := range 2000 {
		u := rng.NormFloat64()
		switch i % 7 {
		case 0:
			u = 0
		case 1:
			u = -u * 1e-9
		case 2:
			u = math.Inf(1)
		}
		ps = append(ps, pair{u, rng.IntN(1 << 30)})
	}
	keys := make([]uint64, len(ps))
	for i, p := range ps {
		keys[i] = boundKey(p.u, p.row)
		u, row := keyBound(keys[i])
		if row != p.row || u < p.u || u-p.u > 1e-6*max(1, math.Abs(p.u)) && !math.IsInf(u, 1) {
			t.Fatalf("bound %v, row %d: back as %v, %d", p.u, p.row, u, row)
		}
	}
	slices.Sort(keys)
	for i := 1; i < len(keys); i++ {
		a, _ := keyBound(keys[i-1])
		b, _ := keyBound(keys[i])
		if a < b {
			t.Fatalf("key %d has bound %v before %v", i, a, b)
		}
	}
}

func BenchmarkSigns(b *testing.B) {
	const n, dim = 10_000, 384
	codes := quantize(unitVectors(n, dim), dim)
	center := codeCenter(codes, dim)
	s := newQ1Set(n, dim)
	b.SetBytes(int64(n * dim))
	for b.Loop() {
		s.fill(0, codes, 0, n, center)
	}
}

// The 8-bit codes are what their definition says (the nearest code of
// each value over the scale; the bound and norm measured from the codes,
// within a unit in the last place of a float32), and the sign codes,
// set a word at a time without a branch, are the plain comparison's of
// each dimension with the mean, no bit set past the dimensions.
func TestCodesAsPlainLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dim := range []int{1, 5, 7, 64, 65, 96, 100, 384} {
		const n = 300
		vecs := make([]float32, n*dim)
		for i := range vecs {
			vecs[i] = float32(rng.NormFloat64())
		}
		for i := range n {
			if i%50 == 7 {
				clear(vecs[i*dim : (i+1)*dim]) // no codes
				continue
			}
			normalize(vecs[i*dim : (i+1)*dim])
		}
		got := quantize(vecs, dim)
		for i := range n {
			v := vecs[i*dim : (i+1)*dim]
			var mb uint32
			for _, x := range v {
				mb = max(mb, math.Float32bits(x)&^(1<<31))
			}
			m := math.Float32frombits(mb)
			if m == 0 {
				continue
			}
			sc, inv := m/127, 127/m
			var e2, n2 float64
			for j, x := range v {
				y := x * inv
				q := max(-127, min(127, int32(y+math.Float32frombits(math.Float32bits(0.5)|math.Float32bits(y)&(1<<31)))))
				if got.codes[i*got.stride+j] != int8(q) {
					t.Fatalf("dim %d, vector %d, code %d: %d, want %d", dim, i, j, got.codes[i*got.stride+j], q)
				}
				back := float64(sc) * float64(q)
				d := float64(x) - back
				e2 += d * d
				n2 += back * back
			}
			if got.scale[i] != sc {
				t.Fatalf("dim %d, vector %d: scale %g, want %g", dim, i, got.scale[i], sc)
			}
			for _, c := range []struct {
				name      string
				got, want float32
			}{{"bound", got.bound[i], roundUp(math.Sqrt(e2))}, {"norm", got.norm[i], roundUp(math.Sqrt(n2))}} {
				if d := int64(math.Float32bits(c.got)) - int64(math.Float32bits(c.want)); d < -1 || d > 1 {
					t.Fatalf("dim %d, vector %d: %s %g, want %g", dim, i, c.name, c.got, c.want)
				}
			}
		}
		center := codeCenter(got, dim)
		signs := newQ1Set(n, dim)
		signs.fill(0, got, 0, n, center)
		for i := range n {
			w := signs.signs[i*signs.words : (i+1)*signs.words]
			for j := range dim {
				want := got.scale[i] != 0 && got.scale[i]*float32(got.codes[i*got.stride+j]) > center[j]
				if (w[j/64]>>(j%64))&1 == 1 != want {
					t.Fatalf("dim %d, vector %d: sign %d is %v, want %v", dim, i, j, !want, want)
				}
			}
			if dim%64 != 0 && w[len(w)-1]>>(dim%64) != 0 {
				t.Fatalf("dim %d, vector %d: bits set past the dimensions", dim, i)
			}
		}
	}
}

// TestKeepCodesAfterFirstScan: a server's large floats (pageMin) are not
// coded as they load, where the coding would take processors from the
// search waiting for them, but once that first search has scanned them.
// Its results are a full load's, and the searches after it use the codes.
func TestKeepCodesAfterFirstScan(t *testing.T) {
	defer func(e bool, p int64) { q8Enabled, pageMin = e, p }(q8Enabled, pageMin)
	q8Enabled, pageMin = true, 0
	f, o, keep := keptNotes(t, 40, "D", "sql databases and herons")
	defer keep.Release()
	q := Query{Text: "sql herons", Now: t0}
	want := searchPaths(t, f, opts(nil), q)
	ix := mustOpen(t, f, o)
	defer ix.Close()
	side, err := ix.loadVectors()
	if err != nil {
		t.Fatal(err)
	}
	vs := side.vs
	if vs.mapped == nil {
		t.Skip("the vectors are not mapped here")
	}
	if vs.q8.building.Load() || vs.q8.set.Load() != nil {
		t.Fatal("the codes were started as the vectors loaded, before the first search")
	}
	search := func() []string {
		t.Helper()
		hits, err := ix.Search(q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, h.Path)
		}
		return out
	}
	if got := search(); !slices.Equal(got, want) {
		t.Errorf("first search: %v, a full load: %v", got, want)
	}
	if !vs.q8.building.Load() {
		t.Fatal("the first search did not start the codes")
	}
	waitCodes(t, vs)
	if b, _ := vs.codesFor(); b == nil {
		t.Fatal("no codes to scan after they were built")
	}
	if got := search(); !slices.Equal(got, want) {
		t.Errorf("search through the codes: %v, a full load: %v", got, want)
	}
}
