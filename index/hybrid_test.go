package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/embed"
)

// fakeEmbedder stands for an external embedder: the hashing embedder under
// another ID, counting the texts it is asked to embed; it fails while fail
// is set.
type fakeEmbedder struct {
	id    string
	inner embed.Embedder
	mu    sync.Mutex
	texts []string
	fail  bool
}

func newFakeEmbedder(id string) *fakeEmbedder {
	return &fakeEmbedder{id: id, inner: embed.NewHashing(64)}
}

func (e *fakeEmbedder) ID() string { return e.id }
func (e *fakeEmbedder) Dim() int   { return e.inner.Dim() }

func (e *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fail {
		return nil, errors.New("connection refused")
	}
	e.texts = append(e.texts, texts...)
	return e.inner.Embed(ctx, texts)
}

// embedded returns how many texts were embedded since the last call.
func (e *fakeEmbedder) embedded() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := len(e.texts)
	e.texts = nil
	return n
}

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func TestMMRNearDuplicates(t *testing.T) {
	f := newFake(t)
	for i, text := range []string{
		"The staging database password rotates every Monday morning",
		"Every Monday morning the staging database password is rotated",
		"The password of the staging database rotates on Monday mornings",
		"Staging database password: rotated each Monday morning",
		"On Monday mornings the staging database password gets rotated",
	} {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("P%d", i), created: t0.Add(-time.Hour), text: text})
	}
	f.writeDoc(t, fdoc{id: "OTHER", created: t0.Add(-time.Hour), text: "The staging database password is kept in the team vault with the QA credentials"})
	// Weaker candidates, each sharing a word with the query, and entries
	// that share none.
	for i, text := range []string{
		"The analytics database is slow on Fridays", "Password managers are recommended to everyone",
		"Standup moved to Monday at ten", "Lunch is at noon", "The cat sleeps on the sofa", "Use tabs for indentation",
	} {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("U%d", i), created: t0.Add(-time.Hour), text: text})
	}
	ix := mustOpen(t, f, opts(nil))
	st, err := ix.SearchStages(Query{Text: "staging database password", K: 3, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	top := ids(st.Final)
	if len(top) < 2 || !slices.Contains(top[:2], "OTHER") {
		t.Errorf("top hits %v, want OTHER among the first two", top)
	}
	// Without MMR the paraphrases crowd it out: the test can fail.
	if pos := slices.Index(ids(st.Ranked), "OTHER"); pos < 5 {
		t.Errorf("before MMR OTHER is at %d, want after the five paraphrases: %v", pos, ids(st.Ranked))
	}
	for i, h := range st.Final {
		if i > 0 && h.Score > st.Final[i-1].Score {
			t.Errorf("scores rise after MMR: %v", st.Final)
		}
		if i == 0 && h.Why.MMRPenalty != 0 {
			t.Errorf("first hit penalised: %+v", h)
		}
		if i > 0 && h.ID != "OTHER" && h.Why.MMRPenalty <= 0 {
			t.Errorf("paraphrase %s not penalised: %+v", h.ID, h.Why)
		}
	}
}

// topicEmbedder embeds a text as its counts of words of a few topics, so
// that words that share no letters can be near.
type topicEmbedder struct{}

var topics = [][]string{{"car", "automobile", "vehicle"}, {"cat", "kitten", "feline"}, {"database", "postgresql", "sql"}}

func (topicEmbedder) ID() string { return "topics/3" }
func (topicEmbedder) Dim() int   { return len(topics) }

func (topicEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = make([]float32, len(topics))
		for _, w := range strings.Fields(strings.ToLower(t)) {
			for j, words := range topics {
				if slices.Contains(words, strings.Trim(w, ".,?!")) {
					out[i][j]++
				}
			}
		}
	}
	return out, nil
}

