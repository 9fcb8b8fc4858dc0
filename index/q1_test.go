package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCoarseScores: the processor's path and the portable one give every
// vector the query's sum over its set bits, u_j as quantizePlanes puts
// the query's values.
func TestCoarseScores(t *testing.T) {
	defer func(s bool) { q1SIMD = s }(q1SIMD)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, dim := range []int{64, 100, 384} {
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		q[3] = 0
		words := (dim + 63) / 64
		qq := quantizePlanes(q, words)
		var m float64
		for _, x := range q {
			m = max(m, math.Abs(float64(x)))
		}
		const n = 257
		set := newQ1Set(n, dim)
		for i := range set.signs {
			set.signs[i] = rng.Uint64()
			if w := i % words; w == words-1 && dim%64 != 0 {
				set.signs[i] &= 1<<(dim%64) - 1
			}
		}
		for i := range 4 { // all clear, all set
			for w := range words {
				set.signs[i*words+w] = 0
				if i == 1 {
					set.signs[i*words+w] = ^uint64(0)
					if w == words-1 && dim%64 != 0 {
						set.signs[i*words+w] = 1<<(dim%64) - 1
					}
				}
			}
		}
		want := make([]int32, n)
		for i := range n {
			for j := range dim {
				if set.signs[i*words+j/64]>>(j%64)&1 == 1 {
					want[i] += int32(math.Round(float64(q[j]) * 7 / m))
				}
			}
		}
		for _, simd := range []bool{false, true} {
			q1SIMD = simd
			got := make([]int32, n)
			qq.scores(set, 0, n, got)
			if !slices.Equal(got, want) {
				t.Fatalf("dim %d simd %v: got %v\nwant %v", dim, simd, got[:8], want[:8])
			}
			part := make([]int32, 10)
			qq.scores(set, 100, 110, part)
			if !slices.Equal(part, want[100:110]) {
				t.Fatalf("dim %d simd %v, a part: got %v, want %v", dim, simd, part, want[100:110])
			}
		}
	}
}

// coarseStore is a store of n vectors of dim dimensions around a few
// centres, two thirds in the base and the rest from the log, every 97th
// row dead, its codes (and sign codes) built as a server builds them.
func coarseStore(t *testing.T, n, dim int, seed uint64) *vecStore {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed+1))
	centres := make([][]float32, 20)
	for c := range centres {
		centres[c] = make([]float32, dim)
		for j := range dim {
			centres[c][j] = float32(rng.NormFloat64())
		}
	}
	vs := newVecStore("test", dim)
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = centres[i%len(centres)][j] + float32(rng.NormFloat64())
		}
		if i%501 == 7 {
			v = nil // no vector
		} else {
			normalize(v)
		}
		vs.put(vecDoc{path: fmt.Sprintf("entries/s%d/notes/%06d.md", i%3, i), scope: fmt.Sprintf("s%d", i%3), kind: "note", vec: v})
	}
	for i := 0; i < n; i += 97 {
		vs.rows[i].dead = true
	}
	// The first two thirds of the rows as a base file's.
	k := 2 * n / 3
	nb := int(vs.rows[k].vec)
	vs.base, vs.nbaseVec, vs.nbase = vs.vecs[:nb*dim], nb, k
	vs.vecs = slices.Clone(vs.vecs[nb*dim:])
	vs.codeNow()
	if vs.q8.set.Load() == nil {
		t.Fatal("no codes")
	}
	return vs
}

// TestNearestCoarseKeepsAll: when the coarse pass keeps every vector (a
// store smaller than coarseFloor), the scan through the sign codes
// returns exactly the float scan's rows, order and cosines, over base and
// log vectors, dead rows, rows without a vector and filters.
func TestNearestCoarseKeepsAll(t *testing.T) {
	defer func(e, s bool, m int) { q8Enabled, q1SIMD, coarseMin = e, s, m }(q8Enabled, q1SIMD, coarseMin)
	q8Enabled, coarseMin = true, 100
	const dim = 96
	vs := coarseStore(t, 3000, dim, 5)
	if vs.q8.signs == nil {
		t.Fatal("no sign codes for a base over coarseMin")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for qi := range 8 {
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		if qi%2 == 0 {
			copy(q, vs.vector(qi*300+1))
		}
		normalize(q)
		vq := &vecQuery{side: &vecSide{vs: vs}, vec: q}
		for _, query := range []Query{{}, {Scopes: []string{"s1"}}} {
			for _, k := range []int{1, 10, 60} {
				q8Enabled = false
				want, err := vq.nearest(query, k, 0)
				if err != nil {
					t.Fatal(err)
				}
				q8Enabled = true
				for _, simd := range []bool{false, true} {
					q1SIMD = simd
					base, log := vs.codesFor()
					if vs.signsFor(base, log) == nil {
						t.Fatal("the scan does not take the sign codes")
					}
					got, err := vq.nearest(query, k, 0)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("query %d scopes %v k %d simd %v:\n got %v\nwant %v", qi, query.Scopes, k, simd, got, want)
					}
				}
			}
		}
	}
}

