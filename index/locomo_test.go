package index

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/internal/locomo"
)

// The LoCoMo turn-retrieval evaluation of the whole index, stage by stage.
// It runs only when MIRA_LOCOMO names the benchmark directory:
//
//	MIRA_LOCOMO=/work/shared/bench/locomo go test ./index -run TestLoCoMo -v
//
// The dev turns go into one store through the fake source: one entry per
// turn, scope = conversation, text "Speaker: text", created at the session's
// date plus half a minute per turn, so the built-in model is fitted on all
// six conversations at once. MIRA_LOCOMO_SPLIT=1 builds one store per
// conversation instead (each with its own model). Every question searches
// its conversation's scope, with recency measured from a day after the
// conversation's last turn. Scores are computed as score.py computes them:
// recall@k is the share of the question's evidence ids among the first k
// distinct ids, averaged over questions; hit@k is 1 when any is.
// MIRA_LOCOMO_RESULTS=DIR writes each stage's rankings in score.py's
// results format, to check the numbers against it.

// locomoStore writes turns as entries of a fake store and returns it with
// the moment after each conversation's last turn.
func locomoStore(t testing.TB, turns []locomo.Turn) (*fakeSource, map[string]time.Time) {
	return locomoStoreOf(t, turns, true)
}

// locomoStoreOf is locomoStore, the turns without the turn before them
// unless withContext.
func locomoStoreOf(t testing.TB, turns []locomo.Turn, withContext bool) (*fakeSource, map[string]time.Time) {
	f := newFake(t)
	end := map[string]time.Time{}
	pos := map[string]int{}
	prev := map[string]string{} // the conversation's turn before, as a store gives it (Doc.Context)
	for _, tu := range turns {
		date, err := tu.Time()
		if err != nil {
			t.Fatalf("%s: date %q: %v", tu.ID, tu.Date, err)
		}
		session := tu.Conversation + "/" + tu.Date
		created := date.Add(time.Duration(pos[session]) * 30 * time.Second)
		pos[session]++
		text := tu.Speaker + ": " + tu.Text
		f.writeDoc(t, fdoc{id: tu.ID, kind: "turn", scope: tu.Conversation, created: created, text: text, context: prev[tu.Conversation]})
		if withContext {
			prev[tu.Conversation] = text
		}
		if created.After(end[tu.Conversation]) {
			end[tu.Conversation] = created
		}
	}
	return f, end
}

func TestLoCoMo(t *testing.T) {
	turns, questions, _ := loadLoCoMo(t)
	groups := [][]locomo.Turn{turns}
	if os.Getenv("MIRA_LOCOMO_SPLIT") != "" {
		groups = nil
		for _, tu := range turns {
			if len(groups) == 0 || groups[len(groups)-1][0].Conversation != tu.Conversation {
				groups = append(groups, nil)
			}
			groups[len(groups)-1] = append(groups[len(groups)-1], tu)
		}
	}
	stageNames := []string{"lexical", "vector", "fused", "ranked", "final", "rrf fused", "rrf final", "lexical mode"}
	overall := make([]locomo.Metrics, len(stageNames))
	byCat := make([]map[int]*locomo.Metrics, len(stageNames))
	rankings := make([]map[int][]string, len(stageNames))
	for i := range byCat {
		byCat[i], rankings[i] = map[int]*locomo.Metrics{}, map[int][]string{}
	}
	// MIRA_LOCOMO_LAMBDA sets MMR's λ, to see what it costs.
	ranking := DefaultRanking
	if l := os.Getenv("MIRA_LOCOMO_LAMBDA"); l != "" {
		if _, err := fmt.Sscan(l, &ranking.MMRLambda); err != nil {
			t.Fatalf("MIRA_LOCOMO_LAMBDA: %v", err)
		}
	}
	// MIRA_LOCOMO_DATEBONUS sets the date bonus, to see what it buys.
	if d := os.Getenv("MIRA_LOCOMO_DATEBONUS"); d != "" {
		if _, err := fmt.Sscan(d, &ranking.DateBonus); err != nil {
			t.Fatalf("MIRA_LOCOMO_DATEBONUS: %v", err)
		}
	}
	var took time.Duration
	for _, group := range groups {
		f, end := locomoStore(t, group)
		start := time.Now()
		ix := mustOpen(t, f, Options{})
		st := ix.LastUpdate()
		t.Logf("%d turns: built in %v, embedder %s, %d vectors", len(group), time.Since(start).Round(time.Millisecond), ix.meta.Embedder, st.Vectors)
		start = time.Now()
		for qid, q := range questions {
			if _, ok := end[q.Conversation]; !ok {
				continue
			}
			base := Query{Text: q.Question, K: 10, Scopes: []string{q.Conversation}, Now: end[q.Conversation].Add(24 * time.Hour)}
			w, err := ix.stages(base, ranking)
			if err != nil {
				t.Fatal(err)
			}
			rq := base
			rq.Fusion = FusionRRF
			r, err := ix.stages(rq, ranking)
			if err != nil {
				t.Fatal(err)
			}
			lq := base
			lq.Mode = ModeLexical
			l, err := ix.Search(lq)
			if err != nil {
				t.Fatal(err)
			}
			for i, hits := range [][]Hit{w.Lexical, w.Vector, w.Fused, w.Ranked, w.Final, r.Fused, r.Final, l} {
				ids := make([]string, 0, 10)
				for _, h := range hits[:min(10, len(hits))] {
					ids = append(ids, h.ID)
				}
				overall[i].Add(ids, q.Evidence)
				if byCat[i][q.Category] == nil {
					byCat[i][q.Category] = &locomo.Metrics{}
				}
				byCat[i][q.Category].Add(ids, q.Evidence)
				rankings[i][qid] = ids
			}
		}
		took += time.Since(start)
		ix.Close()
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%d questions, %v per question (3 searches)\n", overall[0].N, (took / time.Duration(max(overall[0].N, 1))).Round(time.Microsecond))
	fmt.Fprintf(&sb, "%-13s R@1    R@5    R@10    hit@1  hit@5  hit@10   MRR\n", "stage")
	for i, name := range stageNames {
		fmt.Fprintf(&sb, "%-13s %s\n", name, overall[i])
	}
	for cat := 1; cat <= 5; cat++ {
		fmt.Fprintf(&sb, "category %d (n=%d)\n", cat, byCat[0][cat].N)
		for i, name := range stageNames {
			fmt.Fprintf(&sb, "  %-11s %s\n", name, *byCat[i][cat])
		}
	}
	t.Log(sb.String())
	if out := os.Getenv("MIRA_LOCOMO_RESULTS"); out != "" {
		for i, name := range stageNames {
			var b strings.Builder
			for qid := range questions {
				line, _ := json.Marshal(map[string]any{"qid": qid, "ids": rankings[i][qid]})
				b.Write(line)
				b.WriteByte('\n')
			}
			if err := os.WriteFile(filepath.Join(out, strings.ReplaceAll(name, " ", "-")+".jsonl"), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
