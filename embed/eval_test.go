package embed

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/miramem/mira/internal/locomo"
)

// The LoCoMo turn-retrieval evaluation. It runs only when MIRA_LOCOMO names
// the benchmark directory (the one holding dev/turns.jsonl):
//
//	MIRA_LOCOMO=/work/shared/bench/locomo go test ./embed -run TestLoCoMo -v
//
// Each conversation is its own store: the model is fitted on that
// conversation's turns only (never on questions), turns are embedded as
// "Speaker: text", questions as they are. Scores are what the benchmark's
// score.py computes: recall@k is the fraction of a question's evidence ids
// in the top k, averaged over all questions; hit@k is 1 when any is.

// bm25 is a small in-memory Okapi BM25 (k1=1.2, b=0.75) over the same
// tokens as the embedders: stems of the words that are not stop words.
type bm25 struct {
	docs  []map[string]float64
	lens  []float64
	avg   float64
	df    map[string]int
	k1, b float64
}

func newBM25(texts []string) *bm25 {
	x := &bm25{df: map[string]int{}, k1: 1.2, b: 0.75}
	total := 0.0
	for _, t := range texts {
		tf := map[string]float64{}
		n := 0.0
		for _, tok := range tokenize(t) {
			if tok.stop {
				continue
			}
			tf[tok.stem]++
			n++
		}
		for s := range tf {
			x.df[s]++
		}
		x.docs = append(x.docs, tf)
		x.lens = append(x.lens, n)
		total += n
	}
	x.avg = total / float64(max(len(texts), 1))
	return x
}

func (x *bm25) scores(query string) []float64 {
	seen := map[string]bool{}
	out := make([]float64, len(x.docs))
	n := float64(len(x.docs))
	for _, tok := range tokenize(query) {
		if tok.stop || seen[tok.stem] {
			continue
		}
		seen[tok.stem] = true
		df := float64(x.df[tok.stem])
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for i, d := range x.docs {
			if tf := d[tok.stem]; tf > 0 {
				out[i] += idf * tf * (x.k1 + 1) / (tf + x.k1*(1-x.b+x.b*x.lens[i]/x.avg))
			}
		}
	}
	return out
}