func TestSearchModes(t *testing.T) {
	f := newFake(t)
	pg := f.writeDoc(t, fdoc{id: "PG", created: t0, text: "We run PostgreSQL in production"})
	f.writeDoc(t, fdoc{id: "CAT", created: t0, text: "The office cat naps all afternoon"})
	o := opts(nil)
	o.Embedder = topicEmbedder{}
	ix := mustOpen(t, f, o)
	// "sql" shares no term with the entry, only a topic ("database"
	// would find PostgreSQL by its family, see TestFamilies).
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{ModeLexical, nil},
		{ModeVector, []string{"PG"}},
		{ModeHybrid, []string{"PG"}},
		{"", []string{"PG"}},
	} {
		st, err := ix.SearchStages(Query{Text: "sql", Mode: tc.mode, Now: t0})
		if err != nil {
			t.Fatalf("mode %q: %v", tc.mode, err)
		}
		if got := ids(st.Final); !slices.Equal(got, tc.want) {
			t.Errorf("mode %q: %v, want %v", tc.mode, got, tc.want)
		}
		if tc.mode == ModeLexical && (len(st.Vector) > 0 || ix.vec != nil) {
			t.Errorf("lexical mode read vectors")
		}
		for _, h := range st.Final {
			if h.Path != pg || h.Why.Vector <= DefaultRanking.MinCosine || h.Why.VectorRank != 1 || h.Why.LexicalRank != 0 || h.Why.BM25 != 0 {
				t.Errorf("mode %q: hit %+v", tc.mode, h)
			}
		}
	}
	// A word both sides know: hybrid fuses both ranks.
	st, err := ix.SearchStages(Query{Text: "office cat kitten", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	h := st.Final[0]
	if h.ID != "CAT" || h.Why.LexicalRank != 1 || h.Why.VectorRank != 1 || h.Why.Fused != 1 || h.Why.FusionRank != 1 || h.Why.Relevance != 1 {
		t.Errorf("hybrid top hit %+v", h)
	}
	if want := 0.8*h.Why.Fused + 0.2*h.Why.Recency; !near(h.Score, want) {
		t.Errorf("score %v, want %v", h.Score, want)
	}
	if _, err := ix.Search(Query{Text: "x", Mode: "semantic"}); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, err := ix.Search(Query{Text: "x", Fusion: "max"}); err == nil {
		t.Error("unknown fusion accepted")
	}
}

func TestFusion(t *testing.T) {
	r := DefaultRanking
	r.Recency, r.ProjectBonus, r.MMRLambda = 0, 0, 1
	vs := newVecStore("test", 2)
	for _, d := range []vecDoc{
		{path: "a", id: "a", vec: []float32{1, 0}},
		{path: "b", id: "b", vec: []float32{0.6, 0.8}},
		{path: "c", id: "c", vec: []float32{0, 1}},
	} {
		vs.put(d)
	}
	r.LexicalShare = 0.4 // the arithmetic below
	vq := &vecQuery{side: &vecSide{vs: vs}, vec: []float32{1, 0}}
	lex := []Candidate{{ID: "c", Path: "c", BM25: 4}, {ID: "b", Path: "b", BM25: 2}}
	vecs := []vecHit{{row: 0, cos: 1}, {row: 1, cos: 0.6}}
	st := fuse(r, Query{}, nil, lex, vecs, vq, t0, 10)
	// a: 0.6·1 = 0.6; b: 0.4·0 + 0.6·0 = 0; c: 0.4·1 = 0.4.
	got := map[string]float64{}
	for _, h := range st.Fused {
		got[h.ID] = h.Why.Fused
	}
	if diff := cmp.Diff(map[string]float64{"a": 0.6, "b": 0, "c": 0.4}, got); diff != "" {
		t.Errorf("weighted fusion (-want +got):\n%s", diff)
	}
	if g := ids(st.Final); !slices.Equal(g, []string{"a", "c", "b"}) {
		t.Errorf("final %v", g)
	}
	// RRF: a 1/61, b 1/62+1/62, c 1/61 → b first.
	st = fuse(r, Query{Fusion: FusionRRF}, nil, lex, vecs, vq, t0, 10)
	if g := ids(st.Final); g[0] != "b" || st.Final[0].Why.Fused != 1 {
		t.Errorf("rrf final %v (%+v)", g, st.Final[0].Why)
	}
}

func TestVectorFilters(t *testing.T) {
	f, _ := smallCorpus(t)
	ix := mustOpen(t, f, opts(nil))
	for _, tc := range []struct {
		name string
		q    Query
		ok   func(id string) bool
	}{
		{"kind", Query{Kinds: []string{"fact"}}, func(id string) bool { return id == "B" || id == "E" }},
		{"scope", Query{Scopes: []string{"global"}}, func(id string) bool { return id == "A" || id == "D" }},
		{"tag", Query{Tags: []string{"ops"}}, func(id string) bool { return id == "B" || id == "C" }},
		{"since", Query{Since: t0.Add(-day(5))}, func(id string) bool { return id == "A" || id == "D" }},
		{"unknown tag", Query{Tags: []string{"nope"}}, func(string) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := tc.q
			q.Text, q.Mode = "database server memories", ModeVector
			hits, err := ix.Search(q)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if !tc.ok(h.ID) {
					t.Errorf("hit %s does not pass the filter", h.ID)
				}
			}
			if tc.name != "unknown tag" && len(hits) == 0 {
				t.Errorf("no hits")
			}
		})
	}
}

