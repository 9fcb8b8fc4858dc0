package index

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/internal/locomo"
)

// TestLoCoMoNeighbours measures turns indexed with and without the turn
// before them, and the two rankings fused: min–max normalised final
// scores weighted α for the one with the turn before (α = 1 is today's
// index, 0 the turns alone), and reciprocal-rank fusion. It runs only
// when MIRA_LOCOMO names the benchmark directory:
//
//	MIRA_LOCOMO=/work/shared/bench/locomo go test ./index -run TestLoCoMoNeighbours -v
func TestLoCoMoNeighbours(t *testing.T) {
	turns, questions, _ := loadLoCoMo(t)
	fc, end := locomoStoreOf(t, turns, true)
	fn, _ := locomoStoreOf(t, turns, false)
	ixc, ixn := mustOpen(t, fc, Options{}), mustOpen(t, fn, Options{})
	alphas := []float64{1, 0.8, 0.7, 0.6, 0.5, 0.3, 0}
	names := make([]string, 0, len(alphas)+1)
	for _, a := range alphas {
		names = append(names, fmt.Sprintf("α=%.1f", a))
	}
	names = append(names, "rrf")
	overall := make([]locomo.Metrics, len(names))
	byCat := make([]map[int]*locomo.Metrics, len(names))
	for i := range byCat {
		byCat[i] = map[int]*locomo.Metrics{}
	}
	for _, q := range questions {
		base := Query{Text: q.Question, K: 30, Scopes: []string{q.Conversation}, Now: end[q.Conversation].Add(24 * time.Hour)}
		hc, err := ixc.Search(base)
		if err != nil {
			t.Fatal(err)
		}
		hn, err := ixn.Search(base)
		if err != nil {
			t.Fatal(err)
		}
		norm := func(hits []Hit) map[string]float64 {
			out := map[string]float64{}
			if len(hits) == 0 {
				return out
			}
			hi, lo := hits[0].Score, hits[len(hits)-1].Score
			for _, h := range hits {
				if hi > lo {
					out[h.ID] = (h.Score - lo) / (hi - lo)
				} else {
					out[h.ID] = 1
				}
			}
			return out
		}
		nc, nn := norm(hc), norm(hn)
		ids := map[string]bool{}
		for _, h := range append(append([]Hit{}, hc...), hn...) {
			ids[h.ID] = true
		}
		rankOf := func(hits []Hit) map[string]int {
			m := map[string]int{}
			for i, h := range hits {
				m[h.ID] = i + 1
			}
			return m
		}
		rc, rn := rankOf(hc), rankOf(hn)
		for i := range names {
			score := map[string]float64{}
			for id := range ids {
				if i < len(alphas) {
					score[id] = alphas[i]*nc[id] + (1-alphas[i])*nn[id]
				} else {
					for _, r := range []map[string]int{rc, rn} {
						if k, ok := r[id]; ok {
							score[id] += 1 / (60 + float64(k))
						}
					}
				}
			}
			order := make([]string, 0, len(ids))
			for id := range ids {
				order = append(order, id)
			}
			// best first; ties by the ranking with the turn before
			sortBy(order, func(a, b string) bool {
				if score[a] != score[b] {
					return score[a] > score[b]
				}
				ra, rb := rc[a], rc[b]
				if ra == 0 {
					ra = 1 << 30
				}
				if rb == 0 {
					rb = 1 << 30
				}
				if ra != rb {
					return ra < rb
				}
				return a < b
			})
			top := order[:min(10, len(order))]
			overall[i].Add(top, q.Evidence)
			if byCat[i][q.Category] == nil {
				byCat[i][q.Category] = &locomo.Metrics{}
			}
			byCat[i][q.Category].Add(top, q.Evidence)
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%-9s R@1    R@5    R@10    hit@1  hit@5  hit@10   MRR\n", "fusion")
	for i, n := range names {
		fmt.Fprintf(&sb, "%-9s %s\n", n, overall[i])
	}
	for cat := 1; cat <= 5; cat++ {
		fmt.Fprintf(&sb, "category %d\n", cat)
		for i, n := range names {
			fmt.Fprintf(&sb, "  %-7s %s\n", n, *byCat[i][cat])
		}
	}
	t.Log(sb.String())
}

func sortBy(s []string, less func(a, b string) bool) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// BenchmarkLoCoMoSearch is a hybrid search of each LoCoMo dev question in
// turn over its conversation's turns, indexed with the turn before each
// (MIRA_LOCOMO names the benchmark directory): the searches of a store of
// conversation turns.
func BenchmarkLoCoMoSearch(b *testing.B) {
	turns, questions, _ := loadLoCoMo(b)
	f, end := locomoStore(b, turns)
	ix, err := Open(f, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	i := 0
	for b.Loop() {
		q := questions[i%len(questions)]
		i++
		if _, err := ix.Search(Query{Text: q.Question, K: 10, Scopes: []string{q.Conversation}, Now: end[q.Conversation].Add(24 * time.Hour)}); err != nil {
			b.Fatal(err)
		}
	}
}
