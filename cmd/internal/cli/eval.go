package cli

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/miramem/mira"
)

// runEval answers every question of the --eval file with the recall engine
// and prints recall@k, hit@k and MRR for every stage (see mira.Evaluate).
// With --eval-results the final ranked ids of each question are written as
// {"qid":N,"ids":[...]} lines.
func (c *RecallCmd) runEval(ctx context.Context, o *IO, m *mira.Memory, q mira.Query) error {
	f, err := os.Open(c.Eval)
	if err != nil {
		return usagef("--eval: %v", err)
	}
	defer f.Close()
	var qs []mira.EvalQuestion
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var eq mira.EvalQuestion
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
	if c.EvalResults != "" {
		rf, err := os.Create(c.EvalResults)
		if err != nil {
			return err
		}
		defer rf.Close()
		out = rf
	}
	rw := newRecordWriter(out)
	start := time.Now()
	reps, err := m.Evaluate(ctx, qs, q, func(qid any, ids []string) error {
		return rw.Write(map[string]any{"qid": qid, "ids": ids})
	})
	if err != nil {
		return err
	}
	if err := rw.Flush(); err != nil {
		return err
	}
	took := time.Since(start)
	if !o.textOutput(c.Output) {
		ow := newRecordWriter(o.Out)
		for _, r := range reps {
			ow.Write(r)
		}
		return ow.Flush()
	}
	fmt.Fprintf(o.Out, "%d questions, k=%d, mode %s, %.2fs\n", len(qs), q.K, cmp.Or(q.Mode, "hybrid"), took.Seconds())
	fmt.Fprintf(o.Out, "%-9s %8s %8s %8s %8s %8s %8s %8s\n", "stage", "R@1", "R@5", "R@10", "hit@1", "hit@5", "hit@10", "MRR")
	for _, r := range reps {
		fmt.Fprintf(o.Out, "%-9s %8.4f %8.4f %8.4f %8.4f %8.4f %8.4f %8.4f\n", r.Stage,
			r.Recall["@1"], r.Recall["@5"], r.Recall["@10"], r.Hit["@1"], r.Hit["@5"], r.Hit["@10"], r.MRR)
	}
	return nil
}
