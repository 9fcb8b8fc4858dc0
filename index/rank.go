package index

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// Candidate is one document found by a retriever, before ranking.
type Candidate struct {
	ID, Path  string
	Project   string    // the entry's project, for the project bonus
	Kind      string    // the entry's kind, for the decision bonus
	BM25      float64   // the retriever's raw score; 0 when there was no query text
	CreatedAt time.Time // zero when unknown: no recency
	// mention is how close the days the entry mentions come to the
	// query's (mentionCloseness), for the date bonus.
	mention float64
	// vrow is the entry's row in the vector store plus one, found once
	// per query: 0 not looked up yet, -1 none.
	vrow int
}

// Hit is one ranked result.
type Hit struct {
	ID, Path string
	Score    float64
	Why      Why
}

// Why keeps every part of a hit's score so that --explain can show each
// stage: the two retrievers, their fusion, the recency weighting and the
// project bonus, and what MMR took off.
type Why struct {
	// BM25 is the raw score: the sum over the query's terms, times
	// the share of the terms the entry matched; 0 when the entry was not
	// a lexical candidate.
	BM25 float64 `json:"bm25"`
	// Relevance is the lexical side's normalised score: BM25 divided by
	// the best BM25 among the query's candidates in lexical mode, BM25
	// min–max normalised over the lexical candidates in hybrid mode.
	Relevance float64 `json:"relevance"`
	// Vector is the cosine similarity of the entry's vector and the
	// query's (also for entries found by words only); 0 without vectors.
	Vector float64 `json:"vector"`
	// Fused is the relevance the ranking weighs: the fusion of both sides
	// in hybrid mode (see Ranking), the normalised score of the one side
	// in the others.
	Fused float64 `json:"fused"`
	// FusionRank, LexicalRank and VectorRank are 1-based positions among
	// the candidates by fused score, by BM25 and by cosine; 0 means the
	// entry was not a candidate of that side.
	FusionRank  int     `json:"fusion_rank"`
	LexicalRank int     `json:"lexical_rank"`
	VectorRank  int     `json:"vector_rank"`
	Recency     float64 `json:"recency"` // exp(-age in days / Ranking.RecencyDays)
	Project     float64 `json:"project"` // the project bonus: 0 or Ranking.ProjectBonus
	// Date is the date bonus: up to Ranking.DateBonus for an entry created
	// on, or near, a day the query names, or whose text mentions such a
	// day relative to its creation ("yesterday", "last week").
	Date float64 `json:"date"`
	// Decision is the intent bonus: Ranking.DecisionBonus for a decision
	// when the query asks what was chosen, or a preference when it asks
	// what is preferred, else 0.
	Decision float64 `json:"decision"`
	// MMRPenalty is what maximal marginal relevance subtracted for the
	// entry's similarity to the hits ranked before it (Hit.Score is after
	// it).
	MMRPenalty float64 `json:"mmr_penalty"`
	Rank       int     `json:"rank"` // 1-based position in the result
}

