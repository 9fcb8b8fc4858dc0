package index

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"
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
	return cachedCorpus(b, key, func(f *fakeSource) {
		lastTurn := map[string]string{} // scope → id
		generateEach(b, f, n, func(d *fdoc) {
			switch {
			case d.kind == "turn":
				lastTurn[d.scope] = d.id
			case d.kind == "fact" && links && lastTurn[d.scope] != "":
				d.from = []string{lastTurn[d.scope]}
			}
		})
	})
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
