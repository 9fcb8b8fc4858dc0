package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/mem"
)

// evalQuestion is one line of a --eval file.
type evalQuestion struct {
	ID     any      `json:"id,omitempty"`
	Query  string   `json:"query"`
	Scope  string   `json:"scope,omitempty"`
	Expect []string `json:"expect,omitempty"`      // memory ids
	Tags   []string `json:"expect_tags,omitempty"` // or tags: a memory carrying one of them counts for it
}

// evalKs are the cut-offs reported.
var evalKs = []int{1, 5, 10}

// evalStats accumulates recall@k, hit@k and MRR.
type evalStats struct {
	N      int
	Recall map[int]float64
	Hit    map[int]float64
	MRR    float64
}

func newEvalStats() *evalStats {
	return &evalStats{Recall: map[int]float64{}, Hit: map[int]float64{}}
}

// add scores one ranked list: ranked[i] holds the expectation keys the i-th
// result satisfies.
func (s *evalStats) add(ranked [][]string, want []string) {
	s.N++
	if len(want) == 0 {
		return
	}
	found := map[string]bool{}
	first := 0
	for i, keys := range ranked {
		for _, k := range keys {
			if slices.Contains(want, k) && !found[k] {
				found[k] = true
				if first == 0 {
					first = i + 1
				}
			}
		}
		for _, k := range evalKs {
			if i+1 == k {
				s.Recall[k] += float64(len(found)) / float64(len(want))
				if len(found) > 0 {
					s.Hit[k]++
				}
			}
		}
	}
	for _, k := range evalKs { // lists shorter than k
		if len(ranked) < k {
			s.Recall[k] += float64(len(found)) / float64(len(want))
			if len(found) > 0 {
				s.Hit[k]++
			}
		}
	}
	if first > 0 {
		s.MRR += 1 / float64(first)
	}
}

// evalReport is what --eval prints (JSON), averaged over questions.
type evalReport struct {
	Questions int                `json:"questions"`
	Recall    map[string]float64 `json:"recall"`
	Hit       map[string]float64 `json:"hit"`
	MRR       float64            `json:"mrr"`
	Stage     string             `json:"stage"`
	Seconds   float64            `json:"seconds"`
}

func (s *evalStats) report(stage string, d time.Duration) evalReport {
	r := evalReport{Questions: s.N, Recall: map[string]float64{}, Hit: map[string]float64{}, Stage: stage, Seconds: round(d.Seconds(), 3)}
	if s.N == 0 {
		return r
	}
	for _, k := range evalKs {
		r.Recall[fmt.Sprintf("@%d", k)] = round(s.Recall[k]/float64(s.N), 4)
		r.Hit[fmt.Sprintf("@%d", k)] = round(s.Hit[k]/float64(s.N), 4)
	}
	r.MRR = round(s.MRR/float64(s.N), 4)
	return r
}

// runEval answers every question of the file with the recall engine and
// prints the scores. With results != "", the ranked ids of each question are
// written there as {"qid":N,"ids":[...]} lines.
func (c *RecallCmd) runEval(o *IO, ix *index.Index, st *mem.Store, q index.Query, w *warnOnce) error {
	f, err := os.Open(c.Eval)
	if err != nil {
		return usagef("--eval: %v", err)
	}
	defer f.Close()
	var qs []evalQuestion
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var eq evalQuestion
		if err := json.Unmarshal(sc.Bytes(), &eq); err != nil {
			return &InputError{Name: c.Eval, Line: line, Err: fmt.Errorf("invalid JSON: %w", jsonReason(err))}
		}
		if eq.Query == "" {
			return &InputError{Name: c.Eval, Line: line, Err: errors.New(`field "query" is missing`)}
		}
		qs = append(qs, eq)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	var out io.Writer = io.Discard
	var rw *recordWriter
	if c.EvalResults != "" {
		rf, err := os.Create(c.EvalResults)
		if err != nil {
			return err
		}
		defer rf.Close()
		out = rf
	}
	rw = newRecordWriter(out)
	// Tags of the memories, read lazily, for expectations given as tags.
	tagCache := map[string][]string{}
	tagsOf := func(path string) []string {
		if t, ok := tagCache[path]; ok {
			return t
		}
		e, err := st.Read(path)
		if err != nil {
			w.warn(path, err)
			return nil
		}
		tagCache[path] = e.Tags
		return e.Tags
	}
	stats := newEvalStats()
	start := time.Now()
	for i, eq := range qs {
		qq := q
		qq.Text = eq.Query
		if eq.Scope != "" {
			qq.Scopes = []string{eq.Scope}
		}
		hits, err := ix.Search(qq)
		if err != nil {
			return fmt.Errorf("question %d: %w", i, err)
		}
		ranked := make([][]string, len(hits))
		ids := make([]string, len(hits))
		for j, h := range hits {
			ids[j] = h.ID
			keys := []string{h.ID}
			if len(eq.Tags) > 0 {
				keys = append(keys, tagsOf(h.Path)...)
			}
			ranked[j] = keys
		}
		stats.add(ranked, append(append([]string{}, eq.Expect...), eq.Tags...))
		qid := eq.ID
		if qid == nil {
			qid = i
		}
		if err := rw.Write(map[string]any{"qid": qid, "ids": ids}); err != nil {
			return err
		}
	}
	if err := rw.Flush(); err != nil {
		return err
	}
	rep := stats.report("lexical", time.Since(start))
	if !o.textOutput(c.Output) {
		ow := newRecordWriter(o.Out)
		ow.Write(rep)
		return ow.Flush()
	}
	fmt.Fprintf(o.Out, "%d questions, %s, %.2fs\n", rep.Questions, rep.Stage, rep.Seconds)
	fmt.Fprintf(o.Out, "         @1      @5      @10\n")
	fmt.Fprintf(o.Out, "recall   %.4f  %.4f  %.4f\n", rep.Recall["@1"], rep.Recall["@5"], rep.Recall["@10"])
	fmt.Fprintf(o.Out, "hit      %.4f  %.4f  %.4f\n", rep.Hit["@1"], rep.Hit["@5"], rep.Hit["@10"])
	fmt.Fprintf(o.Out, "MRR      %.4f\n", rep.MRR)
	return nil
}