// ranked returns document indexes by descending score, ties by index, only
// those with a positive score (BM25 returns no document that shares no
// term), at most n.
func ranked(scores []float64, n int, positive bool) []int {
	idx := make([]int, 0, len(scores))
	for i, s := range scores {
		if !positive || s > 0 {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
	if len(idx) > n {
		idx = idx[:n]
	}
	return idx
}

const candidates = 30 // per side, before fusion

// rrf fuses rankings by reciprocal rank (k=60).
func rrf(lists ...[]int) []int {
	score := map[int]float64{}
	for _, l := range lists {
		for r, d := range l {
			score[d] += 1 / (60 + float64(r+1))
		}
	}
	return fusedOrder(score)
}

// weighted fuses by a weighted sum of min–max normalised scores over each
// side's candidates; a document missing from a side gets 0 there.
func weighted(alpha float64, lexScores []float64, lex []int, vecScores []float64, vec []int) []int {
	score := map[int]float64{}
	add := func(w float64, s []float64, l []int) {
		if len(l) == 0 {
			return
		}
		hi, lo := s[l[0]], s[l[len(l)-1]]
		for _, d := range l {
			v := 1.0
			if hi > lo {
				v = (s[d] - lo) / (hi - lo)
			}
			score[d] += w * v
		}
	}
	add(alpha, lexScores, lex)
	add(1-alpha, vecScores, vec)
	return fusedOrder(score)
}

func fusedOrder(score map[int]float64) []int {
	out := make([]int, 0, len(score))
	for d := range score {
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b int) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return out
}

// locomoSet is the loaded dev set, grouped by conversation.
type locomoSet struct {
	convs     []string
	turns     map[string][]locomo.Turn
	questions map[string][]locomo.Question
	shared    bool // fit one model on all conversations
}

func loadLoCoMo(t *testing.T) *locomoSet {
	dir := os.Getenv("MIRA_LOCOMO")
	if dir == "" {
		t.Skip("MIRA_LOCOMO is not set")
	}
	turns, questions, err := locomo.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := &locomoSet{turns: map[string][]locomo.Turn{}, questions: map[string][]locomo.Question{}}
	for _, tu := range turns {
		if _, ok := d.turns[tu.Conversation]; !ok {
			d.convs = append(d.convs, tu.Conversation)
		}
		d.turns[tu.Conversation] = append(d.turns[tu.Conversation], tu)
	}
	for _, q := range questions {
		d.questions[q.Conversation] = append(d.questions[q.Conversation], q)
	}
	slices.Sort(d.convs)
	d.shared = os.Getenv("MIRA_LOCOMO_SHARED") != ""
	return d
}

// system is an embedder built from a store's texts. With seq, a model
// embeds the store's texts as a sequence (EmbedSequence).
type system struct {
	name  string
	build func(texts []string) (Embedder, error)
	seq   bool
}

// result holds one method's metrics per conversation and per category.
type result struct {
	byConv   map[string]*locomo.Metrics
	byCat    map[int]*locomo.Metrics
	rankings map[int][]string // by qid, top 10, for score.py
}

func newResult() *result {
	return &result{byConv: map[string]*locomo.Metrics{}, byCat: map[int]*locomo.Metrics{}, rankings: map[int][]string{}}
}

func (r *result) add(q locomo.Question, ranking []string) {
	r.rankings[q.QID] = ranking[:min(len(ranking), 10)]
	conv, cat, evidence := q.Conversation, q.Category, q.Evidence
	if r.byConv[conv] == nil {
		r.byConv[conv] = &locomo.Metrics{}
	}
	if r.byCat[cat] == nil {
		r.byCat[cat] = &locomo.Metrics{}
	}
	r.byConv[conv].Add(ranking, evidence)
	r.byCat[cat].Add(ranking, evidence)
}

func (r *result) over(convs []string) locomo.Metrics {
	var m locomo.Metrics
	for _, c := range convs {
		if x := r.byConv[c]; x != nil {
			m.Merge(*x)
		}
	}
	return m
}

// methods of one evaluation run.
const (
	methBM25 = iota
	methVec
	methRRF
	methWeighted
	numMethods
)

var methodNames = [numMethods]string{"bm25", "vector", "fused rrf", "fused weighted"}

// evaluate runs BM25, the system's vectors alone and both fusions over every
// conversation; alpha is the BM25 share of the weighted fusion.
func evaluate(t *testing.T, d *locomoSet, s system, alpha float64) [numMethods]*result {
	var res [numMethods]*result
	for i := range res {
		res[i] = newResult()
	}
	ctx := context.Background()
	convTexts := func(conv string) []string {
		var texts []string
		for _, tu := range d.turns[conv] {
			texts = append(texts, tu.Speaker+": "+tu.Text)
		}
		return texts
	}
	// With shared, one model is fitted on every conversation (one store
	// holding them all, as scopes), otherwise one per conversation.
	var shared Embedder
	if d.shared {
		var all []string
		for _, conv := range d.convs {
			all = append(all, convTexts(conv)...)
		}
		var err error
		if shared, err = s.build(all); err != nil {
			t.Fatalf("%s: build: %v", s.name, err)
		}
	}
	for _, conv := range d.convs {
		turns := d.turns[conv]
		texts := convTexts(conv)
		e := shared
		if e == nil {
			var err error
			if e, err = s.build(texts); err != nil {
				t.Fatalf("%s: build(%s): %v", s.name, conv, err)
			}
		}
		var docVecs [][]float32
		var err error
		if m, ok := e.(*Model); ok && s.seq {
			docVecs, err = m.EmbedSequence(ctx, texts)
		} else {
			docVecs, err = e.Embed(ctx, texts)
		}
		if err != nil {
			t.Fatal(err)
		}
		qs := d.questions[conv]
		qtexts := make([]string, len(qs))
		for i, q := range qs {
			qtexts[i] = q.Question
		}
		qVecs, err := e.Embed(ctx, qtexts)
		if err != nil {
			t.Fatal(err)
		}
		lex := newBM25(texts)
		ids := func(idx []int) []string {
			out := make([]string, len(idx))
			for i, j := range idx {
				out[i] = turns[j].ID
			}
			return out
		}
		for qi, q := range qs {
			ls := lex.scores(q.Question)
			vs := make([]float64, len(texts))
			for i, v := range docVecs {
				vs[i] = float64(dot(qVecs[qi], v))
			}
			lr := ranked(ls, candidates, true)
			vr := ranked(vs, candidates, false)
			res[methBM25].add(q, ids(ranked(ls, 10, true)))
			res[methVec].add(q, ids(vr))
			res[methRRF].add(q, ids(rrf(lr, vr)))
			res[methWeighted].add(q, ids(weighted(alpha, ls, lr, vs, vr)))
		}
	}
	return res
}

func dot(a, b []float32) float32 {
	var s float32
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

func printTable(t *testing.T, d *locomoSet, name string, res [numMethods]*result) {
	half := len(d.convs) / 2
	a, b := d.convs[:half], d.convs[half:]
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%s\n%-15s %-37s | %-37s | %s\n", name, "method", "all: R@1 R@5 R@10  hit@1 hit@5 hit@10",
		"half A "+strings.Join(a, ","), "half B "+strings.Join(b, ","))
	for m, r := range res {
		fmt.Fprintf(&sb, "%-15s %-37s | %-37s | %s\n", methodNames[m], r.over(d.convs), r.over(a), r.over(b))
	}
	fmt.Fprintf(&sb, "per category (all conversations): R@1 R@5 R@10  hit@1 hit@5 hit@10\n")
	for cat := 1; cat <= 5; cat++ {
		for m, r := range res {
			if x := r.byCat[cat]; x != nil {
				fmt.Fprintf(&sb, "  cat %d %-15s %s  (n=%d)\n", cat, methodNames[m], *x, x.N)
			}
		}
	}
	t.Log(sb.String())
}

// fusionAlpha is the BM25 share of the weighted fusion, chosen on half A
// (conv-26, -30, -41) and checked on half B. Default model in sequence,
// fused recall@5/@10 on half A: 0.666/0.778 at 0.2, 0.665/0.782 at 0.3,
// 0.664/0.783 at 0.4, 0.657/0.777 at 0.5, 0.643/0.757 at 0.6; half B at
// 0.4: 0.629/0.731.
const fusionAlpha = 0.4

// TestLoCoMo prints the full table for the pure hashing embedder and for the
// default model (fitted per conversation, turns embedded in sequence).
func TestLoCoMo(t *testing.T) {
	d := loadLoCoMo(t)
	systems := []system{
		{name: "hashing (mira-hash-v1/384)", build: func([]string) (Embedder, error) { return NewHashing(384), nil }},
		{name: "model, default options, Embed", build: func(texts []string) (Embedder, error) { return Fit(texts, FitOptions{}) }},
		{name: "model, default options, EmbedSequence", build: func(texts []string) (Embedder, error) { return Fit(texts, FitOptions{}) }, seq: true},
	}
	out := os.Getenv("MIRA_LOCOMO_RESULTS")
	for i, s := range systems {
		res := evaluate(t, d, s, fusionAlpha)
		printTable(t, d, s.name, res)
		if out != "" {
			for m, r := range res {
				writeResults(t, filepath.Join(out, fmt.Sprintf("system%d-%s.jsonl", i, strings.ReplaceAll(methodNames[m], " ", "-"))), r)
			}
		}
	}
}

// writeResults writes rankings in the benchmark's results format, so that
// score.py can check the numbers printed here (MIRA_LOCOMO_RESULTS=DIR).
func writeResults(t *testing.T, path string, r *result) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(f)
	qids := slices.Sorted(maps.Keys(r.rankings))
	for _, qid := range qids {
		if err := enc.Encode(map[string]any{"qid": qid, "ids": r.rankings[qid]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// sweepLine prints one compact line per variant: R@5 and R@10 of the vector
// alone and fused (weighted and RRF), on all conversations and on each half.
func sweepLine(t *testing.T, d *locomoSet, s system, alpha float64) {
	res := evaluate(t, d, s, alpha)
	half := len(d.convs) / 2
	f := func(r *result, convs []string) string {
		m := r.over(convs)
		r5, _ := m.At(1)
		r10, _ := m.At(2)
		return fmt.Sprintf("%.3f/%.3f", r5, r10)
	}
	var sb strings.Builder
	for _, m := range []int{methVec, methWeighted, methRRF} {
		fmt.Fprintf(&sb, " %s %s [A %s B %s] |", methodNames[m][:5]+methodNames[m][len(methodNames[m])-3:], f(res[m], d.convs), f(res[m], d.convs[:half]), f(res[m], d.convs[half:]))
	}
	t.Logf("%-34s%s", s.name, sb.String())
}

// TestLoCoMoSweep prints the measurements behind the defaults, one line
// per variant: R@5/R@10 overall and on each half. MIRA_LOCOMO_SWEEP=all
// runs them all, any other value the variants whose name contains it;
// MIRA_LOCOMO_SHARED=1 fits one model on all conversations instead.
func TestLoCoMoSweep(t *testing.T) {
	only := os.Getenv("MIRA_LOCOMO_SWEEP")
	if only == "" {
		t.Skip("MIRA_LOCOMO_SWEEP is not set")
	}
	d := loadLoCoMo(t)
	// learned returns a system whose vectors are the learned block alone
	// (a one-dimensional lexical block of weight 0).
	learned := func(name string, o FitOptions, seq bool) system {
		p := defaultParams(0)
		p.SemWeight = 1
		o.Dim, o.tune = o.SemDim+1, &p
		return system{name: name, build: func(texts []string) (Embedder, error) { return Fit(texts, o) }, seq: seq}
	}
	fit := func(name string, o FitOptions, seq bool) system {
		return system{name: name, build: func(texts []string) (Embedder, error) { return Fit(texts, o) }, seq: seq}
	}
	hashing := func(name string, dim int, f func(p *params)) system {
		p := defaultParams(dim)
		f(&p)
		return system{name: name, build: func([]string) (Embedder, error) { return &Hashing{p: p}, nil }}
	}
	type variant struct {
		s     system
		alpha float64
	}
	var variants []variant
	add := func(s system) { variants = append(variants, variant{s, fusionAlpha}) }
	add(hashing("hash words 4096", 4096, func(p *params) { p.BigramWeight, p.CharWeight = 0, 0 }))
	add(hashing("hash words 384", 384, func(p *params) { p.BigramWeight, p.CharWeight = 0, 0 }))
	add(hashing("hash words+bigrams 4096", 4096, func(p *params) { p.CharWeight = 0 }))
	add(hashing("hash words+chars 4096", 4096, func(p *params) { p.BigramWeight = 0 }))
	add(hashing("hash default 4096", 4096, func(*params) {}))
	add(hashing("hash default 384", 384, func(*params) {}))
	add(fit("idf only 384", FitOptions{SemDim: -1}, false))
	add(learned("lsa128 no window mindf2", FitOptions{SemDim: 128, Window: -1, MinDF: 2}, false))
	add(learned("lsa128 no window", FitOptions{SemDim: 128, Window: -1}, false))
	add(learned("lsa128 window1", FitOptions{SemDim: 128, Window: 1}, false))
	add(learned("lsa128 mindf2", FitOptions{SemDim: 128, MinDF: 2}, false))
	for _, k := range []int{64, 96, 128, 160, 256, 384} {
		add(learned(fmt.Sprintf("lsa%d", k), FitOptions{SemDim: k}, false))
	}
	add(learned("lsa128 window3", FitOptions{SemDim: 128, Window: 3}, false))
	add(learned("lsa128 weight.3", FitOptions{SemDim: 128, WindowWeight: 0.3}, false))
	add(learned("lsa128 weight1", FitOptions{SemDim: 128, WindowWeight: 1}, false))
	add(learned("lsa128 seq", FitOptions{SemDim: 128}, true))
	add(fit("lex256+lsa128", FitOptions{SemDim: 128}, false))
	add(fit("lex256+lsa128 seq", FitOptions{SemDim: 128}, true))
	add(fit("default", FitOptions{}, false))
	add(fit("default seq", FitOptions{}, true))
	for _, a := range []float64{0.2, 0.3, 0.5, 0.6} {
		variants = append(variants, variant{fit(fmt.Sprintf("default seq alpha%.1f", a), FitOptions{}, true), a})
	}
	for _, v := range variants {
		if only != "all" && !strings.Contains(v.s.name, only) {
			continue
		}
		sweepLine(t, d, v.s, v.alpha)
	}
}