// Ranking holds the weights of the score
//
//	score = Relevance·fused + Recency·recency + project bonus + date bonus + decision bonus − MMR penalty
//
// where fused is the query's relevance in [0, 1] whatever the corpus and
// the embedder, and recency decays exponentially with the entry's age. A
// query without text has no relevance: its score is recency alone (plus
// the bonus).
//
// In hybrid mode each side's candidates are min–max normalised over the
// query's candidates of that side (the best gets 1, the worst 0, over a
// range at least LexicalSpan·best BM25 or VectorSpan wide) and
// fused = LexicalShare·lexical + (1−LexicalShare)·vector, a side an entry
// is missing from counting 0; with Fusion "rrf" fused is instead the
// reciprocal-rank sum Σ 1/(RRFK + rank), min–max normalised. In lexical
// mode fused is BM25 divided by the best BM25, in vector mode the min–max
// normalised cosine.
//
// MMR then picks the hits one at a time: the candidate with the highest
// score − (1−λ)/λ · max(0, cosine with a hit already picked), λ =
// MMRLambda, cosines at or below MMRFloor counting 0. That is MMR's λ·relevance − (1−λ)·similarity divided by λ, so
// the score keeps its scale, and it never increases down the list.
type Ranking struct {
	Relevance    float64 // weight of the fused relevance
	Recency      float64 // weight of recency
	RecencyDays  float64 // e-folding age of recency, in days
	ProjectBonus float64 // added when the entry's project is the query's
	LexicalShare float64 // BM25's share in the weighted fusion
	RRFK         float64 // k of reciprocal-rank fusion
	MMRLambda    float64 // MMR's λ: 1 turns it off
	// MMRFloor is the cosine up to which two memories do not count as
	// redundant for MMR: a pair at or below it weighs 0, a pair above it
	// its cosine. Near-copies are pushed down as plain MMR pushes them;
	// memories that only share a topic are left alone. Without it,
	// conversation turns (embedded with their neighbours as context, so
	// turns about one thing share much of their vector, and questions
	// often need several of them) push each other out: on LoCoMo every
	// floor below 0.9 lost recall (TestLoCoMo; docs/performance.md), and
	// the test with five paraphrases of one memory passes at 0.9.
	MMRFloor float64
	// MinCosine is the cosine a vector candidate must exceed, so that a
	// store of unrelated entries answers nothing rather than its least
	// unrelated ones. Unrelated texts are not orthogonal; 0.1 leaves out
	// most of the cosines between unrelated LoCoMo texts and few between
	// a question and its evidence, which hardly ever rank in the top 30
	// (docs/performance.md).
	MinCosine float64
	// Feedback is how far a hybrid query's vector moves toward the vector
	// of the best fused hit before the vector candidates are scored again
	// and fused anew (pseudo-relevance feedback, Rocchio's with one
	// document). The hit that both retrievers put first is a good
	// example of what the question is about, in the store's own words:
	// its neighbours in the embedding space (a later turn on the same
	// subject, the same fact said another way) come up. In vector mode
	// there is no such agreement, and the feedback hurts. On LoCoMo, any
	// weight from 0.15 to 0.5 toward the best hit alone raised recall@5
	// and @10 by about a point (0.3 among the best), more hits lowered
	// recall@1, and moving the BM25 query as well lost recall (TestLoCoMo;
	// docs/performance.md). 0 turns it off.
	Feedback float64
	// DateBonus is added to the score of an entry created on a day the
	// query names ("what did Maria start on 3 June, 2023?", "decisions of
	// 2026-03-02"), in a month it names without a day ("in May 2023"), or
	// in a time it names relative to the query's Now ("yesterday", "3 days
	// ago", "last week", "this month"), falling linearly to 0 at
	// DateWindow days outside; the entries of
	// that stretch that match the query's words are candidates even when
	// their BM25 alone would not make them one. A memory is stamped with
	// when it was made, and a question that names a day or a month asks
	// about that time or the days around it ("the week before", "on 23
	// May" for something told on 27 May). On LoCoMo, recall rose with the
	// bonus up to 0.3 and little beyond (TestLoCoMo; docs/performance.md).
	// 0.3 lets the time decide among comparable matches
	// without overriding relevance: an entry of that time needs fused
	// relevance within 0.375 of the best other one. A year alone is too
	// wide to favour.
	DateBonus  float64
	DateWindow float64 // days
	// DecisionBonus is added to the score of a memory of kind decision
	// when the query asks what was picked, chosen or decided ("which
	// database did we pick", "what did we decide about caching", "why
	// did we choose Go", "which queue did we go with"), and of kind
	// preference when it asks what is preferred ("which editor do I
	// prefer", "how do I like my coffee"; readIntent): such a question
	// is answered by the decision or the preference, and a fact or a
	// note that shares more of its words ("the staging database runs
	// on…") is not what it asks. 0.3, the date bonus, lets the decision
	// or preference win among comparable matches as the date bonus does
	// for a time: it needs fused relevance within 0.375 of the best other
	// memory. It is often an old memory against a newer note that shares
	// its words, and recency alone gives a 5-day-old memory 0.15 over an
	// 80-day-old one; with 0.2, a labelled set of 30 agent questions
	// (TestIntentLabelled) found 25 (words only) and 24 (hybrid) first,
	// with 0.3 26 and 25, with none 24 and 24. Other queries, and stores
	// without decisions or preferences (LoCoMo's conversation turns),
	// rank as before.
	DecisionBonus float64
	// LexicalSpan and VectorSpan are the narrowest ranges hybrid mode's
	// min–max normalisation stretches to [0, 1]: LexicalSpan times the
	// best BM25, VectorSpan in cosine. A narrower spread is scaled as if
	// it were that wide, so candidates that differ by a hair stay a hair
	// apart and recency decides between them. Plain min–max gave the
	// better of two memories that differ by one word the query does not
	// ask for (cosines 0.862 and 0.898) 1 and the other 0: half of the
	// fused relevance, 0.4 of the score, more than the 0.17 of recency
	// between a five-day-old and a two-year-old memory. Over LoCoMo's
	// 30-odd candidates per side the spread is wider, and recall hardly
	// moves; anchoring each side at 0 instead lost recall (TestLoCoMo;
	// docs/performance.md).
	LexicalSpan, VectorSpan float64
	// MinScore drops the hits whose score (after MMR) is below it: a
	// store with nothing good to say answers less rather than its least
	// bad entries. 0 keeps every hit.
	MinScore float64
}

