package index

import (
	"fmt"
	"testing"
)

// TestEqualRelevanceFavoursRecent: two memories that answer a query
// equally well (the same words the query asks for, one word it does not
// ask for changed) must rank by age, newest first, in every mode. A small
// difference on one side (the changed word moves the vector a little)
// must not outweigh two years of recency.
func TestEqualRelevanceFavoursRecent(t *testing.T) {
	const text = "The deploy script reads the staging token from the vault on "
	// Either day may leave its memory a little closer to the query's
	// vector: both ways round, with and without other entries.
	for _, tc := range []struct {
		old, new string
		extra    bool
	}{{"Mondays", "Fridays", false}, {"Fridays", "Mondays", false}, {"Mondays", "Fridays", true}, {"Fridays", "Mondays", true}} {
		extra := tc.extra
		t.Run(fmt.Sprintf("old=%s/others=%v", tc.old, extra), func(t *testing.T) {
			f := newFake(t)
			f.writeDoc(t, fdoc{id: "OLD", created: t0.Add(-day(730)), text: text + tc.old})
			f.writeDoc(t, fdoc{id: "NEW", created: t0.Add(-day(5)), text: text + tc.new})
			if extra {
				for i, text := range []string{
					"The release notes list every deploy of the quarter",
					"Tokens for production live in a separate vault",
					"Staging is rebuilt from scratch each night",
					"The backup script copies the database at two",
					"Lunch orders go through the office chat",
					"The vault is sealed again after every restart",
				} {
					f.writeDoc(t, fdoc{id: fmt.Sprintf("X%d", i), created: t0.Add(-day(float64(20 + 10*i))), text: text})
				}
			}
			ix := mustOpen(t, f, opts(nil))
			for _, mode := range []string{ModeHybrid, ModeLexical, ModeVector} {
				for _, text := range []string{"deploy script staging token", "where does the deploy script read the staging token from"} {
					st, err := ix.SearchStages(Query{Text: text, Mode: mode, Now: t0})
					if err != nil {
						t.Fatal(err)
					}
					got := ids(st.Final)
					rank := map[string]int{}
					for i, id := range got {
						rank[id] = i + 1
					}
					if rank["NEW"] == 0 || rank["OLD"] == 0 || rank["NEW"] > rank["OLD"] {
						var why []string
						for _, h := range st.Final {
							why = append(why, fmt.Sprintf("%s %.4f %+v", h.ID, h.Score, h.Why))
						}
						t.Errorf("mode %s, %q: %v, want NEW before OLD\n%v", mode, text, got, why)
					}
				}
			}
		})
	}
}
