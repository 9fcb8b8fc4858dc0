package index

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// factCorpus is generate's store with its facts (a fifth of the entries)
// each naming the turn written before it, when links is set; the same
// entries naming nothing otherwise. Built once per process and shared.
func factCorpus(b *testing.B, n int, links bool) *fakeSource {
	b.Helper()
	key := -n
	if !links {
		key = -n - 1
	}
	corpusMu.Lock()
	defer corpusMu.Unlock()
	if f, ok := corpora[key]; ok {
		return f
	}
	dir, err := os.MkdirTemp("", "mira-index-bench-")
	if err != nil {
		b.Fatal(err)
	}
	tempDirs = append(tempDirs, dir)
	f := &fakeSource{root: dir}
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(vocabulary)-1))
	kinds := []string{"fact", "decision", "note", "preference", "turn"}
	scopes := []string{"global", "shop", "mira", "blog"}
	base := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	lastTurn := map[string]string{} // scope → id
	var words []string
	for i := range n {
		words = words[:0]
		for range 20 + r.IntN(60) {
			words = append(words, vocabulary[z.Uint64()])
		}
		d := fdoc{
			id:      fmt.Sprintf("G%07d", i),
			kind:    kinds[r.IntN(len(kinds))],
			scope:   scopes[r.IntN(len(scopes))],
			tags:    []string{vocabulary[r.IntN(50)]},
			created: base.Add(time.Duration(r.Int64N(int64(30 * 24 * time.Hour)))),
			text:    strings.Join(words, " "),
		}
		switch {
		case d.kind == "turn":
			lastTurn[d.scope] = d.id
		case d.kind == "fact" && links && lastTurn[d.scope] != "":
			d.from = []string{lastTurn[d.scope]}
		}
		f.writeDoc(b, d)
	}
	ix, err := Open(f, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ix.Close()
	corpora[key] = f
	return f
}

// BenchmarkFactKeys is the cost of facts as keys (facts.go): searches,
// rebuild and the index's size of a store whose facts name turns, beside
// the same store whose facts name nothing.
func BenchmarkFactKeys(b *testing.B) {
	for _, n := range sizes() {
		for _, links := range []bool{false, true} {
			f := factCorpus(b, n, links)
			name := fmt.Sprintf("%dk/links=%v", n/1000, links)
			ix, err := Open(f, Options{SkipStat: true})
			if err != nil {
				b.Fatal(err)
			}
			for _, q := range []struct {
				name string
				q    Query
			}{
				{"words", Query{Text: vocabulary[3] + " " + vocabulary[40] + " " + vocabulary[700]}},
				{"question", Query{Text: "what did we decide about " + vocabulary[5] + " and " + vocabulary[90] + "?"}},
				{"turns", Query{Text: vocabulary[3] + " " + vocabulary[40] + " " + vocabulary[700], Kinds: []string{"turn"}, Scopes: []string{"shop"}}},
			} {
				for _, mode := range []string{ModeLexical, ModeHybrid} {
					q.q.Mode = mode
					b.Run(fmt.Sprintf("%s/search/%s/%s", name, q.name, mode), func(b *testing.B) {
						for b.Loop() {
							if _, err := ix.Search(q.q); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
			ix.Close()
			b.Run(name+"/rebuild", func(b *testing.B) {
				for b.Loop() {
					if _, err := Rebuild(f, Options{Embedder: nil}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(dirSize(b, filepath.Join(f.root, indexDirName))), "index-bytes")
			})
		}
	}
}

// dirSize is the bytes of the regular files under dir.
func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}