// TestNearestExact checks filtered vector candidates against brute force,
// for selective filters and broad ones.
func TestNearestExact(t *testing.T) {
	vs := newVecStore("test", 8)
	for i := range 400 {
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32((i*7+j*13)%17) - 8
		}
		normalize(v)
		kind := "note"
		if i%10 == 0 {
			kind = "fact" // 10%: the subset path
		}
		scope := []string{"a", "b"}[i%2] // 50%: over-fetching
		vs.put(vecDoc{path: fmt.Sprintf("p%03d", i), id: fmt.Sprint(i), kind: kind, scope: scope, vec: v})
	}
	q := []float32{1, -1, 0.5, 0, 2, -0.5, 1, 0}
	normalize(q)
	for _, query := range []Query{{Kinds: []string{"fact"}}, {Scopes: []string{"b"}}, {}, {Kinds: []string{"fact"}, Scopes: []string{"a"}}} {
		vq := &vecQuery{side: &vecSide{vs: vs}, vec: q}
		vq.side.rw.RLock()
		got, err := vq.nearest(query, 15, -2)
		vq.side.rw.RUnlock()
		if err != nil {
			t.Fatal(err)
		}
		f := newRowFilter(vs, query)
		var want []vecHit
		for i := range vs.rows {
			if f == nil || f.pass(&vs.rows[i]) {
				want = append(want, vecHit{row: i, cos: dot(q, vs.vector(i))})
			}
		}
		slices.SortStableFunc(want, func(a, b vecHit) int { return cmpFloat(b.cos, a.cos) })
		want = want[:min(15, len(want))]
		if len(got) != len(want) {
			t.Fatalf("%+v: %d hits, want %d", query, len(got), len(want))
		}
		for i := range got {
			if d := got[i].cos - want[i].cos; d > 1e-5 || d < -1e-5 {
				t.Errorf("%+v: hit %d has cosine %v, want %v", query, i, got[i].cos, want[i].cos)
			}
			if f != nil && !f.pass(&vs.rows[got[i].row]) {
				t.Errorf("%+v: hit %d does not pass", query, i)
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestEmbedderChangeReembeds(t *testing.T) {
	f, _ := smallCorpus(t)
	a, b := newFakeEmbedder("fake-a/64"), newFakeEmbedder("fake-b/64")
	o := opts(nil)
	o.Embedder = a
	ix := mustOpen(t, f, o)
	if n := a.embedded(); n != 5 {
		t.Errorf("first build embedded %d texts, want 5", n)
	}
	if ix.meta.Embedder != "fake-a/64" || ix.meta.Vectors != 5 {
		t.Errorf("meta %+v", ix.meta)
	}
	ix.Close()

	var w warnings
	o = opts(&w)
	o.Embedder = b
	ix = mustOpen(t, f, o)
	if !ix.LastUpdate().Rebuilt {
		t.Errorf("changing the embedder did not rebuild: %+v", ix.LastUpdate())
	}
	if n := b.embedded(); n != 5 {
		t.Errorf("the new embedder embedded %d texts, want 5", n)
	}
	if n := a.embedded(); n != 0 {
		t.Errorf("the old embedder embedded %d texts", n)
	}
	if ix.meta.Embedder != "fake-b/64" {
		t.Errorf("meta embedder %s", ix.meta.Embedder)
	}
	if hits, err := ix.Search(Query{Text: "backups", Mode: ModeVector}); err != nil || len(hits) == 0 {
		t.Errorf("vector search after the change: %v, %v", hits, err)
	}
	if n := b.embedded(); n != 1 {
		t.Errorf("the query was embedded %d times, want 1", n)
	}
	ix.Close()

	// Back to the built-in default: another rebuild.
	ix = mustOpen(t, f, opts(nil))
	if !ix.LastUpdate().Rebuilt || ix.meta.Embedder != "mira-hash-v1/384" || !ix.meta.DefaultEmbedder {
		t.Errorf("back to the default: %+v, meta %+v", ix.LastUpdate(), ix.meta)
	}
}

func TestCachedVectorsSurviveRebuild(t *testing.T) {
	f, p := smallCorpus(t)
	e := newFakeEmbedder("fake-http/64")
	o := opts(nil)
	o.Embedder = e
	mustOpen(t, f, o).Close()
	if n := e.embedded(); n != 5 {
		t.Fatalf("embedded %d texts, want 5", n)
	}
	st, err := Rebuild(f, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := e.embedded(); n != 0 || st.Embedded != 0 || st.Cached != 5 || st.Vectors != 5 {
		t.Errorf("rebuild embedded %d texts, stats %+v; want none embedded, 5 cached", n, st)
	}
	// Moving a file keeps its text: no embedding either. A new text is.
	f.remove(t, p["A"])
	f.writeDoc(t, fdoc{id: "A", kind: "decision", scope: "elsewhere", created: t0.Add(-day(1)), text: "We chose PostgreSQL for the shop database"})
	f.writeDoc(t, fdoc{id: "N", created: t0, text: "A brand new memory"})
	ix := mustOpen(t, f, o)
	if n := e.embedded(); n != 1 {
		t.Errorf("update embedded %d texts, want 1 (the new one)", n)
	}
	if st := ix.LastUpdate(); st.Cached != 1 || st.Embedded != 1 || st.Vectors != 6 {
		t.Errorf("LastUpdate() = %+v", st)
	}
}

func TestIncrementalEmbedding(t *testing.T) {
	for _, builtin := range []bool{false, true} {
		t.Run(fmt.Sprint("builtin=", builtin), func(t *testing.T) {
			f := newFake(t)
			var paths []string
			for i := range 120 { // enough for the built-in model
				paths = append(paths, f.writeDoc(t, fdoc{id: fmt.Sprintf("D%03d", i), created: t0.Add(time.Duration(i) * time.Minute), text: fmt.Sprintf("entry %d about %s", i, vocabulary[i])}))
			}
			e := newFakeEmbedder("fake/64")
			o := opts(nil)
			if !builtin {
				o.Embedder = e
			}
			ix := mustOpen(t, f, o)
			m := ix.meta
			ix.Close()
			if builtin && (m.FitDocs != 120 || !strings.HasPrefix(m.Embedder, "mira-lsa-v1/")) {
				t.Fatalf("meta %+v, want a model fitted on 120 texts", m)
			}
			e.embedded()
			f.writeFile(t, paths[3], fdoc{id: "D003", created: t0.Add(3 * time.Minute), text: "entry three, rewritten about " + vocabulary[500]}.encode(), oldTime.Add(time.Minute))
			f.remove(t, paths[7])
			ix = mustOpen(t, f, o)
			st := ix.LastUpdate()
			if st.Rebuilt || st.Embedded != 1 || st.Vectors != 119 {
				t.Errorf("LastUpdate() = %+v, want 1 embedded, 119 vectors", st)
			}
			if !builtin {
				if n := e.embedded(); n != 1 {
					t.Errorf("embedder got %d texts, want 1", n)
				}
			}
			hits, err := ix.Search(Query{Text: vocabulary[500], Mode: ModeVector, K: 1})
			if err != nil || len(hits) != 1 || hits[0].ID != "D003" {
				t.Errorf("Search(new word) = %+v, %v; want D003", hits, err)
			}
			hits, err = ix.Search(Query{Text: vocabulary[7], Mode: ModeVector})
			if err != nil || slices.Contains(ids(hits), "D007") {
				t.Errorf("removed entry still found: %v, %v", ids(hits), err)
			}
			if ix.meta.VecLog == 0 {
				t.Errorf("the update did not go to the log: %+v", ix.meta)
			}
		})
	}
}

func TestRefit(t *testing.T) {
	f := newFake(t)
	n := 0
	add := func(k int) {
		for range k {
			f.writeDoc(t, fdoc{id: fmt.Sprintf("R%04d", n), created: t0.Add(time.Duration(n) * time.Minute), text: fmt.Sprintf("%s %s %s", vocabulary[n%300], vocabulary[(n*7)%300], vocabulary[(n*13)%300])})
			n++
		}
	}
	add(MinFitDocs - 1)
	var progress int
	o := opts(nil)
	o.Progress = func(done, total int) { progress++ }
	ix := mustOpen(t, f, o)
	if m := ix.meta; m.FitDocs != 0 || m.Embedder != "mira-hash-v1/384" {
		t.Errorf("a store of %d entries has %+v, want the hashing embedder", n, m)
	}
	ix.Close()
	add(1)
	ix = mustOpen(t, f, o)
	m := ix.meta
	if !ix.LastUpdate().Rebuilt || m.FitDocs != MinFitDocs || !strings.HasPrefix(m.Embedder, "mira-lsa-v1/") {
		t.Errorf("at %d entries: %+v, meta %+v; want a refit", n, ix.LastUpdate(), m)
	}
	ix.Close()
	// Growing, but less than RefitGrowth times: the model stays frozen.
	add(MinFitDocs - 1)
	ix = mustOpen(t, f, o)
	if ix.LastUpdate().Rebuilt || ix.meta.Embedder != m.Embedder || ix.meta.Vectors != n {
		t.Errorf("at %d entries: %+v, meta %+v; want an update with the same model", n, ix.LastUpdate(), ix.meta)
	}
	ix.Close()
	add(1)
	progress = 0
	ix = mustOpen(t, f, o)
	if !ix.LastUpdate().Rebuilt || ix.meta.FitDocs != RefitGrowth*MinFitDocs || ix.meta.Embedder == m.Embedder {
		t.Errorf("at %d entries: %+v, meta %+v; want a second refit", n, ix.LastUpdate(), ix.meta)
	}
	if progress == 0 {
		t.Error("the refit reported no progress")
	}
}

func TestDamagedVectors(t *testing.T) {
	genDir := func(t *testing.T, f *fakeSource) string {
		cur, err := readCurrent(filepath.Join(f.root, ".index"))
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(f.root, ".index", cur)
	}
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, gen string)
		atOpen  bool // found by Open's cheap check, else by the search
		logOnly bool
	}{
		{"base truncated", func(t *testing.T, gen string) {
			p := filepath.Join(gen, "vectors-1")
			fi, _ := os.Stat(p)
			os.Truncate(p, fi.Size()-10)
		}, true, false},
		{"base missing", func(t *testing.T, gen string) { os.Remove(filepath.Join(gen, "vectors-1")) }, true, false},
		{"base garbage", func(t *testing.T, gen string) {
			os.WriteFile(filepath.Join(gen, "vectors-1"), []byte("garbage"), 0o644)
		}, true, false},
		{"vector bit flipped", func(t *testing.T, gen string) {
			p := filepath.Join(gen, "vectors-1")
			b, _ := os.ReadFile(p)
			b[len(b)-100] ^= 0x40
			os.WriteFile(p, b, 0o644)
		}, false, false},
		{"model garbage", func(t *testing.T, gen string) {
			os.WriteFile(filepath.Join(gen, "model"), []byte("garbage"), 0o644)
		}, false, false},
		{"log record damaged", func(t *testing.T, gen string) {
			p := filepath.Join(gen, "vectors-1.log")
			b, err := os.ReadFile(p)
			if err != nil || len(b) < 20 {
				t.Fatalf("log: %d bytes, %v", len(b), err)
			}
			b[12] ^= 0xff
			os.WriteFile(p, b, 0o644)
		}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			for i := range 110 {
				f.writeDoc(t, fdoc{id: fmt.Sprintf("V%03d", i), created: t0, text: fmt.Sprintf("walrus %d %s", i, vocabulary[i])})
			}
			mustOpen(t, f, opts(nil)).Close()
			if tc.logOnly {
				f.writeDoc(t, fdoc{id: "NEW", created: t0, text: "a walrus arrives"})
				mustOpen(t, f, opts(nil)).Close()
			}
			old := genDir(t, f)
			tc.damage(t, old)
			var w warnings
			ix := mustOpen(t, f, opts(&w))
			if ix.LastUpdate().Rebuilt != tc.atOpen {
				t.Errorf("rebuilt at open = %v, want %v", ix.LastUpdate().Rebuilt, tc.atOpen)
			}
			hits, err := ix.Search(Query{Text: "walrus"})
			if err != nil || len(hits) == 0 {
				t.Fatalf("Search = %v, %v; want hits (by words at least)", hits, err)
			}
			ix.Close()
			if !tc.atOpen {
				if len(w.got) == 0 {
					t.Error("a damaged vector file was not reported")
				}
				ix = mustOpen(t, f, opts(nil))
				if !ix.LastUpdate().Rebuilt {
					t.Errorf("the next Open did not rebuild: %+v", ix.LastUpdate())
				}
				if hits, err := ix.Search(Query{Text: "walrus", Mode: ModeVector}); err != nil || len(hits) == 0 {
					t.Errorf("vector search after the rebuild: %v, %v", hits, err)
				}
				ix.Close()
			}
			if genDir(t, f) == old {
				t.Error("the damaged generation is still current")
			}
		})
	}
}

// TestTornLogTail: a writer that crashed while appending to the vector log
// leaves a torn record after the committed length; readers ignore it and
// the next writer cuts it off.
func TestTornLogTail(t *testing.T) {
	f, _ := smallCorpus(t)
	mustOpen(t, f, opts(nil)).Close()
	f.writeDoc(t, fdoc{id: "N1", created: t0, text: "first new entry"})
	ix := mustOpen(t, f, opts(nil))
	log := filepath.Join(ix.gen, "vectors-1.log")
	ix.Close()
	fh, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write([]byte{200, 0, 0, 0, 1, 2, 3})
	fh.Close()
	var w warnings
	ix = mustOpen(t, f, opts(&w))
	if hits, err := ix.Search(Query{Text: "first new entry", Mode: ModeVector}); err != nil || len(hits) == 0 || len(w.got) > 0 {
		t.Errorf("search with a torn tail: %v, %v, warnings %v", hits, err, w.got)
	}
	ix.Close()
	f.writeDoc(t, fdoc{id: "N2", created: t0, text: "second new entry"})
	ix = mustOpen(t, f, opts(&w))
	hits, err := ix.Search(Query{Text: "second new entry", Mode: ModeVector, K: 1})
	if err != nil || len(hits) != 1 || hits[0].ID != "N2" || len(w.got) > 0 || ix.LastUpdate().Rebuilt {
		t.Errorf("after the next write: %v, %v, warnings %v, %+v", hits, err, w.got, ix.LastUpdate())
	}
}

func TestPendingEmbeddings(t *testing.T) {
	f, _ := smallCorpus(t)
	e := newFakeEmbedder("fake-http/64")
	now := t0
	var w warnings
	o := opts(&w)
	o.Embedder = e
	o.Now = func() time.Time { return now }
	mustOpen(t, f, o).Close()
	e.embedded()

	e.fail = true
	f.writeDoc(t, fdoc{id: "N", created: t0, text: "written while the server was down"})
	ix := mustOpen(t, f, o)
	if st := ix.LastUpdate(); st.Pending != 1 || st.Docs != 6 || st.Vectors != 5 {
		t.Errorf("LastUpdate() = %+v, want 1 pending", st)
	}
	if len(w.got) == 0 {
		t.Error("the failure was not reported")
	}
	// The query cannot be embedded either: words only.
	if hits, err := ix.Search(Query{Text: "server was down"}); err != nil || len(hits) == 0 || hits[0].ID != "N" {
		t.Errorf("search while down: %v, %v", ids(hits), err)
	}
	ix.Close()

	e.fail = false
	// Within a minute nothing is retried...
	ix = mustOpen(t, f, o)
	if st := ix.LastUpdate(); st.Pending != 1 || e.embedded() != 0 {
		t.Errorf("retried too soon: %+v", st)
	}
	ix.Close()
	// ...after it, the pending entry is embedded.
	now = now.Add(2 * pendingRetry)
	ix = mustOpen(t, f, o)
	if st := ix.LastUpdate(); st.Pending != 0 || st.Vectors != 6 {
		t.Errorf("after the retry: %+v", st)
	}
	if n := e.embedded(); n != 1 {
		t.Errorf("retry embedded %d texts, want 1", n)
	}
	if hits, err := ix.Search(Query{Text: "server was down", Mode: ModeVector, K: 1}); err != nil || len(hits) != 1 || hits[0].ID != "N" {
		t.Errorf("vector search after the retry: %v, %v", ids(hits), err)
	}
}

func TestLogCompaction(t *testing.T) {
	f := newFake(t)
	for i := range 20 {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("C%03d", i), created: t0, text: fmt.Sprintf("seed %s", vocabulary[i])})
	}
	o := opts(nil)
	o.Embedder = newFakeEmbedder("fake/64") // no refits on the way
	mustOpen(t, f, o).Close()
	// One change per Open: the log grows past compactMin records and is
	// folded into a new base file.
	for i := range compactMin + 1 {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("N%03d", i), created: t0, text: fmt.Sprintf("added %s", vocabulary[100+i])})
		if i%50 == 0 || i == compactMin {
			mustOpen(t, f, o).Close()
		}
	}
	ix := mustOpen(t, f, o)
	defer ix.Close()
	if ix.meta.VecSeq < 2 {
		t.Errorf("meta %+v: the log was never compacted", ix.meta)
	}
	ents, _ := os.ReadDir(ix.gen)
	var vecFiles []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), vecPrefix) {
			vecFiles = append(vecFiles, e.Name())
		}
	}
	if len(vecFiles) > 2 {
		t.Errorf("old vector files left: %v", vecFiles)
	}
	hits, err := ix.Search(Query{Text: vocabulary[100+compactMin], Mode: ModeVector, K: 1})
	if err != nil || len(hits) != 1 || hits[0].ID != fmt.Sprintf("N%03d", compactMin) {
		t.Errorf("search after compaction: %v, %v", ids(hits), err)
	}
	if st, err := ix.Status(); err != nil || st.Vectors != 20+compactMin+1 {
		t.Errorf("Status() = %+v, %v", st, err)
	}
}

func TestVecStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	docs := []vecDoc{
		{path: "b__IDB.md", id: "IDB", kind: "fact", scope: "s", project: "p", tags: []string{"x", "y"}, created: t0, hash: hashText("b"), vec: []float32{0.6, 0.8},
			content: "0123456789abcdef0123456789abcdef", role: "user", pin: "sticky", terms: appendTerms(nil, []termFreq{{"deploi", 2}, {"friday", 1}}), flen: 3, lsum: 7},
		{path: "a", id: "A", kind: "note", scope: "s", vec: nil, terms: appendTerms(nil, []termFreq{{"friday", 1}}), flen: 1},
		{path: "c", id: "C", kind: "note", scope: "t", pending: true},
	}
	base, log := vecFiles(dir, 1)
	if err := writeVecBase(base, "emb", 2, slices.Clone(docs)); err != nil {
		t.Fatal(err)
	}
	var recs []byte
	recs = logRecord(recs, &vecDoc{path: "a"}, true)
	d := vecDoc{path: "d", id: "D", kind: "fact", scope: "t", created: t0.Add(time.Hour), vec: []float32{1, 0},
		content: "0123456789ABCDEF0123456789ABCDEF", role: "assistant", terms: appendTerms(nil, []termFreq{{"deploi", 1}, {"monday", 3}}), flen: 4, lsum: 1 << 60}
	recs = logRecord(recs, &d, false)
	n, err := appendLog(log, 0, recs)
	if err != nil {
		t.Fatal(err)
	}
	m := meta{Embedder: "emb", Dim: 2, VecSeq: 1, VecLog: n}
	if err := checkVecFiles(dir, m); err != nil {
		t.Fatal(err)
	}
	vs, err := loadVecStore(dir, m, false)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]vecDoc{}
	live, err2 := vs.liveDocs()
	if err2 != nil {
		t.Fatal(err2)
	}
	for _, doc := range live {
		got[doc.path] = doc
	}
	// A hash other than mem.ContentHash's comes back as the digits of
	// what it is kept as (see docHash).
	d.content = packHash(d.content).String()
	want := map[string]vecDoc{"b__IDB.md": docs[0], "c": docs[2], "d": d}
	want["b__IDB.md"] = vecDoc{path: "b__IDB.md", id: "IDB", kind: "fact", scope: "s", project: "p", tags: []string{"x", "y"}, created: t0, hash: hashText("b"), vec: []float32{0.6, 0.8},
		content: "0123456789abcdef0123456789abcdef", role: "user", pin: "sticky", terms: appendTerms(nil, []termFreq{{"deploi", 2}, {"friday", 1}}), flen: 3, lsum: 7}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(vecDoc{}, termFreq{})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if live, vecs, pending := vs.counts(); live != 3 || vecs != 2 || pending != 1 {
		t.Errorf("counts = %d, %d, %d", live, vecs, pending)
	}
	if err := checkVecFiles(dir, meta{Embedder: "other", Dim: 2, VecSeq: 1, VecLog: n}); err == nil {
		t.Error("another embedder's vectors accepted")
	}
	if err := checkVecFiles(dir, meta{Embedder: "emb", Dim: 2, VecSeq: 1, VecLog: n + 1}); err == nil {
		t.Error("a short log accepted")
	}
}

