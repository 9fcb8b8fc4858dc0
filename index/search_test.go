package index

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func day(n float64) time.Duration { return time.Duration(n * 24 * float64(time.Hour)) }

// smallCorpus is a store of five entries with known kinds, scopes, tags
// and ages relative to t0.
func smallCorpus(t *testing.T) (*fakeSource, map[string]string) {
	f := newFake(t)
	p := map[string]string{}
	for _, d := range []fdoc{
		{id: "A", kind: "decision", scope: "global", project: "shop", tags: []string{"db"}, created: t0.Add(-day(1)), text: "We chose PostgreSQL for the shop database"},
		{id: "B", kind: "fact", scope: "shop", project: "shop", tags: []string{"db", "ops"}, created: t0.Add(-day(10)), text: "The database backups run nightly at two"},
		{id: "C", kind: "note", scope: "mira", project: "mira", tags: []string{"ops"}, created: t0.Add(-day(40)), text: "Deploys of mira happen on Tuesdays"},
		{id: "D", kind: "preference", scope: "global", created: t0.Add(-day(3)), text: "Prefer short commit messages"},
		{id: "E", kind: "fact", scope: "mira", project: "mira", tags: []string{"db"}, created: t0.Add(-day(90)), text: "mira stores memories as files, no database server"},
	} {
		p[d.id] = f.writeDoc(t, d)
	}
	return f, p
}

// TestSearchFilters checks which entries the filters let through to the
// lexical side (a text-less query uses no side at all).
func TestSearchFilters(t *testing.T) {
	f, p := smallCorpus(t)
	ix := mustOpen(t, f, opts(nil))
	for _, tc := range []struct {
		name string
		q    Query
		want []string // ids, any order
	}{
		{"text only", Query{Text: "database"}, []string{"A", "B", "E"}},
		{"kind", Query{Text: "database", Kinds: []string{"fact"}}, []string{"B", "E"}},
		{"kinds or", Query{Text: "database", Kinds: []string{"decision", "fact"}}, []string{"A", "B", "E"}},
		{"scope", Query{Text: "database", Scopes: []string{"global"}}, []string{"A"}},
		{"scopes or", Query{Text: "database", Scopes: []string{"global", "shop"}}, []string{"A", "B"}},
		{"tag", Query{Text: "database", Tags: []string{"ops"}}, []string{"B"}},
		{"since", Query{Text: "database", Since: t0.Add(-day(20))}, []string{"A", "B"}},
		{"since exact", Query{Text: "database", Since: t0.Add(-day(10))}, []string{"A", "B"}},
		{"and across fields", Query{Text: "database", Kinds: []string{"fact"}, Scopes: []string{"mira"}}, []string{"E"}},
		{"no match", Query{Text: "database", Kinds: []string{"goal"}}, nil},
		{"filters without text", Query{Tags: []string{"ops"}}, []string{"B", "C"}},
		{"since without text", Query{Since: t0.Add(-day(5))}, []string{"A", "D"}},
		{"unknown words", Query{Text: "xylophone"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The lexical side's filters; TestVectorFilters has the
			// vector side's.
			tc.q.Mode = ModeLexical
			hits, err := ix.Search(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.ID)
				if h.Path != p[h.ID] {
					t.Errorf("hit %s has path %s, want %s", h.ID, h.Path, p[h.ID])
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("Search(%+v) ids (-want +got):\n%s", tc.q, diff)
			}
		})
	}
}