// TestNearestCoarseRecall: on a store where the coarse pass keeps a tenth
// of the vectors, its 10 nearest rows are the exact scan's but for a few
// in a thousand, and every row it returns has its exact cosine, in order.
func TestNearestCoarseRecall(t *testing.T) {
	defer func(e bool, m int) { q8Enabled, coarseMin = e, m }(q8Enabled, coarseMin)
	q8Enabled, coarseMin = true, 100
	const dim, n = 96, 40000
	vs := coarseStore(t, n, dim, 9)
	rng := rand.New(rand.NewPCG(3, 4))
	found, total := 0, 0
	for range 30 {
		q := make([]float32, dim)
		for j := range q {
			q[j] = float32(rng.NormFloat64())
		}
		normalize(q)
		vq := &vecQuery{side: &vecSide{vs: vs}, vec: q}
		q8Enabled = false
		want, _ := vq.nearest(Query{}, 10, -2)
		q8Enabled = true
		got, _ := vq.nearest(Query{}, 10, -2)
		for i, h := range got {
			if c := dot(q, vs.vector(h.row)); c != h.cos || i > 0 && got[i-1].cos < h.cos {
				t.Fatalf("row %d: cosine %v, exact %v, or out of order", h.row, h.cos, c)
			}
		}
		for _, w := range want {
			total++
			if slices.ContainsFunc(got, func(h vecHit) bool { return h.row == w.row }) {
				found++
			}
		}
	}
	if r := float64(found) / float64(total); r < 0.99 {
		t.Fatalf("recall@10 %.3f", r)
	}
}

// TestCoarseRecall measures what the coarse pass loses on a real index:
// the share of the exact scan's 10 and 60 nearest rows that a server's
// scan returns, over random queries of 2 to 4 words of MIRA_BENCH_QUERIES
// (see BenchmarkStoreSearch), on the store MIRA_BENCH_STORE.
func TestCoarseRecall(t *testing.T) {
	root := os.Getenv("MIRA_BENCH_STORE")
	if root == "" {
		t.Skip("MIRA_BENCH_STORE is not set")
	}
	defer func(e bool) { q8Enabled = e }(q8Enabled)
	ix, err := Open(frozenSource{root: root, head: indexedCommit(t, root)}, Options{SkipStat: true, Keep: new(Keep)})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	side, done, err := ix.searchSide()
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	vs := side.vs
	base, log := vs.codesFor()
	if vs.signsFor(base, log) == nil {
		t.Skipf("%d vectors: no coarse pass", vs.nbaseVec)
	}
	var vocab []string
	for _, l := range readLines(t, os.Getenv("MIRA_BENCH_QUERIES")) {
		vocab = append(vocab, strings.Fields(l)...)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var texts []string
	for range 200 {
		var w []string
		for range 2 + rng.IntN(3) {
			w = append(w, vocab[rng.IntN(len(vocab))])
		}
		texts = append(texts, strings.Join(w, " "))
	}
	vecs, err := side.emb.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var found [2]int
	var asked [2]int
	for _, q := range vecs {
		if !normalize(q) {
			continue
		}
		vq := &vecQuery{side: side, vec: q}
		got, _ := vq.nearest(Query{}, 60, 0)
		want := vq.nearestQ8(nil, 60, 0, base, log, 2)
		for k, top := range []int{10, 60} {
			for _, w := range want[:min(top, len(want))] {
				asked[k]++
				if slices.ContainsFunc(got[:min(top, len(got))], func(h vecHit) bool { return h.row == w.row }) {
					found[k]++
				}
			}
		}
	}
	t.Logf("%d vectors, %d candidates: recall@10 %.4f (%d/%d), recall@60 %.4f (%d/%d)", len(vs.rows), coarseWant(vs.nbaseVec, 60),
		float64(found[0])/float64(asked[0]), found[0], asked[0], float64(found[1])/float64(asked[1]), found[1], asked[1])
}