// TestForkTags checks that a store and its fork, which share the rows'
// tags so far, each keep the tags of the rows added after the fork.
func TestForkTags(t *testing.T) {
	vs := newVecStore("emb", 2)
	vs.put(vecDoc{path: "a", tags: []string{"x", "y"}})
	vs.tagPool = slices.Grow(vs.tagPool, 16) // room to share, unless clipped
	fk := vs.fork()
	vs.put(vecDoc{path: "b", tags: []string{"y"}})
	fk.put(vecDoc{path: "b", tags: []string{"two", "three"}})
	fk.put(vecDoc{path: "a", tags: nil})
	vs.put(vecDoc{path: "c", tags: []string{"four"}})
	tags := func(vs *vecStore) map[string][]string {
		out := map[string][]string{}
		for i := range vs.rows {
			if !vs.rows[i].dead {
				out[vs.rows[i].path] = vs.doc(i).tags
			}
		}
		return out
	}
	if diff := cmp.Diff(map[string][]string{"a": {"x", "y"}, "b": {"y"}, "c": {"four"}}, tags(vs)); diff != "" {
		t.Errorf("store (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]string{"a": nil, "b": {"two", "three"}}, tags(fk)); diff != "" {
		t.Errorf("fork (-want +got):\n%s", diff)
	}
}

func TestPackHash(t *testing.T) {
	hex := "0123456789abcdef0123456789abcdef"
	for _, s := range []string{"", hex, strings.ToUpper(hex), "00000000000000000000000000000000", "h1", hex + "0", "0123456789abcdef0123456789abcdeg", "g123456789abcdef0123456789abcdef", "0123456789abcdef 123456789abcdef"} {
		h := packHash(s)
		if (h == docHash{}) != (s == "") {
			t.Errorf("packHash(%q) = %x: zero only for no hash", s, h)
		}
		if back := packHash(h.String()); back != h {
			t.Errorf("packHash(%q) = %x, packed again from %q: %x", s, h, h.String(), back)
		}
	}
	if got := packHash(hex).String(); got != hex {
		t.Errorf("a content hash comes back as %q, want %q", got, hex)
	}
	if packHash(hex) == packHash(strings.ToUpper(hex)) || packHash("h1") == packHash("h2") {
		t.Error("different hashes packed alike")
	}
	// A server keeps a row per memory: see vecRow.
	if n := unsafe.Sizeof(vecRow{}); unsafe.Sizeof(0) == 8 && n > 120 {
		t.Errorf("vecRow takes %d bytes, want at most 120", n)
	}
}

// TestConcurrentSearches runs filtered and unfiltered hybrid searches on
// one Index at once: the first of them loads the vectors and the others
// wait; building the search index of all rows must not race with readers
// (run with -race).
func TestConcurrentSearches(t *testing.T) {
	f, _ := smallCorpus(t)
	ix := mustOpen(t, f, opts(nil))
	want, err := ix.Search(Query{Text: "database", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix = mustOpen(t, f, opts(nil))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 10 {
				q := Query{Text: "database", Now: t0}
				if (g+i)%2 == 1 {
					q.Scopes = []string{"mira"}
				}
				hits, err := ix.Search(q)
				if err != nil {
					t.Error(err)
					return
				}
				if q.Scopes == nil && !slices.Equal(ids(hits), ids(want)) {
					t.Errorf("concurrent search: %v, want %v", ids(hits), ids(want))
				}
			}
		})
	}
	wg.Wait()
}