// TestSearchRankingMath checks the lexical ranking (mode lexical, which
// never reads vectors): BM25 over the best BM25, recency and the bonus.
func TestSearchRankingMath(t *testing.T) {
	f, _ := smallCorpus(t)
	ix := mustOpen(t, f, opts(nil))
	hits, err := ix.Search(Query{Text: "database", Now: t0, Mode: ModeLexical})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 {
		t.Fatalf("Search = %+v, want 3 hits", hits)
	}
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Why.BM25)
	}
	age := map[string]float64{"A": 1, "B": 10, "E": 90}
	for i, h := range hits {
		if h.Why.BM25 <= 0 {
			t.Errorf("%s: BM25 = %v, want > 0", h.ID, h.Why.BM25)
		}
		wantRel := h.Why.BM25 / best
		wantRec := math.Exp(-age[h.ID] / 30)
		wantScore := 0.8*wantRel + 0.2*wantRec
		if !near(h.Why.Relevance, wantRel) || !near(h.Why.Recency, wantRec) || !near(h.Score, wantScore) || h.Why.Rank != i+1 {
			t.Errorf("hit %d = %+v, want relevance %.4f recency %.4f score %.4f", i+1, h, wantRel, wantRec, wantScore)
		}
		if i > 0 && hits[i-1].Score < h.Score {
			t.Errorf("hits not sorted by score: %v before %v", hits[i-1].Score, h.Score)
		}
	}
	// Exactly one candidate has the best BM25, and its relevance is 1.
	if n := countIf(hits, func(h Hit) bool { return h.Why.Relevance == 1 }); n < 1 {
		t.Errorf("no hit with relevance 1: %+v", hits)
	}

	// The project bonus is added on top.
	hits2, err := ix.Search(Query{Text: "database", Now: t0, Project: "mira", Mode: ModeLexical})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits2 {
		want := 0.0
		if h.ID == "E" {
			want = DefaultRanking.ProjectBonus
		}
		if h.Why.Project != want {
			t.Errorf("%s: project bonus %v, want %v", h.ID, h.Why.Project, want)
		}
	}
}

func TestSearchEmptyQuery(t *testing.T) {
	f, _ := smallCorpus(t)
	ix := mustOpen(t, f, opts(nil))
	for _, text := range []string{"", "   ", "what is it?"} { // the last is all stop words
		hits, err := ix.Search(Query{Text: text, K: 3, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.ID)
			if h.Why.BM25 != 0 || h.Why.Relevance != 0 || !near(h.Score, h.Why.Recency) {
				t.Errorf("Search(%q) hit %+v, want score = recency only", text, h)
			}
		}
		if want := []string{"A", "D", "B"}; !slices.Equal(got, want) {
			t.Errorf("Search(%q) = %v, want the newest %v", text, got, want)
		}
	}
}

func TestSearchK(t *testing.T) {
	f := newFake(t)
	for i := range 50 {
		f.writeDoc(t, fdoc{id: string(rune('a'+i/26)) + string(rune('a'+i%26)), created: t0.Add(-time.Duration(i) * time.Hour), text: "common words here"})
	}
	ix := mustOpen(t, f, opts(nil))
	for _, tc := range []struct{ k, want int }{{0, DefaultK}, {5, 5}, {40, 40}, {100, 50}} {
		hits, err := ix.Search(Query{Text: "common", K: tc.k})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != tc.want {
			t.Errorf("Search(K=%d) gave %d hits, want %d", tc.k, len(hits), tc.want)
		}
	}
	ix.Close()
	if _, err := ix.Search(Query{Text: "common"}); err == nil {
		t.Error("Search on a closed index succeeded")
	}
}

