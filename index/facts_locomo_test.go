package index

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/internal/locomo"
)

// TestLoCoMoFacts measures facts as keys of their turns (facts.go) on
// LoCoMo's dev split, in one run:
//
//	MIRA_LOCOMO=/work/shared/bench/locomo go test ./index -run TestLoCoMoFacts -v
//
// The turns go into a store as TestLoCoMo writes them, each with the turn
// before it as the store's source gives it, and are searched
// (final ranking, turns only, as the benchmark scores). Then every line of
// observations.jsonl (the benchmark's own facts) is added as a fact of its
// conversation's scope with extracted_from naming its evidence turns,
// created an hour after the last of them, and the same questions are
// asked of the updated index: turns only, and of every kind (the facts
// take places in the top 10 then, and count as misses). Then the store is
// rebuilt, so that the built-in model is fitted on the facts as well, and
// asked again. MIRA_LOCOMO_FACT_WEIGHTS="lex/vec lex/vec ..." adds runs of
// the rebuilt store with other weights of a fact against its turn.
func TestLoCoMoFacts(t *testing.T) {
	turns, questions, dir := loadLoCoMo(t)
	obs, err := locomo.LoadObservations(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Each turn is indexed with the one before it, as the store's source
	// does (Doc.Context).
	f, end := locomoStore(t, turns)
	created := map[string]time.Time{}
	pos := map[string]int{}
	for _, tu := range turns {
		date, _ := tu.Time()
		session := tu.Conversation + "/" + tu.Date
		created[tu.ID] = date.Add(time.Duration(pos[session]) * 30 * time.Second)
		pos[session]++
	}
	type result struct {
		label string
		byCat map[int]*locomo.Metrics // 0: all questions
	}
	var results []result
	run := func(ix *Index, label string, kinds []string) {
		r := result{label, map[int]*locomo.Metrics{}}
		start := time.Now()
		for _, q := range questions {
			hits, err := ix.Search(Query{Text: q.Question, K: 10, Kinds: kinds, Scopes: []string{q.Conversation}, Now: end[q.Conversation].Add(24 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]string, 0, 10)
			for _, h := range hits[:min(10, len(hits))] {
				ids = append(ids, h.ID)
			}
			for _, c := range []int{0, q.Category} {
				if r.byCat[c] == nil {
					r.byCat[c] = &locomo.Metrics{}
				}
				r.byCat[c].Add(ids, q.Evidence)
			}
		}
		t.Logf("%s: %v per question", label, (time.Since(start) / time.Duration(len(questions))).Round(time.Microsecond))
		results = append(results, r)
	}
	open := func() *Index {
		ix := mustOpen(t, f, Options{})
		st := ix.LastUpdate()
		t.Logf("opened: %d docs, %d indexed, rebuilt %v, embedder %s, took %v", st.Docs, st.Indexed, st.Rebuilt, ix.meta.Embedder, st.Took.Round(time.Millisecond))
		return ix
	}
	ix := open()
	run(ix, "turns alone", nil)
	ix.Close()

	for i, o := range obs {
		var last time.Time
		for _, id := range o.Evidence {
			if c := created[id]; c.After(last) {
				last = c
			}
		}
		if last.IsZero() {
			continue // evidence not among the turns: not a fact of one
		}
		f.writeDoc(t, fdoc{id: fmt.Sprintf("OBS%05d", i), kind: "fact", scope: o.Conversation, created: last.Add(time.Hour),
			from: o.Evidence, text: o.Text})
	}
	ix = open()
	run(ix, "with facts (added), turns only", []string{"turn"})
	run(ix, "with facts (added), all kinds", nil)
	ix.Close()

	if _, err := Rebuild(f, Options{}); err != nil {
		t.Fatal(err)
	}
	ix = open()
	defer ix.Close()
	run(ix, "with facts (rebuilt), turns only", []string{"turn"})
	run(ix, "with facts (rebuilt), all kinds", nil)
	lw, vw := factLexWeight, factVecWeight
	defer func() { factLexWeight, factVecWeight = lw, vw }()
	for _, w := range strings.Fields(os.Getenv("MIRA_LOCOMO_FACT_WEIGHTS")) {
		if _, err := fmt.Sscanf(w, "%g/%g", &factLexWeight, &factVecWeight); err != nil {
			t.Fatalf("MIRA_LOCOMO_FACT_WEIGHTS: %q: %v", w, err)
		}
		run(ix, fmt.Sprintf("rebuilt, turns only, weights %g/%g", factLexWeight, factVecWeight), []string{"turn"})
	}
	factLexWeight, factVecWeight = 0, 0
	run(ix, "rebuilt, turns only, facts not keys (weights 0/0)", []string{"turn"})

	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%-52s R@1    R@5    R@10   MRR\n", "")
	for c := 0; c <= 5; c++ {
		name := "all"
		if c > 0 {
			name = fmt.Sprintf("category %d", c)
		}
		fmt.Fprintf(&sb, "%s (n=%d)\n", name, results[0].byCat[c].N)
		for _, r := range results {
			m := r.byCat[c]
			r1, _ := m.At(0)
			r5, _ := m.At(1)
			r10, _ := m.At(2)
			fmt.Fprintf(&sb, "  %-50s %.3f  %.3f  %.3f  %.3f\n", r.label, r1, r5, r10, m.MRR())
		}
	}
	t.Log(sb.String())
}
