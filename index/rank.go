package index

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Candidate is one document found by a retriever, before ranking.
type Candidate struct {
	ID, Path  string
	Project   string    // the entry's project, for the project bonus
	BM25      float64   // the retriever's raw score; 0 when there was no query text
	CreatedAt time.Time // zero when unknown: no recency
}

// Hit is one ranked result.
type Hit struct {
	ID, Path string
	Score    float64
	Why      Why
}

// Why keeps every part of a hit's score so that --explain can show them.
type Why struct {
	// BM25 is bleve's raw score: the sum over the query's terms, times
	// the share of the terms the entry matched.
	BM25 float64 `json:"bm25"`
	// Relevance is BM25 divided by the best BM25 among this query's
	// candidates.
	Relevance float64 `json:"relevance"`
	Recency   float64 `json:"recency"` // exp(-age in days / Ranking.RecencyDays)
	Project   float64 `json:"project"` // the project bonus: 0 or Ranking.ProjectBonus
	Rank      int     `json:"rank"`    // 1-based position in the result
}

// Ranking holds the weights of the score
//
//	score = Relevance·relevance + Recency·recency + project bonus
//
// where relevance is BM25 normalised by the best BM25 of the query's
// candidates, so it lies in [0, 1] whatever the corpus, and recency decays
// exponentially with the entry's age. A query without text has no
// relevance: its score is recency alone (plus the bonus).
type Ranking struct {
	Relevance    float64 // weight of the normalised BM25 score
	Recency      float64 // weight of recency
	RecencyDays  float64 // e-folding age of recency, in days
	ProjectBonus float64 // added when the entry's project is the query's
}

// DefaultRanking is the ranking Search uses. The project bonus of 0.05 is
// small on purpose: it reorders entries of similar relevance and age in
// favour of the current project (a twentieth of a perfect match, or the
// recency difference between entries about eight days apart when young)
// but never lifts an unrelated entry over a good match.
var DefaultRanking = Ranking{Relevance: 0.8, Recency: 0.2, RecencyDays: 30, ProjectBonus: 0.05}

// Recency is exp(-age/days) for an entry created at created, seen at now;
// 1 for an entry from now or the future, 0 for an unknown creation time.
func Recency(created, now time.Time, days float64) float64 {
	if created.IsZero() {
		return 0
	}
	age := now.Sub(created).Hours() / 24
	if age < 0 {
		age = 0
	}
	return math.Exp(-age / days)
}

// Rank scores candidates, sorts them by score (ties: newer first, then by
// id) and returns at most k (all when k <= 0). The candidates' slice is not
// modified.
func (r Ranking) Rank(cands []Candidate, project string, now time.Time, k int) []Hit {
	best := 0.0
	for _, c := range cands {
		best = max(best, c.BM25)
	}
	type scored struct {
		Hit
		created time.Time
	}
	all := make([]scored, len(cands))
	for i, c := range cands {
		w := Why{BM25: c.BM25, Recency: Recency(c.CreatedAt, now, r.RecencyDays)}
		var score float64
		if best > 0 {
			w.Relevance = c.BM25 / best
			score = r.Relevance*w.Relevance + r.Recency*w.Recency
		} else {
			score = w.Recency
		}
		if project != "" && c.Project == project {
			w.Project = r.ProjectBonus
			score += w.Project
		}
		all[i] = scored{Hit{ID: c.ID, Path: c.Path, Score: score, Why: w}, c.CreatedAt}
	}
	slices.SortStableFunc(all, func(a, b scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := b.created.Compare(a.created); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Path, b.Path))
	})
	if k > 0 && len(all) > k {
		all = all[:k]
	}
	hits := make([]Hit, len(all))
	for i := range all {
		hits[i] = all[i].Hit
		hits[i].Why.Rank = i + 1
	}
	return hits
}
