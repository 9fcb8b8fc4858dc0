package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestFindRunsScanMatchesSorted: the scan findRuns uses for a few
// documents groups them as the sort it uses for many does, over random
// stores and updates (documents between, before and after the stored ones,
// in two scopes, some replacing stored ones).
func TestFindRunsScanMatchesSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	doc := func(i int, scope string) vecDoc {
		return vecDoc{path: fmt.Sprintf("entries/%s/notes/%03d.md", scope, i), scope: scope, created: base.Add(time.Duration(i) * time.Minute)}
	}
	for round := range 300 {
		vs := newVecStore("test", 2)
		for i := range 60 {
			if rng.IntN(2) == 0 {
				vs.put(doc(i, []string{"a", "b"}[rng.IntN(2)]))
			}
		}
		if round%3 == 0 {
			vs.del(doc(rng.IntN(60), "a").path)
		}
		var docs []vecInput
		seen := map[string]bool{}
		for range 1 + rng.IntN(smallUpdate) {
			d := doc(rng.IntN(60), []string{"a", "b"}[rng.IntN(2)])
			if !seen[d.path] {
				seen[d.path] = true
				docs = append(docs, vecInput{vecDoc: d})
			}
		}
		slices.SortFunc(docs, func(a, b vecInput) int { return storeOrder(&a.vecDoc, &b.vecDoc) })
		changed, scopes := map[string]bool{}, map[string]bool{}
		for _, d := range docs {
			changed[d.path], scopes[d.scope] = true, true
		}
		got := findRunsScan(vs, docs, changed)
		want := findRunsSorted(vs, docs, changed, scopes)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: scan %v, sorted %v", round, got, want)
		}
	}
}