// The scan, split across goroutines on a large store, returns exactly the
// best rows by cosine, ties in row order, with or without a filter.
func TestNearestScanSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, dim = 3*scanChunk + 17, 8
	vs := newVecStore("test", dim)
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.IntN(5)) - 2 // small integers: many ties
		}
		if !normalize(v) {
			v = nil
		}
		vs.put(vecDoc{path: fmt.Sprintf("entries/s%d/notes/%06d.md", i%3, i), scope: fmt.Sprintf("s%d", i%3), vec: v})
	}
	q := []float32{1, 0.5, 0, -1, 0.25, 0, 0, 2}
	normalize(q)
	vq := &vecQuery{side: &vecSide{vs: vs}, vec: q}
	for _, query := range []Query{{}, {Scopes: []string{"s1"}}} {
		got, err := vq.nearest(query, 50, -1)
		if err != nil {
			t.Fatal(err)
		}
		f := newRowFilter(vs, query)
		var want []vecHit
		for i := range vs.rows {
			if v := vs.vector(i); v != nil && (f == nil || f.pass(&vs.rows[i])) {
				want = append(want, vecHit{row: i, cos: dot(q, v)})
			}
		}
		slices.SortStableFunc(want, func(a, b vecHit) int {
			switch {
			case a.cos > b.cos:
				return -1
			case a.cos < b.cos:
				return 1
			}
			return 0
		})
		want = want[:50]
		if !slices.Equal(got, want) {
			t.Errorf("nearest(%v) differs from a full sort:\n got %v\nwant %v", query.Scopes, got, want)
		}
	}
}

