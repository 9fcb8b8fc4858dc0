package mira

import (
	"math"
	"testing"
)

// TestEvalStats checks recall@k, hit@k and MRR against numbers worked out by
// hand.
func TestEvalStats(t *testing.T) {
	s := newEvalStats()
	// Q1 expects a and b. Ranked: x, a, y, z, w, b  -> a at 2, b at 6.
	// recall@1 0, @5 1/2, @10 1; hit@1 0, @5 1, @10 1; RR 1/2.
	s.add([][]string{{"x"}, {"a"}, {"y"}, {"z"}, {"w"}, {"b"}}, []string{"a", "b"})
	// Q2 expects c, found first: recall 1 everywhere, RR 1.
	s.add([][]string{{"c"}, {"d"}}, []string{"c"})
	// Q3 expects e (by tag), never found: all 0.
	s.add([][]string{{"f", "tag1"}}, []string{"e"})
	// Q4 expects two keys satisfied by one result with two tags at rank 3.
	// recall@1 0, @5 1, @10 1; hit@5 1; RR 1/3.
	s.add([][]string{{"p"}, {"q"}, {"r", "t1", "t2"}}, []string{"t1", "t2"})
	r := s.report("x", 0)
	want := map[string]float64{
		"recall@1": (0 + 1 + 0 + 0) / 4.0, "recall@5": (0.5 + 1 + 0 + 1) / 4, "recall@10": (1 + 1 + 0 + 1) / 4.0,
		"hit@1": 1 / 4.0, "hit@5": 3 / 4.0, "hit@10": 3 / 4.0, "mrr": (0.5 + 1 + 0 + 1.0/3) / 4,
	}
	got := map[string]float64{
		"recall@1": r.Recall["@1"], "recall@5": r.Recall["@5"], "recall@10": r.Recall["@10"],
		"hit@1": r.Hit["@1"], "hit@5": r.Hit["@5"], "hit@10": r.Hit["@10"], "mrr": r.MRR,
	}
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-4 {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
}
