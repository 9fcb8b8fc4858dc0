package mira

import (
	"errors"
	"strings"
	"testing"

	"github.com/miramem/mira/mem"
)

// TestRecallSettings: the configuration's recall settings are checked as
// it is read, a query's settings beat them, and --explain's formula shows
// the weights used.
func TestRecallSettings(t *testing.T) {
	for _, bad := range []string{
		"recall: {recency_weight: 1.5}", "recall: {recency_weight: -0.1}", "recall: {recency_days: 0}",
		"recall: {mmr_lambda: 0}", "recall: {mmr_lambda: 1.01}", "recall: {min_score: -0.5}",
	} {
		if _, err := ParseConfig([]byte(bad)); err == nil || !strings.Contains(err.Error(), "recall.") {
			t.Errorf("%s: err %v, want one naming the key", bad, err)
		}
	}
	cfg, err := ParseConfig([]byte("recall: {recency_weight: 0.5, recency_days: 7, mmr_lambda: 1, min_score: 0.1}"))
	if err != nil {
		t.Fatal(err)
	}
	if *cfg.Recall.RecencyWeight != 0.5 || *cfg.Recall.RecencyDays != 7 || *cfg.Recall.MMRLambda != 1 || *cfg.Recall.MinScore != 0.1 {
		t.Errorf("parsed %+v", cfg.Recall)
	}

	m := open(t, false)
	ctx := t.Context()
	if _, err := m.Remember(ctx, []*mem.Entry{{Body: "the cache is Redis"}, {Body: "the queue is Kafka, next to the cache"}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	recs, err := m.Recall(ctx, Query{Text: "cache"})
	if err != nil || len(recs) != 2 {
		t.Fatalf("recall: %v, %v", recs, err)
	}
	if s := ExplainText(recs[0].Why); !strings.Contains(s, "(score = 0.8·fused + 0.2·recency") || strings.Contains(s, "weight") {
		t.Errorf("default explain: %s", s)
	}
	recs, err = m.Recall(ctx, Query{Text: "cache", RecencyWeight: f(0.35)})
	if err != nil || len(recs) != 2 {
		t.Fatalf("recall: %v, %v", recs, err)
	}
	if s := ExplainText(recs[0].Why); !strings.Contains(s, "(score = 0.65·fused + 0.35·recency") {
		t.Errorf("explain with recency weight 0.35: %s", s)
	}
	recs, err = m.Recall(ctx, Query{Text: "cache", MinScore: f(*recs[0].Score - 0.0001)})
	if err != nil || len(recs) != 1 {
		t.Errorf("min score: %d records, %v; want 1", len(recs), err)
	}
	// The configuration's settings apply, and a query's beat them.
	m.cfg.Recall.MinScore = f(5)
	if recs, err := m.Recall(ctx, Query{Text: "cache"}); err != nil || len(recs) != 0 {
		t.Errorf("config min score 5: %d records, %v", len(recs), err)
	}
	if recs, err := m.Recall(ctx, Query{Text: "cache", MinScore: f(0)}); err != nil || len(recs) != 2 {
		t.Errorf("query min score 0 over config 5: %d records, %v", len(recs), err)
	}
	m.cfg.Recall.MinScore = nil
	_, err = m.Recall(ctx, Query{Text: "cache", MMRLambda: f(0)})
	var inv *InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "mmr_lambda") {
		t.Errorf("mmr_lambda 0: %v, want an invalid-input error naming it", err)
	}
}