// TestKeep: with a Keep, Indexes of the same unchanged generation share
// one load of the vectors; a change loads them anew, and the old ones are
// unmapped once the last Index using them is closed.
func TestKeep(t *testing.T) {
	f, o, keep := keptNotes(t, 5, "D", "sql databases and herons")
	q := Query{Text: "sql herons", Now: t0}
	search := func(ix *Index) []string {
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
	// likeFullLoad checks that got is what an Index without a Keep finds.
	likeFullLoad := func(what string, got []string) {
		t.Helper()
		plain := mustOpen(t, f, opts(nil))
		defer plain.Close()
		if want := search(plain); !slices.Equal(got, want) {
			t.Errorf("%s: %v, a full load: %v", what, got, want)
		}
	}
	a := mustOpen(t, f, o)
	want := search(a)
	s1 := a.vec
	if q8Enabled && s1 != nil && s1.vs != nil && !s1.vs.q8.building.Load() {
		t.Error("a kept index's vectors did not start their codes when loaded")
	}
	a.Close()
	if s1 == nil || s1.vs == nil {
		t.Fatal("the kept vectors were closed with their Index")
	}
	b := mustOpen(t, f, o)
	if got := search(b); !slices.Equal(got, want) {
		t.Errorf("with kept vectors: %v, want %v", got, want)
	}
	if b.vec != s1 {
		t.Error("the second Open loaded the vectors again")
	}
	likeFullLoad("with kept vectors", want)

	// b still searches with s1 while a rebuild brings a new generation
	// (an update would wait for b to close).
	f.writeDoc(t, fdoc{id: "D9", created: t0, text: "one more note about herons"})
	if _, err := Rebuild(f, opts(nil)); err != nil {
		t.Fatal(err)
	}
	c := mustOpen(t, f, o)
	search(c)
	if c.meta.Docs != 6 {
		t.Fatalf("the new generation has %d documents, want 6", c.meta.Docs)
	}
	if c.vec == s1 {
		t.Fatal("vectors kept across a change")
	}
	if s1.vs == nil {
		t.Error("vectors unmapped while an open Index still uses them")
	}
	b.Close()
	if s1.vs != nil {
		t.Error("replaced vectors still mapped after their last Index closed")
	}
	s3 := c.vec
	c.Close()

	// An update in place (a new entry, vectors appended) is a change too,
	// which extends the kept vectors with the log's new records: they
	// share the base file's mapping, which stays mapped while either uses
	// it, and search as a full load does.
	base := s3.vs.mapped
	if base == nil {
		t.Skip("the vectors are not mapped on this system")
	}
	f.writeDoc(t, fdoc{id: "D10", created: t0, text: "herons again"})
	d := mustOpen(t, f, o)
	got := search(d)
	if d.meta.Docs != 7 || d.vec == s3 {
		t.Fatalf("after an update: %d documents, same vectors %v", d.meta.Docs, d.vec == s3)
	}
	if s3.vs != nil {
		t.Error("replaced vectors still mapped with no Index using them")
	}
	waitCodes(t, d.vec.vs) // the codes' build holds the mapping meanwhile
	if d.vec.vs.mapped != base || base.refs.Load() != 1 {
		t.Errorf("the update read the base again (shared %v, %d users)", d.vec.vs.mapped == base, base.refs.Load())
	}
	s4 := d.vec
	d.Close()
	likeFullLoad("extended vectors", got)

	// An edit and a removal extend them too; a side opened and never
	// searched holds the one before it until it goes.
	f.writeDoc(t, fdoc{id: "D2", created: t0, text: "note 2 now about kestrels only"})
	e := mustOpen(t, f, o)
	e.Close()
	f.remove(t, fdoc{id: "D3", created: t0}.path())
	g := mustOpen(t, f, o)
	got = search(g)
	if g.meta.Docs != 6 {
		t.Fatalf("after a removal: %d documents, want 6 (%+v)", g.meta.Docs, g.last)
	}
	if s4.vs != nil {
		t.Error("vectors kept mapped after the side that held them went unsearched")
	}
	s5 := g.vec
	g.Close()
	likeFullLoad("after an edit and a removal", got)
	keep.Release()
	if s5.vs != nil || base.refs.Load() != 0 {
		t.Errorf("Release left the vectors mapped (%d users of the base)", base.refs.Load())
	}
}

// TestFeedback: in hybrid mode the query vector moves toward the best
// fused hit, so of two entries equally close to the query the one closer
// to that hit ranks first; in vector mode, and with Feedback 0, nothing
// moves.
func TestFeedback(t *testing.T) {
	f := newFake(t)
	// Topic vectors (car, cat, database): the query "sql car" is (1,0,1).
	f.writeDoc(t, fdoc{id: "A", created: t0, text: "sql postgresql database vehicle"}) // (1,0,3), the only BM25 match
	f.writeDoc(t, fdoc{id: "B", created: t0, text: "automobile vehicle"})              // (2,0,0)
	f.writeDoc(t, fdoc{id: "C", created: t0, text: "postgresql database"})             // (0,0,2)
	f.writeDoc(t, fdoc{id: "D", created: t0, text: "kitten feline"})                   // (0,2,0)
	o := opts(nil)
	o.Embedder = topicEmbedder{}
	ix := mustOpen(t, f, o)
	defer ix.Close()
	vec := func(r Ranking, mode string) map[string]float64 {
		t.Helper()
		st, err := ix.stages(Query{Text: "sql car", Mode: mode, Now: t0}, r)
		if err != nil {
			t.Fatal(err)
		}
		if ids := ids(st.Fused); len(ids) == 0 || ids[0] != "A" {
			t.Fatalf("mode %q: fused %v, want A first", mode, ids)
		}
		out := map[string]float64{}
		for _, h := range st.Fused {
			out[h.ID] = h.Why.Vector
		}
		return out
	}
	off := DefaultRanking
	off.Feedback = 0
	if v := vec(off, ModeHybrid); v["B"] != v["C"] {
		t.Fatalf("without feedback B and C should be as close to the query: %v", v)
	}
	v := vec(DefaultRanking, ModeHybrid)
	if !(v["C"] > v["B"]) {
		t.Errorf("with feedback C (like A) should be closer than B: %v", v)
	}
	if _, ok := v["D"]; ok {
		t.Errorf("feedback brought in an unrelated entry: %v", v)
	}
	if v := vec(DefaultRanking, ModeVector); v["B"] != v["C"] {
		t.Errorf("vector mode moved the query: %v", v)
	}
}

// TestSearchWhileExtending: while one search extends the kept vectors
// after a change, another searches the vectors before it instead of
// waiting, and holds them until it is done.
func TestSearchWhileExtending(t *testing.T) {
	f, o, keep := keptNotes(t, 5, "E", "herons")
	defer keep.Release()
	a := mustOpen(t, f, o)
	if err := a.LoadVectors(); err != nil {
		t.Fatal(err)
	}
	old := a.vec
	a.Close()
	f.writeDoc(t, fdoc{id: "E9", created: t0, text: "one more heron"})
	b := mustOpen(t, f, o)
	defer b.Close()
	b.vecOnce.Do(func() { b.vec = keep.sideFor(b.gen, b.meta) })
	if b.vec.from != old {
		t.Fatal("the new side does not extend the old one")
	}
	// Another search is extending b's side (as searchSide marks it).
	keepMu.Lock()
	b.vec.loading = true
	refs := old.refs
	keepMu.Unlock()
	side, done, err := b.searchSide()
	if err != nil || side != old {
		t.Fatalf("searchSide while extending = %p, %v; want the old side %p", side, err, old)
	}
	if old.refs != refs+1 {
		t.Errorf("the old side's references: %d, want %d", old.refs, refs+1)
	}
	done()
	// The extension ends: searches use the new side.
	if err := b.LoadVectors(); err != nil {
		t.Fatal(err)
	}
	side, done, err = b.searchSide()
	done()
	if err != nil || side != b.vec || !side.loaded.Load() {
		t.Errorf("after the extension: %p (%v), want the loaded new side", side, err)
	}
	if old.vs != nil {
		t.Error("the old side's vectors are still held with nobody using them")
	}
	hits, err := b.Search(Query{Text: "heron", Now: t0})
	if err != nil || len(hits) != 6 {
		t.Errorf("Search = %d hits, %v; want 6", len(hits), err)
	}
}

// TestKeepLetsWritersElsewhereIn: a writable handle kept after an update
// holds the exclusive lock, which stops even the read-only lookup of a
// writer in another process (mira-remember looking for a duplicate); once
// unused it goes after keepIdleWritable, well before the keepIdle that a
// read-only handle stays.
func TestKeepLetsWritersElsewhereIn(t *testing.T) {
	f, o, keep := keptNotes(t, 5, "D", "herons")
	mustOpen(t, f, o).Close()
	f.writeDoc(t, fdoc{id: "D9", created: t0, text: "one more note about herons"})
	f.commit()
	ix := mustOpen(t, f, o) // takes in the change: the kept handle is writable
	writable := keep.held != nil && keep.held.writable
	ix.Close()
	if !writable {
		t.Fatal("the update left no writable handle kept; the test proves nothing")
	}
	start := time.Now()
	lo := opts(nil)
	lo.NoRefresh = true
	lo.LockTimeout = 5 * time.Second
	lookup, err := Open(f, lo)
	if err != nil {
		t.Fatal(err)
	}
	lookup.Close()
	if waited := time.Since(start); waited >= keepIdle {
		t.Errorf("a read-only open beside the kept writable handle waited %v, as long as an idle read-only handle is kept (%v)", waited, keepIdle)
	}
	// In the writable handle's place this process keeps a read-only one,
	// opened in the background, for its next search.
	readOnly := func() bool {
		keepMu.Lock()
		defer keepMu.Unlock()
		return keep.held != nil && !keep.held.writable
	}
	for deadline := time.Now().Add(5 * time.Second); !readOnly(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no read-only handle was kept after the writable one went")
		}
	}
	ix = mustOpen(t, f, o)
	if ix.Commit() == "" {
		t.Error("the search side opened no index")
	}
	kept := keep.held
	ix.Close()
	if kept == nil || kept.writable {
		t.Errorf("the next Open used %+v, want the kept read-only handle", kept)
	}
}
