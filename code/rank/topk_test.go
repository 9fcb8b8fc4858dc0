package rank

import (
	"math/rand"
	"slices"
	"sort"
	"testing"
)

// topK must give exactly the first k of a full sort, ties included.
func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for trial := 0; trial < 500; trial++ {
		n := r.Intn(200)
		score := make([]int, n)
		for i := range score {
			score[i] = r.Intn(10) // many ties, broken by id
		}
		before := func(a, b uint32) bool {
			if score[a] != score[b] {
				return score[a] > score[b]
			}
			return a < b
		}
		ids := make([]uint32, n)
		for i := range ids {
			ids[i] = uint32(i)
		}
		r.Shuffle(n, func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		want := slices.Clone(ids)
		sort.Slice(want, func(i, j int) bool { return before(want[i], want[j]) })
		k := r.Intn(n + 5)
		if k < len(want) {
			want = want[:k]
		}
		got := topK(slices.Clone(ids), k, before)
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("n %d k %d: got %v, want %v", n, k, got, want)
		}
	}
}
