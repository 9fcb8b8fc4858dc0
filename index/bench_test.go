package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/miramem/mira/embed"
)

// Benchmarks run on generated stores of 10k entries; set MIRA_BENCH_LARGE=1
// to add 100k. The stores are built once per process and shared.

var (
	corpusMu sync.Mutex
	corpora  = map[int]*fakeSource{}
	tempDirs []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// corpus returns a generated store of n entries with an up-to-date index.
func corpus(b *testing.B, n int) *fakeSource {
	return cachedCorpus(b, n, func(f *fakeSource) { generate(b, f, n) })
}

// cachedCorpus returns the store that build writes, with an up-to-date
// index: built once per process for each key, and shared.
func cachedCorpus(b *testing.B, key int, build func(*fakeSource)) *fakeSource {
	b.Helper()
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
	build(f)
	ix, err := Open(f, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ix.Close()
	corpora[key] = f
	return f
}

func sizes() []int {
	if os.Getenv("MIRA_BENCH_LARGE") != "" {
		return []int{10_000, 100_000}
	}
	return []int{10_000}
}

func BenchmarkSearch(b *testing.B) {
	for _, n := range sizes() {
		f := corpus(b, n)
		ix, err := Open(f, Options{SkipStat: true})
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range []struct {
			name string
			q    Query
		}{
			{"rare", Query{Text: vocabulary[2000] + " " + vocabulary[3500]}},
			{"words", Query{Text: vocabulary[3] + " " + vocabulary[40] + " " + vocabulary[700]}},
			{"question", Query{Text: "what did we decide about " + vocabulary[5] + " and " + vocabulary[90] + "?"}},
			{"filtered", Query{Text: vocabulary[3] + " " + vocabulary[40], Kinds: []string{"fact", "decision"}, Scopes: []string{"shop"}}},
			{"since", Query{Text: vocabulary[3] + " " + vocabulary[40], Since: time.Date(2026, 10, 12, 7, 30, 0, 0, time.UTC)}},
			{"empty", Query{Kinds: []string{"note"}}},
			{"empty-since", Query{Since: time.Date(2026, 10, 12, 7, 30, 0, 0, time.UTC)}},
			// The corpus spans October 2026: seen from its last day, the
			// newest entries are recent.
			{"empty-recent", Query{Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}},
			{"empty-all", Query{Now: time.Date(2027, 11, 1, 0, 0, 0, 0, time.UTC)}},
		} {
			modes := []string{ModeLexical, ModeHybrid}
			if q.q.Text == "" {
				modes = modes[:1] // no text: no vectors
			}
			for _, mode := range modes {
				q.q.Mode = mode
				b.Run(fmt.Sprintf("%dk/%s/%s", n/1000, q.name, mode), func(b *testing.B) {
					for b.Loop() {
						if _, err := ix.Search(q.q); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
		ix.Close()
	}
}

// BenchmarkOneQuery is what a mira-recall process pays for the index: Open
// (with the stat pass skipped, as under a watcher), one search (loading the
// vectors and the model for hybrid), Close.
func BenchmarkOneQuery(b *testing.B) {
	for _, n := range sizes() {
		f := corpus(b, n)
		for _, mode := range []string{ModeLexical, ModeVector, ModeHybrid} {
			for _, filtered := range []bool{false, true} {
				q := Query{Text: vocabulary[3] + " " + vocabulary[40] + " " + vocabulary[700], Mode: mode}
				name := fmt.Sprintf("%dk/%s", n/1000, mode)
				if filtered {
					q.Scopes, name = []string{"shop"}, name+"/scope"
				}
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						ix, err := Open(f, Options{SkipStat: true})
						if err != nil {
							b.Fatal(err)
						}
						if _, err := ix.Search(q); err != nil {
							b.Fatal(err)
						}
						ix.Close()
					}
				})
			}
		}
	}
}

// BenchmarkVectorParts splits a one-query hybrid search into loading the
// vectors, reading the model, and the nearest-neighbour scan, with and
// without filters (a scope of about a quarter of the store, a kind and
// scope of about a twentieth).
func BenchmarkVectorParts(b *testing.B) {
	for _, n := range sizes() {
		f := corpus(b, n)
		ix, err := Open(f, Options{SkipStat: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dk/load", n/1000), func(b *testing.B) {
			for b.Loop() {
				if _, err := loadVecStore(ix.gen, ix.meta, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(ix.meta.Vectors), "vectors")
		})
		b.Run(fmt.Sprintf("%dk/load-rows", n/1000), func(b *testing.B) {
			for b.Loop() {
				if _, err := loadVecStore(ix.gen, ix.meta, true); err != nil {
					b.Fatal(err)
				}
			}
		})
		vs, err := loadVecStore(ix.gen, ix.meta, false)
		if err != nil {
			b.Fatal(err)
		}
		emb, _, err := ix.c.genEmbedder(ix.gen, ix.meta)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dk/model", n/1000), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := ix.c.genEmbedder(ix.gen, ix.meta); err != nil {
					b.Fatal(err)
				}
			}
		})
		qv, err := emb.Embed(context.Background(), []string{vocabulary[3] + " " + vocabulary[40]})
		if err != nil {
			b.Fatal(err)
		}
		normalize(qv[0])
		side := &vecSide{vs: vs}
		for _, tc := range []struct {
			name string
			q    Query
		}{
			{"all", Query{}},
			{"scope", Query{Scopes: []string{"shop"}}},
			{"kind+scope", Query{Scopes: []string{"shop"}, Kinds: []string{"fact"}}},
		} {
			// The scan of the floats (a command's one search) and of
			// the 8-bit codes (a server's searches after its second).
			for _, codes := range []bool{false, true} {
				name := "nearest"
				if codes {
					name = "nearest-codes"
				}
				b.Run(fmt.Sprintf("%dk/%s/%s", n/1000, name, tc.name), func(b *testing.B) {
					defer func(e bool) { q8Enabled = e }(q8Enabled)
					q8Enabled = codes && useSIMD
					if q8Enabled && vs.q8.set.Load() == nil {
						vs.q8.set.Store(quantize(vs.base[:vs.nbaseVec*vs.dim], vs.dim))
					}
					vq := &vecQuery{side: side, vec: qv[0]}
					for b.Loop() {
						if _, err := vq.nearest(tc.q, 30, 0); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
		b.Run(fmt.Sprintf("%dk/quantize", n/1000), func(b *testing.B) {
			for b.Loop() {
				quantize(vs.base[:vs.nbaseVec*vs.dim], vs.dim)
			}
		})
		ix.Close()
	}
}

// BenchmarkRefreshOneChange is an Open after one entry changed: the stat
// pass, loading and indexing the file, embedding it with the frozen model
// and appending its vector to the log.
func BenchmarkRefreshOneChange(b *testing.B) {
	for _, n := range sizes() {
		f := corpus(b, n)
		d := fdoc{id: "BENCHCHANGE", kind: "note", scope: "global", created: time.Date(2026, 10, 15, 0, 0, 0, 0, time.UTC)}
		i := 0
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			for b.Loop() {
				i++
				d.text = fmt.Sprintf("edit %d of a memory about %s", i, vocabulary[i%len(vocabulary)])
				f.writeFile(b, d.path(), d.encode(), oldTime.Add(time.Duration(i)*time.Second))
				ix, err := Open(f, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if st := ix.LastUpdate(); st.Indexed != 1 || st.Rebuilt {
					b.Fatalf("LastUpdate() = %+v, want one file indexed", st)
				}
				ix.Close()
			}
		})
	}
}

// BenchmarkRefreshNoChange is what every mira-recall pays before it can
// search an unchanged store: Open (stat pass, manifest, lock) and Close.
func BenchmarkRefreshNoChange(b *testing.B) {
	for _, n := range sizes() {
		f := corpus(b, n)
		for _, skip := range []bool{false, true} {
			name := fmt.Sprintf("%dk/stat", n/1000)
			if skip {
				name = fmt.Sprintf("%dk/watcher", n/1000)
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					ix, err := Open(f, Options{SkipStat: skip})
					if err != nil {
						b.Fatal(err)
					}
					if st := ix.LastUpdate(); st.Loaded != 0 {
						b.Fatalf("unchanged store loaded %d files", st.Loaded)
					}
					ix.Close()
				}
			})
		}
	}
}

// BenchmarkRefreshParts splits the no-change refresh into its parts.
func BenchmarkRefreshParts(b *testing.B) {
	for _, n := range sizes() {
		f := corpus(b, n)
		gen, err := readCurrent(filepath.Join(f.root, indexDirName))
		if err != nil {
			b.Fatal(err)
		}
		genDir := filepath.Join(f.root, indexDirName, gen)
		b.Run(fmt.Sprintf("%dk/StatFiles", n/1000), func(b *testing.B) {
			for b.Loop() {
				if _, err := StatFiles(f.root); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dk/manifest", n/1000), func(b *testing.B) {
			for b.Loop() {
				if _, err := readManifest(genDir); err != nil {
					b.Fatal(err)
				}
			}
		})
		stats, _ := StatFiles(f.root)
		man, _ := readManifest(genDir)
		m, _ := readMeta(genDir)
		ix := &Index{src: f, c: newCall(Options{})}
		b.Run(fmt.Sprintf("%dk/compare", n/1000), func(b *testing.B) {
			for b.Loop() {
				ch, err := ix.plan(m, man, m.Commit, probe{full: true, stats: stats, statAt: time.Now().UnixNano()}, true)
				if err != nil || !ch.empty() {
					b.Fatalf("plan = %+v, %v", ch, err)
				}
			}
		})
		b.Run(fmt.Sprintf("%dk/open-close", n/1000), func(b *testing.B) {
			for b.Loop() {
				bi, err := lockGen(genDir, false, time.Second)
				if err != nil {
					b.Fatal(err)
				}
				bi.Close()
			}
		})
	}
}

func BenchmarkRebuild(b *testing.B) {
	for _, n := range sizes() {
		f := corpus(b, n)
		// The built-in embedder fits a model and embeds every text; the
		// hashing embedder, which needs no fit, shows what fitting costs.
		for _, e := range []struct {
			name string
			emb  embed.Embedder
		}{{"model", nil}, {"hashing", embed.NewHashing(0)}} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, e.name), func(b *testing.B) {
				var st Stats
				for b.Loop() {
					var err error
					if st, err = Rebuild(f, Options{Embedder: e.emb}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
				b.ReportMetric(float64(st.Vectors), "vectors")
			})
		}
		// Leave the corpus with the built-in embedder for the others.
		if _, err := Rebuild(f, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseManifest measures reading a 100k-entry manifest, which a
// freshness check without a watcher does first.
func BenchmarkParseManifest(b *testing.B) {
	m := manifest{}
	for i := range 100_000 {
		m[fmt.Sprintf("entries/global/%s/20261121T%06dZ__01J9%020d.md", []string{"facts", "notes", "decisions"}[i%3], i, i)] =
			entry{size: int64(300 + i%500), mtime: 1795611761492464966 + int64(i), id: fmt.Sprintf("01J9%020d", i)}
	}
	data := formatManifest(m)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		got, err := parseManifest(data)
		if err != nil || len(got) != len(m) {
			b.Fatalf("parseManifest = %d entries, %v", len(got), err)
		}
	}
}

// BenchmarkFinder is a writer's duplicate check: reading the rows and one
// lookup by hash.
func BenchmarkFinder(b *testing.B) {
	for _, n := range sizes() {
		f := corpus(b, n)
		dir := filepath.Join(f.root, indexDirName)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				fi, err := OpenFinder(dir)
				if err != nil {
					b.Fatal(err)
				}
				fi.ByHash("h:none")
			}
		})
	}
}

// BenchmarkTextSearch is the BM25 stage alone, for 45 hits, from the
// rows and postings of a loaded vector store: for a question of a few
// words and for a long message, as the proxy searches for.
func BenchmarkTextSearch(b *testing.B) {
	for _, n := range sizes() {
		f := corpus(b, n)
		ix, err := Open(f, Options{SkipStat: true})
		if err != nil {
			b.Fatal(err)
		}
		vs, done, err := ix.rowsFor()
		if err != nil {
			b.Fatal(err)
		}
		long := "we talked about " + vocabulary[3] + " and " + vocabulary[40] + " then " + vocabulary[700] + " " + vocabulary[12] +
			" " + vocabulary[90] + " " + vocabulary[5] + " how do we retry the " + vocabulary[300] + " " + vocabulary[1500] + " " + vocabulary[8] + " " + vocabulary[20] + " worker"
		for _, q := range []struct{ name, text string }{
			{"question", "what did we decide about " + vocabulary[5] + " and " + vocabulary[90] + "?"},
			{"message", long},
		} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, q.name), func(b *testing.B) {
				for b.Loop() {
					if _, err := ix.lexical(Query{Text: q.text}, 45, vs); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		done()
		ix.Close()
	}
}