func TestRank(t *testing.T) {
	now := t0
	cands := []Candidate{
		{ID: "a", Path: "pa", BM25: 4, CreatedAt: now.Add(-day(30))},               // rel 1, rec e^-1
		{ID: "b", Path: "pb", BM25: 2, CreatedAt: now, Project: "p"},               // rel .5, rec 1, bonus
		{ID: "c", Path: "pc", BM25: 2, CreatedAt: now},                             // rel .5, rec 1
		{ID: "d", Path: "pd", BM25: 2, CreatedAt: now.Add(day(5))},                 // future: rec 1
		{ID: "e", Path: "pe", BM25: 1, CreatedAt: time.Time{}},                     // unknown age: rec 0
		{ID: "f", Path: "pf", BM25: 3, CreatedAt: now.Add(-day(60)), Project: "q"}, // rel .75, rec e^-2
	}
	got := DefaultRanking.Rank(cands, "p", now, 0)
	e1, e2 := math.Exp(-1), math.Exp(-2)
	want := []Hit{
		{ID: "a", Path: "pa", Score: 0.8 + 0.2*e1, Why: Why{BM25: 4, Relevance: 1, Recency: e1, Rank: 1}},
		{ID: "b", Path: "pb", Score: 0.4 + 0.2 + 0.05, Why: Why{BM25: 2, Relevance: 0.5, Recency: 1, Project: 0.05, Rank: 2}},
		{ID: "f", Path: "pf", Score: 0.6 + 0.2*e2, Why: Why{BM25: 3, Relevance: 0.75, Recency: e2, Rank: 3}},
		// d and c tie on score; d is newer.
		{ID: "d", Path: "pd", Score: 0.6, Why: Why{BM25: 2, Relevance: 0.5, Recency: 1, Rank: 4}},
		{ID: "c", Path: "pc", Score: 0.6, Why: Why{BM25: 2, Relevance: 0.5, Recency: 1, Rank: 5}},
		{ID: "e", Path: "pe", Score: 0.2, Why: Why{BM25: 1, Relevance: 0.25, Rank: 6}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("Rank (-want +got):\n%s", diff)
	}
	if got := DefaultRanking.Rank(cands, "p", now, 2); len(got) != 2 || got[1].ID != "b" {
		t.Errorf("Rank(k=2) = %+v", got)
	}
	// Ties on score and age go by id.
	tie := DefaultRanking.Rank([]Candidate{{ID: "z", BM25: 1, CreatedAt: now}, {ID: "y", BM25: 1, CreatedAt: now}}, "", now, 0)
	if tie[0].ID != "y" {
		t.Errorf("tie broken as %v, want y first", tie)
	}
	// Without BM25 the score is the recency.
	nb := DefaultRanking.Rank([]Candidate{{ID: "old", CreatedAt: now.Add(-day(30))}, {ID: "new", CreatedAt: now}}, "", now, 0)
	if nb[0].ID != "new" || !near(nb[1].Score, e1) {
		t.Errorf("Rank without BM25 = %+v", nb)
	}
}

func TestRecency(t *testing.T) {
	for _, tc := range []struct {
		age  time.Duration
		want float64
	}{
		{0, 1},
		{day(30), math.Exp(-1)},
		{day(15), math.Exp(-0.5)},
		{day(90), math.Exp(-3)},
		{-day(1), 1},
	} {
		if got := Recency(t0.Add(-tc.age), t0, 30); !near(got, tc.want) {
			t.Errorf("Recency(age %v) = %v, want %v", tc.age, got, tc.want)
		}
	}
	if got := Recency(time.Time{}, t0, 30); got != 0 {
		t.Errorf("Recency(zero) = %v, want 0", got)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func countIf[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// TestQueryRanking checks a query's own ranking: its weights are the ones
// the scores use, its minimum score drops what is below it, and settings
// out of range are refused.
func TestQueryRanking(t *testing.T) {
	f, _ := smallCorpus(t)
	ix := mustOpen(t, f, opts(nil))
	for _, mode := range []string{ModeLexical, ModeHybrid} {
		r := DefaultRanking
		r.Relevance, r.Recency, r.RecencyDays = 0.5, 0.5, 10
		hits, err := ix.Search(Query{Text: "database", Now: t0, Mode: mode, Ranking: &r})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) < 2 {
			t.Fatalf("mode %s: %+v, want at least 2 hits", mode, hits)
		}
		for _, h := range hits {
			want := 0.5*h.Why.Fused + 0.5*h.Why.Recency - h.Why.MMRPenalty
			if !near(h.Score, want) {
				t.Errorf("mode %s: %s scores %v, want %v", mode, h.ID, h.Score, want)
			}
		}
		if h := hits[0]; h.ID == "A" && !near(h.Why.Recency, math.Exp(-1.0/10)) {
			t.Errorf("mode %s: recency %v with a time constant of 10 days", mode, h.Why.Recency)
		}
		r.MinScore = (hits[0].Score + hits[1].Score) / 2
		kept, err := ix.Search(Query{Text: "database", Now: t0, Mode: mode, Ranking: &r})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(kept); !slices.Equal(got, ids(hits[:1])) {
			t.Errorf("mode %s: min score %v kept %v, want %v", mode, r.MinScore, got, ids(hits[:1]))
		}
	}
	for _, bad := range []func(*Ranking){
		func(r *Ranking) { r.Recency = 1.5 },
		func(r *Ranking) { r.Relevance = -0.1 },
		func(r *Ranking) { r.RecencyDays = 0 },
		func(r *Ranking) { r.MMRLambda = 0 },
		func(r *Ranking) { r.MMRLambda = 1.2 },
		func(r *Ranking) { r.MinScore = -1 },
		func(r *Ranking) { r.MinScore = math.NaN() },
	} {
		r := DefaultRanking
		bad(&r)
		if _, err := ix.Search(Query{Text: "database", Ranking: &r}); err == nil {
			t.Errorf("ranking %+v accepted", r)
		}
	}
	// The default ranking, given or not, ranks alike.
	r := DefaultRanking
	a, err := ix.Search(Query{Text: "database", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ix.Search(Query{Text: "database", Now: t0, Ranking: &r})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("explicit default ranking differs (-none +default):\n%s", diff)
	}
}

// TestLexicalFilters: a filtered text search returns the hits of the
// unfiltered search that pass the filter, with the same scores in the
// same order, for filters of each kind and their mixes.
func TestLexicalFilters(t *testing.T) {
	f := newFake(t)
	generate(t, f, 2000)
	ix := mustOpen(t, f, opts(nil))
	vs, done, err := ix.rowsFor()
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	texts := []string{vocabulary[3] + " " + vocabulary[40], vocabulary[700] + " " + vocabulary[5] + " " + vocabulary[90], vocabulary[2]}
	since := time.Date(2026, 10, 10, 0, 0, 0, 0, time.UTC)
	filters := []struct {
		q    Query
		keep func(r *vecRow) bool
	}{
		{Query{Scopes: []string{"shop"}}, func(r *vecRow) bool { return vs.dict[r.scope] == "shop" }},
		{Query{Scopes: []string{"shop", "global"}, Kinds: []string{"fact", "decision"}}, func(r *vecRow) bool {
			return slices.Contains([]string{"shop", "global"}, vs.dict[r.scope]) && slices.Contains([]string{"fact", "decision"}, vs.dict[r.kind])
		}},
		{Query{Tags: []string{vocabulary[1], vocabulary[7]}}, func(r *vecRow) bool {
			return slices.ContainsFunc(vs.tagsOf(r), func(t int32) bool { return vs.dict[t] == vocabulary[1] || vs.dict[t] == vocabulary[7] })
		}},
		{Query{Since: since, Kinds: []string{"note"}}, func(r *vecRow) bool {
			return vs.dict[r.kind] == "note" && r.hasCreated && r.created >= since.UnixNano()
		}},
		{Query{Scopes: []string{"nowhere"}}, func(*vecRow) bool { return false }},
	}
	for _, text := range texts {
		all, err := ix.lexical(Query{Text: text}, 5000, vs)
		if err != nil {
			t.Fatal(err)
		}
		for i, fq := range filters {
			var want []Candidate
			for _, c := range all {
				if fq.keep(&vs.rows[c.vrow-1]) {
					want = append(want, c)
				}
			}
			if len(want) == 0 && i < len(filters)-1 {
				t.Errorf("%q, filter %d: no hits; the filter should leave some", text, i)
			}
			for _, n := range []int{1, 10, 100} {
				q := fq.q
				q.Text = text
				got, err := ix.lexical(q, n, vs)
				if err != nil {
					t.Fatal(err)
				}
				w := want[:min(n, len(want))]
				if len(got) != len(w) {
					t.Fatalf("%q, filter %d, n=%d: %d hits, want %d", text, i, n, len(got), len(w))
				}
				for j := range w {
					if got[j].Path != w[j].Path || got[j].BM25 != w[j].BM25 {
						t.Errorf("%q, filter %d, hit %d: %s %v, want %s %v", text, i, j, got[j].Path, got[j].BM25, w[j].Path, w[j].BM25)
					}
				}
			}
		}
	}
}
