package index

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestVecPlacer: a base file whose vectors were put in any order, straight
// to their places, is byte for byte the file writeVecFile writes from the
// same vectors in memory: when every row has a vector, when some have
// none (or are pending), when the blocks held are written early, and when
// the embedder's name grew after the placer was made. Until it is
// finished the file has no name.
func TestVecPlacer(t *testing.T) {
	if _, err := openUnnamed(t.TempDir()); errors.Is(err, errNoPlacer) {
		if runtime.GOOS == "linux" {
			t.Fatal("no unnamed file on Linux")
		}
		t.Skip("this system makes no unnamed files: rebuilds spill (TestRebuildStoppedWhileEmbedding)")
	}
	const dim = 7
	cases := []struct {
		name          string
		docs          int
		holes         bool
		limit         int
		made, written string // the embedder's name when the placer is made, and after
	}{
		{name: "whole", docs: 1000, limit: placeHeld, made: "emb", written: "emb"},
		{name: "one row", docs: 1, limit: placeHeld, made: "emb", written: "emb"},
		{name: "blocks written early", docs: 1000, limit: 1, made: "emb", written: "emb"},
		{name: "holes", docs: 1000, holes: true, limit: placeHeld, made: "emb", written: "emb"},
		{name: "holes, written early", docs: 1000, holes: true, limit: 1, made: "emb", written: "emb"},
		{name: "renamed", docs: 1000, limit: placeHeld, made: "emb", written: "embedder with a longer name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.docs)))
			mk := func() []*vecDoc {
				var docs []*vecDoc
				for i := range tc.docs {
					docs = append(docs, &vecDoc{path: fmt.Sprintf("entries/global/notes/%05d.md", i), scope: "global",
						created: time.Unix(int64(i), 0), terms: appendTerms(nil, []termFreq{{fmt.Sprint("t", i%7), 1}}), flen: 1})
				}
				return docs
			}
			want, got := mk(), mk()
			vecs := make([][]float32, tc.docs)
			for i := range vecs {
				if tc.holes && i%9 == 4 {
					want[i].pending, got[i].pending = i%2 == 0, i%2 == 0
					continue
				}
				vecs[i] = make([]float32, dim)
				for j := range vecs[i] {
					vecs[i][j] = rng.Float32()
				}
				want[i].vec = vecs[i]
			}
			dir := t.TempDir()
			ref := filepath.Join(dir, "ref")
			if err := writeVecFile(ref, tc.written, dim, want, layBase(want)); err != nil {
				t.Fatal(err)
			}
			// The store's order: row byPath[k]... is document k's; the
			// documents are put in an order of their own too.
			byPath := rng.Perm(tc.docs)
			genDir := filepath.Join(dir, "gen")
			if err := os.Mkdir(genDir, 0o700); err != nil {
				t.Fatal(err)
			}
			p, err := newVecPlacer(genDir, dim, tc.made, byPath, layBase(got))
			if err != nil {
				t.Fatal(err)
			}
			p.limit = tc.limit
			for _, row := range rng.Perm(tc.docs) {
				if err := p.put(byPath[row], vecs[row]); err != nil {
					t.Fatal(err)
				}
			}
			if ents, _ := os.ReadDir(genDir); len(ents) != 0 {
				t.Errorf("files before the base file is finished: %v", ents)
			}
			base := filepath.Join(genDir, "vectors-1")
			if err := p.finish(base, tc.written, got); err != nil {
				t.Fatal(err)
			}
			if wantRewrite := tc.holes || tc.made != tc.written; p.rewrote != wantRewrite {
				t.Errorf("written again: %v, want %v", p.rewrote, wantRewrite)
			}
			a, _ := os.ReadFile(ref)
			b, err := os.ReadFile(base)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				t.Fatalf("placed base file differs from the one written in order (%d and %d bytes)", len(b), len(a))
			}
			if fi, err := os.Stat(base); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("base file's mode %v, %v; want 0600", fi.Mode(), err)
			}
			if ents, _ := os.ReadDir(genDir); len(ents) != 1 {
				t.Errorf("files after: %v, want the base file alone", ents)
			}
		})
	}
}

// A placer needs the vectors' dimension from the start.
func TestVecPlacerWithoutDimension(t *testing.T) {
	if _, err := newVecPlacer(t.TempDir(), 0, "emb", []int{0}, layBase(nil)); !errors.Is(err, errNoPlacer) {
		t.Errorf("newVecPlacer(dim 0) = %v, want errNoPlacer", err)
	}
}

// storeSort puts documents in store order, as sorting them by storeOrder
// does, and names each row of the base file (path order) by its document.
func TestStoreSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 100, 5000} {
		docs := make([]vecInput, n)
		for i := range docs {
			docs[i] = vecInput{vecDoc: vecDoc{
				path:    fmt.Sprintf("entries/%c/%07d-%d.md", 'a'+rng.IntN(3), rng.IntN(1<<20), i),
				scope:   string(rune('a' + rng.IntN(3))),
				created: time.Unix(int64(rng.IntN(50)), 0),
			}, text: fmt.Sprint("text ", i)}
		}
		want := slices.Clone(docs)
		slices.SortFunc(want, func(a, b vecInput) int { return storeOrder(&a.vecDoc, &b.vecDoc) })
		byPath := storeSort(docs)
		for i := range docs {
			if docs[i].path != want[i].path || docs[i].text != want[i].text {
				t.Fatalf("%d documents: %d is %s, want %s", n, i, docs[i].path, want[i].path)
			}
		}
		if len(byPath) != n {
			t.Fatalf("%d documents: %d rows", n, len(byPath))
		}
		for i := 1; i < n; i++ {
			if docs[byPath[i-1]].path >= docs[byPath[i]].path {
				t.Fatalf("%d documents: row %d is %s, after %s", n, i, docs[byPath[i]].path, docs[byPath[i-1]].path)
			}
		}
	}
}

// A rebuild that spills its vectors (where no unnamed file can be made)
// writes the same base file as one that places them.
func TestRebuildSpillsAsItPlaces(t *testing.T) {
	defer func(p bool) { placeVectors = p }(placeVectors)
	f := newFake(t)
	for i := range 2 * MinFitDocs {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("D%04d", i), created: t0.Add(-time.Duration(i%37) * time.Minute),
			text: fmt.Sprintf("note %d about the deploy of service %d and its cache", i, i%7)})
	}
	var files [2][]byte
	for k, place := range []bool{true, false} {
		placeVectors = place
		if _, err := Rebuild(f, opts(nil)); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(f.root, ".index")
		cur, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
		if err != nil {
			t.Fatal(err)
		}
		base, _ := vecFiles(filepath.Join(dir, string(bytes.TrimSpace(cur))), 1)
		if files[k], err = os.ReadFile(base); err != nil {
			t.Fatal(err)
		}
	}
	if len(files[0]) == 0 || !bytes.Equal(files[0], files[1]) {
		t.Errorf("spilled base file (%d bytes) differs from the placed one (%d bytes)", len(files[1]), len(files[0]))
	}
}
