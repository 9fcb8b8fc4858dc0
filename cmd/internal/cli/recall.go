package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/miramem/mira"
)

// RecallCmd is mira-recall.
type RecallCmd struct {
	Common
	Query   []string `arg:"" optional:"" help:"What to look for, in plain words. Without it, the newest memories matching the filters."`
	K       int      `short:"k" help:"How many memories to return." default:"${recall_k}"`
	Kind    []string `help:"Only these kinds (repeatable or comma-separated). Tool calls and results stored as turns are left out unless turn is named." sep:","`
	Scope   string   `short:"s" help:"Search this scope and global (default: every scope, favouring the current project)."`
	Project string   `help:"Favour this project (default: detected from the working directory, or $MIRA_PROJECT)."`
	Since   string   `help:"Only memories created at or after this time: RFC 3339, a date, or a duration ago such as 72h or 30d." placeholder:"WHEN"`
	Tag     []string `short:"t" help:"Only memories with one of these tags (repeatable or comma-separated)." sep:","`
	Mode    string   `help:"Retrieval: lexical (BM25), vector (embeddings) or hybrid (both, fused)." enum:"lexical,vector,hybrid" default:"${recall_mode}"`
	Explain bool     `help:"Show each stage's part of every score: bm25, vector, fusion, recency, project, date and decision bonuses, MMR penalty, rerank."`

	RecencyWeight *float64 `name:"recency-weight" help:"Weight w of recency in score = (1−w)·fused + w·recency, from 0 to 1 (default ${recall_recency_weight}, recall.recency_weight)." placeholder:"W"`
	MMRLambda     *float64 `name:"mmr-lambda" help:"MMR's λ, above 0 and at most 1: lower pushes near-copies further down, 1 turns MMR off (default ${recall_mmr_lambda}, recall.mmr_lambda)." placeholder:"L"`
	MinScore      *float64 `name:"min-score" help:"Leave out memories scoring below this, at least 0 (default ${recall_min_score}, recall.min_score; 0 keeps all)." placeholder:"S"`

	Eval        string `help:"Measure retrieval: read JSONL questions ({\"query\",\"scope\",\"expect\":[ids] or \"expect_tags\":[tags]}) and print recall@1/5/10, hit@k and MRR." placeholder:"FILE" type:"path"`
	EvalResults string `name:"eval-results" help:"With --eval, write each question's ranked ids as {\"qid\",\"ids\"} JSONL to FILE." placeholder:"FILE" type:"path"`
}

// Recall is the main of mira-recall.
func Recall(args []string, o *IO) int {
	return Main("mira-recall", "Find memories: hybrid retrieval (BM25 and vector candidates, fused, weighted by recency, de-duplicated by MMR), as JSONL records.", &RecallCmd{}, args, o)
}

func (c *RecallCmd) run(ctx context.Context, o *IO) error {
	now := time.Now()
	q := mira.Query{Text: strings.Join(c.Query, " "), K: c.K, Kinds: c.Kind, Tags: c.Tag, Now: now, Mode: c.Mode, Scope: c.Scope,
		RecencyWeight: c.RecencyWeight, MMRLambda: c.MMRLambda, MinScore: c.MinScore}
	if c.K == 0 {
		q.K = -1 // for the library 0 is the configured default; -k 0 asks for nothing
	}
	if err := q.Check(); err != nil {
		return asFlag(err, recallFlags)
	}
	if c.Since != "" {
		t, err := mira.ParseSince(c.Since, now)
		if err != nil {
			return usagef("--since: %v", err)
		}
		q.Since = t
	}
	m, err := c.openWith(ctx, o, "mira-recall", project(o, c.Project), openOptions{existing: true})
	if errors.Is(err, mira.ErrNoStore) && c.Eval == "" {
		o.Warnf("%v yet: nothing to recall (mira-remember creates it)", err)
		return nil // an empty result, as from an empty store
	}
	if err != nil {
		return err
	}
	defer m.Close()
	if c.Eval != "" {
		return c.runEval(ctx, o, m, q)
	}
	recs, err := m.Recall(ctx, q)
	if err != nil {
		return err
	}
	if len(recs) == 0 && o.textOutput(c.Output) {
		c.noMatch(ctx, o, m, q)
	}
	return writeRecords(o, c.Output, recs, c.Explain)
}

// noMatch tells a person at a terminal that nothing matched, and what
// might help; a pipe gets no records and no words, as from an empty store.
func (c *RecallCmd) noMatch(ctx context.Context, o *IO, m *mira.Memory, q mira.Query) {
	what := "no memory matches"
	if q.Text != "" {
		what += " " + strconv.Quote(q.Text)
	} else {
		what += " the filters"
	}
	s, err := m.IndexStatus(ctx)
	if err != nil {
		o.Warnf("%s", what)
		return
	}
	n := "1 memory"
	if s.Entries != 1 {
		n = fmt.Sprintf("%d memories", s.Entries)
	}
	o.Warnf("%s (%s in the store)", what, n)
	filtered := len(q.Kinds) > 0 || len(q.Tags) > 0 || q.Scope != "" || !q.Since.IsZero()
	switch {
	case s.Entries == 0:
		o.Warnf("hint: the store is empty; mira-remember adds memories")
	case filtered:
		o.Warnf("hint: --kind, --tag, --scope and --since narrow the search; try without them")
	case q.Text != "" && strings.HasPrefix(s.Embedder, "mira-"):
		o.Warnf("hint: the built-in embedder knows only the words of the store's own memories: try theirs, or MIRA_EMBED=openai:<model> for a model that knows the world")
	}
}
