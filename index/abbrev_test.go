package index

import (
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestAbbreviations checks that a query word finds the other forms of its
// abbreviation group on the lexical side, and that other queries find what
// they found before.
func TestAbbreviations(t *testing.T) {
	f := newFake(t)
	for _, d := range []fdoc{
		// The tags are part of the text, as docOf makes it.
		{id: "A", kind: "decision", tags: []string{"db"}, created: t0.Add(-day(1)), text: "We chose PostgreSQL for JSONB\ndb"},
		{id: "B", kind: "note", created: t0.Add(-day(2)), text: "Deploys run on k8s"},
		{id: "C", kind: "note", created: t0.Add(-day(3)), text: "The Kubernetes cluster has three nodes"},
		{id: "D", kind: "note", created: t0.Add(-day(4)), text: "Lunch is at noon in the repo room"},
		{id: "E", kind: "note", created: t0.Add(-day(5)), text: "The repository moved to the new server at noon"},
	} {
		f.writeDoc(t, d)
	}
	ix := mustOpen(t, f, opts(nil))
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"which database did we pick", []string{"A"}},
		{"Which databases do we use?", []string{"A"}},
		{"postgres", []string{"A"}},
		{"pg", []string{"A"}},
		{"kubernetes", []string{"B", "C"}},
		{"k8s", []string{"B", "C"}},
		{"repositories", []string{"D", "E"}},
		{"lunch", []string{"D"}},
		{"noon", []string{"D", "E"}},
		{"xylophone", nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			hits, err := ix.Search(Query{Text: tc.query, Mode: ModeLexical, Now: t0})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.ID)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpandAbbreviations(t *testing.T) {
	a, err := registry.NewCache().AnalyzerNamed(en.AnalyzerName)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"which database did we pick", []string{"db"}},
		{"db", []string{"databas"}},
		{"the DB and its config", []string{"databas", "cfg", "configur"}},
		{"database db", nil},
		{"What did Caroline say about her new job?", nil},
		{"", nil},
	} {
		got := expandAbbreviations(a, tc.text)
		if !slices.Equal(got, tc.want) {
			t.Errorf("expandAbbreviations(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