// Validate reports a ranking whose tunable settings are out of range: the
// weights of relevance and recency must lie in [0, 1], the recency's
// e-folding age be positive, MMR's λ in (0, 1] and the minimum score at
// least 0.
func (r Ranking) Validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !(r.Relevance >= 0 && r.Relevance <= 1):
		return fmt.Errorf("the relevance weight must be between 0 and 1, not %v", r.Relevance)
	case !(r.Recency >= 0 && r.Recency <= 1):
		return fmt.Errorf("the recency weight must be between 0 and 1, not %v", r.Recency)
	case !(r.RecencyDays > 0) || !finite(r.RecencyDays):
		return fmt.Errorf("the recency time constant must be a positive number of days, not %v", r.RecencyDays)
	case !(r.MMRLambda > 0 && r.MMRLambda <= 1):
		return fmt.Errorf("the MMR lambda must be greater than 0 and at most 1, not %v", r.MMRLambda)
	case !(r.MinScore >= 0) || !finite(r.MinScore):
		return fmt.Errorf("the minimum score must be at least 0, not %v", r.MinScore)
	}
	return nil
}

// keep drops the hits below the minimum score. Scores never increase down
// a ranking, after MMR too, so the hits kept are a prefix.
func (r Ranking) keep(hits []Hit) []Hit {
	if r.MinScore <= 0 {
		return hits
	}
	out := hits[:0:0]
	for _, h := range hits {
		if h.Score >= r.MinScore {
			out = append(out, h)
		}
	}
	return out
}

// DefaultRanking is the ranking Search uses. The project bonus of 0.05 is
// small on purpose: it reorders entries of similar relevance and age in
// favour of the current project (a twentieth of a perfect match, or the
// recency difference between entries about eight days apart when young)
// but never lifts an unrelated entry over a good match. The weighted
// fusion beats RRF, which weighs both rankings alike whatever their
// quality, and BM25 and the vectors weigh alike since conversation turns
// are indexed with the turn before them (see TurnOrder) and the two
// rankings became about as good. The other settings' reasons are beside
// their fields; the LoCoMo figures that chose them (TestLoCoMo) are in
// docs/performance.md.
var DefaultRanking = Ranking{
	Relevance: 0.8, Recency: 0.2, RecencyDays: 30, ProjectBonus: 0.05,
	LexicalShare: 0.5, RRFK: 60, MMRLambda: 0.7, MMRFloor: 0.9, MinCosine: 0.1,
	Feedback: 0.3, DateBonus: 0.3, DateWindow: 7, LexicalSpan: 0.5, VectorSpan: 0.2,
	DecisionBonus: 0.3,
}

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
	return r.rank(cands, project, nil, 0, now, k)
}

// rank is Rank with the times the query names, for the date bonus, and
// what it asks for, for the decision bonus.
func (r Ranking) rank(cands []Candidate, project string, spans []span, in intent, now time.Time, k int) []Hit {
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
		w.Date = max(r.dateBonus(c.CreatedAt, spans), r.DateBonus*c.mention)
		w.Decision = r.decisionBonus(c.Kind, in)
		score += w.Date + w.Decision
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

// dateBonus is the date bonus of an entry created at created for a query
// that names days.
func (r Ranking) dateBonus(created time.Time, spans []span) float64 {
	if len(spans) == 0 || created.IsZero() || r.DateBonus <= 0 || r.DateWindow <= 0 {
		return 0
	}
	return r.DateBonus * dateCloseness(created, spans, r.DateWindow)
}

// decisionBonus is the decision bonus of an entry of kind for a query
// that asks for in (readIntent): a decision when it asks what was chosen,
// a preference when it asks what is preferred.
func (r Ranking) decisionBonus(kind string, in intent) float64 {
	if !in.favours(kind) {
		return 0
	}
	return r.DecisionBonus
}
