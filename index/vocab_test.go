package index

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFamilies: a query word that names a kind of software finds the
// memories that name a product of that kind, below those that say the
// word itself; a product's name does not find its kind word or its
// siblings; words that are not products are not members.
func TestFamilies(t *testing.T) {
	f := newFake(t)
	for _, d := range []fdoc{
		{id: "A", kind: "decision", created: t0.Add(-day(1)), text: "We chose PostgreSQL"},
		{id: "B", kind: "fact", created: t0.Add(-day(1)), text: "The staging database runs on port 5432"},
		{id: "C", kind: "note", created: t0.Add(-day(1)), text: "MySQL was too slow for the reports"},
		{id: "D", kind: "note", created: t0.Add(-day(1)), text: "Lunch with Cassandra on Friday"},
		{id: "E", kind: "note", created: t0.Add(-day(1)), text: "The service is written in Python"},
		{id: "F", kind: "note", created: t0.Add(-day(1)), text: "Swift birds nest under the roof"},
		{id: "G", kind: "note", created: t0.Add(-day(1)), text: "Deploys go to AWS through Jenkins"},
	} {
		f.writeDoc(t, d)
	}
	ix := mustOpen(t, f, opts(nil))
	for _, tc := range []struct {
		query, mode string
		want        []string // in order
	}{
		{"database", ModeLexical, []string{"B", "A", "C"}},
		{"databases", ModeLexical, []string{"B", "A", "C"}},
		{"db", ModeLexical, []string{"B", "A", "C"}},
		{"postgres", ModeLexical, []string{"A"}},
		{"mysql", ModeLexical, []string{"C"}},
		{"cassandra", ModeLexical, []string{"D"}},
		{"language", ModeLexical, []string{"E"}},
		{"cloud", ModeLexical, []string{"G"}},
		{"ci", ModeLexical, []string{"G"}},
		{"birds", ModeLexical, []string{"F"}},
		{"xylophone", ModeLexical, nil},
	} {
		hits, err := ix.Search(Query{Text: tc.query, Mode: tc.mode, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.ID)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (%s) ids (-want +got):\n%s", tc.query, tc.mode, diff)
		}
	}
	// Hybrid: the members the store names move the query's vector toward
	// them, and the decision that names no database is found.
	hits, err := ix.Search(Query{Text: "database", Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, h := range hits {
		found[h.ID] = true
	}
	if !found["A"] || !found["B"] || !found["C"] || len(hits) == 0 || hits[0].ID != "B" {
		t.Errorf("hybrid database: %v, want B first, A and C found", hits)
	}
}

// TestFamilyTexts: the vector side embeds only the members the store's
// live memories name, one text per family the query names.
func TestFamilyTexts(t *testing.T) {
	f := newFake(t)
	for _, d := range []fdoc{
		{id: "A", created: t0, text: "We chose PostgreSQL, not MySQL"},
		{id: "B", created: t0, text: "The cache is Redis"},
		{id: "C", created: t0, text: "Python it is"},
	} {
		f.writeDoc(t, d)
	}
	ix := mustOpen(t, f, opts(nil))
	vs, done, err := ix.rowsFor()
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"which database", []string{"postgresql mysql redis"}},
		{"cache and language", []string{"redis", "python"}},
		{"postgres", nil},
		{"framework", nil}, // no member in the store
		// The words of choosing search the text only.
		{"which one did we pick", nil},
	} {
		if diff := cmp.Diff(tc.want, vs.familyTexts(tc.query)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.query, diff)
		}
	}
}

// TestDecisionBonus: a question about what was chosen lifts the decision
// over a note that says the same and is newer; other questions do not.
func TestDecisionBonus(t *testing.T) {
	f := newFake(t)
	for _, d := range []fdoc{
		{id: "A", kind: "decision", created: t0.Add(-day(20)), text: "Kafka carries the order events"},
		{id: "B", kind: "note", created: t0.Add(-day(1)), text: "Kafka carries the order events"},
	} {
		f.writeDoc(t, d)
	}
	ix := mustOpen(t, f, opts(nil))
	for _, mode := range []string{ModeLexical, ModeHybrid} {
		for _, tc := range []struct {
			query    string
			first    string
			decision float64
		}{
			{"which queue did we pick for order events", "A", DefaultRanking.DecisionBonus},
			{"which queue for order events did we go with", "A", DefaultRanking.DecisionBonus},
			{"queue for order events", "B", 0},
		} {
			hits, err := ix.Search(Query{Text: tc.query, Mode: mode, Now: t0})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 2 || hits[0].ID != tc.first {
				t.Errorf("%s %q: %v, want %s first", mode, tc.query, hits, tc.first)
				continue
			}
			for _, h := range hits {
				want := 0.0
				if h.ID == "A" {
					want = tc.decision
				}
				if h.Why.Decision != want {
					t.Errorf("%s %q: %s has decision bonus %v, want %v", mode, tc.query, h.ID, h.Why.Decision, want)
				}
			}
		}
	}
	// Turned off, the newer note wins.
	r := DefaultRanking
	r.DecisionBonus = 0
	hits, err := ix.Search(Query{Text: "which queue did we pick for order events", Mode: ModeLexical, Now: t0, Ranking: &r})
	if err != nil || len(hits) != 2 || hits[0].ID != "B" {
		t.Errorf("without the bonus: %v, %v; want B first", hits, err)
	}
}

func TestAsksForDecision(t *testing.T) {
	for q, want := range map[string]bool{
		"which database did we pick":           true,
		"what did we decide about caching":     true,
		"why did we choose Go":                 true,
		"Which queue did we go with?":          true,
		"what did we settle on for CI":         true,
		"the decision on logging":              true,
		"which database":                       false,
		"where does the staging database run":  false,
		"What did Caroline say about her job?": false,
		"":                                     false,
		"let's go to the beach with the dog":   false,
	} {
		if got := asksForDecision(q); got != want {
			t.Errorf("asksForDecision(%q) = %v, want %v", q, got, want)
		}
	}
}
