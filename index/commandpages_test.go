package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// A command that searches large floats once does not hold them all: its
// checksum and its scan let go of their pages behind them (at a million
// entries a recall in its own process held all 1.5 GB), and it finds the
// same rows as a load that reads every page in.
func TestCommandLetsGoOfLargeFloats(t *testing.T) {
	defer func(e bool) { q8Enabled = e }(q8Enabled)
	q8Enabled = false
	const n, dim = 20000, 96
	rng := rand.New(rand.NewPCG(21, 22))
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
	defer func(p, c int64) { pageMin, commandPageMin = p, c }(pageMin, commandPageMin)
	pageMin, commandPageMin = 0, 0
	paged, err := loadVecStore(dir, m, false)
	if err != nil {
		t.Fatal(err)
	}
	defer paged.close()
	if paged.mapped == nil {
		t.Skip("the vectors are not mapped here")
	}
	q := make([]float32, dim)
	for j := range q {
		q[j] = float32(rng.NormFloat64())
	}
	normalize(q)
	want, _ := (&vecQuery{side: &vecSide{vs: plain}, vec: q}).nearest(Query{}, 20, -2)
	got, _ := (&vecQuery{side: &vecSide{vs: paged}, vec: q}).nearest(Query{}, 20, -2)
	if !slices.Equal(got, want) || len(got) != 20 {
		t.Fatalf("nearest of the paged store:\n got %v\nwant %v", got, want)
	}
	// 7.5 MB of floats; what stays is the pages at the ends of the
	// chunks the scan let go of, and the header's.
	if kb := residentKB(t, paged.mapped.data); kb > 256 {
		t.Errorf("%d KB of the command's mapping resident after its scan, want at most 256", kb)
	}
	if kb := residentKB(t, plain.mapped.data); kb < n*dim*4/1024/2 {
		t.Errorf("the plain load holds %d KB, want the floats in (is the check blind?)", kb)
	}
}
