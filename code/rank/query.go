package rank

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/miramem/mira/internal/text"
)

// Query asks for the files or symbols a task needs.
type Query struct {
	Text string // the task, a question, or a symbol's name
	K    int    // hits wanted; 0 means 20
	// Near weighs files the conversation points at, path -> weight in
	// (0, 1]: co-change partners of the files it names, files memories
	// link to. Their boost is bounded by Params.Near times the best lexical
	// score, so it reorders close calls and brings in files no word found,
	// without burying strong lexical hits.
	Near    map[string]float64
	Explain bool // fill the hits' Why
}

// FileHit is one ranked file.
type FileHit struct {
	Path  string
	Score float64
	Why   []string // with Query.Explain: which words matched where, graph hops, near seeds
}

func (q Query) k() int {
	if q.K <= 0 {
		return 20
	}
	return q.K
}

// qterm is a query term found in the model.
type qterm struct {
	id     uint32
	text   string
	idf    float64
	symIDF float64
}

func (m *Model) queryTerms(text string) []qterm {
	var out []qterm
	nf, ns := float64(m.live), float64(m.liveSyms)
	for _, t := range QueryTerms(text) {
		id, ok := m.findTerm(t)
		if !ok {
			continue
		}
		q := qterm{id: id, text: t}
		fdf, sdf := m.dfOf(id)
		if df := float64(fdf); df > 0 {
			q.idf = math.Log(1 + (nf-df+0.5)/(df+0.5))
		}
		if df := float64(sdf); df > 0 {
			q.symIDF = math.Log(1 + (ns-df+0.5)/(df+0.5))
		}
		out = append(out, q)
	}
	return out
}

// bm25f scores one posting: the fields' term counts, weighted and length
// normalised, summed, then saturated once (Robertson and Zaragoza, "The
// Probabilistic Relevance Framework: BM25 and Beyond", 2009).
func bm25f(tf *[nFields]uint8, lens *[nFields]float64, avg *[nFields]float64, w, b *[nFields]float64, k1 float64) float64 {
	var t float64
	for i := range tf {
		if tf[i] == 0 || w[i] == 0 {
			continue
		}
		norm := 1 - b[i]
		if avg[i] > 0 {
			norm += b[i] * lens[i] / avg[i]
		}
		t += w[i] * float64(tf[i]) / norm
	}
	return t / (k1 + t)
}

// lexical scores files and symbols for the query's terms.
type lexical struct {
	file     []float64         // by file id, BM25F
	sym      []float64         // by symbol id
	symHit   []uint32          // symbols with a score
	bestSym  map[uint32]uint32 // file -> its best symbol
	touched  []uint32          // files with a score
	matches  map[uint32][]string
	explain  bool
	terms    []qterm
	maxScore float64
}

func (m *Model) lexical(terms []qterm, explain, symbols bool) *lexical {
	p := &m.params
	lx := &lexical{file: make([]float64, len(m.files)), explain: explain, terms: terms}
	if explain {
		lx.matches = map[uint32][]string{}
	}
	var avg [nFields]float64
	for i := range avg {
		if m.live > 0 {
			avg[i] = float64(m.sumLen[i]) / float64(m.live)
		}
	}
	var lens [nFields]float64
	for _, q := range terms {
		if q.idf == 0 {
			continue
		}
		post, _ := m.postings(q.id)
		for i := range post {
			ps := &post[i]
			f := &m.files[ps.id]
			if f.dead {
				continue
			}
			for j := range lens {
				lens[j] = float64(f.len[j])
			}
			s := q.idf * bm25f(&ps.tf, &lens, &avg, &p.Weight, &p.B, p.K1)
			if lx.file[ps.id] == 0 {
				lx.touched = append(lx.touched, ps.id)
			}
			lx.file[ps.id] += s
			if explain {
				lx.matches[ps.id] = append(lx.matches[ps.id], describe(q.text, &ps.tf, &fieldNames))
			}
		}
	}
	if symbols {
		m.symbolScores(lx)
	}
	for _, id := range lx.touched {
		lx.maxScore = math.Max(lx.maxScore, lx.file[id])
	}
	return lx
}

// symbolScores scores the symbols holding the query's terms and keeps each
// file's best.
func (m *Model) symbolScores(lx *lexical) {
	p := &m.params
	var avg [nFields]float64
	for i := range avg {
		if m.liveSyms > 0 {
			avg[i] = float64(m.symSumLen[i]) / float64(m.liveSyms)
		}
	}
	lx.sym = make([]float64, m.symCount())
	var lens [nFields]float64
	for _, q := range lx.terms {
		if q.symIDF == 0 {
			continue
		}
		_, post := m.postings(q.id)
		for i := range post {
			ps := &post[i]
			sy := m.sym(ps.id)
			if m.files[sy.file].dead {
				continue
			}
			for j := range lens {
				lens[j] = float64(sy.len[j])
			}
			if lx.sym[ps.id] == 0 {
				lx.symHit = append(lx.symHit, ps.id)
			}
			lx.sym[ps.id] += q.symIDF * bm25f(&ps.tf, &lens, &avg, &p.SymWeight, &p.SymB, p.K1)
		}
	}
	lx.bestSym = map[uint32]uint32{}
	for _, s := range lx.symHit {
		sc := lx.sym[s]
		f := m.sym(s).file
		if b, ok := lx.bestSym[f]; !ok || sc > lx.sym[b] || sc == lx.sym[b] && s < b {
			lx.bestSym[f] = s
		}
	}
}

func describe(term string, tf *[nFields]uint8, names *[nFields]string) string {
	var b strings.Builder
	b.WriteString(term)
	b.WriteString(":")
	for i, n := range tf {
		if n > 0 {
			fmt.Fprintf(&b, " %s %d", names[i], n)
		}
	}
	return b.String()
}

// Files ranks the files for a query: BM25F over their fields, plus a share
// of their best symbol's score, plus a bounded spread along the
// definition-reference graph from the best lexical hits, plus the
// query's Near seeds.
func (m *Model) Files(q Query) []FileHit {
	p := &m.params
	terms := m.queryTerms(q.Text)
	lx := m.lexical(terms, q.Explain, p.SymbolBoost > 0)
	score := map[uint32]float64{}
	why := map[uint32][]string{}
	for _, id := range lx.touched {
		score[id] = lx.file[id]
		if q.Explain {
			why[id] = append(why[id], lx.matches[id]...)
		}
	}
	if p.SymbolBoost > 0 {
		// Normalised by the best symbol anywhere, so that the boost is a
		// share of the top file score whatever the two scales are.
		var top float64
		for _, s := range lx.symHit {
			top = math.Max(top, lx.sym[s])
		}
		for f, s := range lx.bestSym {
			if top == 0 {
				break
			}
			add := p.SymbolBoost * lx.maxScore * lx.sym[s] / top
			score[f] += add
			if q.Explain {
				sy := m.sym(s)
				why[f] = append(why[f], fmt.Sprintf("symbol %s: %+.3f", m.symName(&sy), add))
			}
		}
	}
	base := 0.0
	for _, s := range score {
		base = math.Max(base, s)
	}
	if p.Graph > 0 && base > 0 {
		m.spread(score, base, terms, q.Explain, why)
	}
	if p.Near > 0 && len(q.Near) > 0 {
		top := base
		if top == 0 {
			top = 1
		}
		for path, w := range q.Near {
			id, ok := m.byPath[path]
			if !ok || w <= 0 {
				continue
			}
			add := p.Near * top * math.Min(w, 1)
			score[id] += add
			if q.Explain {
				why[id] = append(why[id], fmt.Sprintf("near %.2f: %+.3f", w, add))
			}
		}
	}
	ids := make([]uint32, 0, len(score))
	for id, s := range score {
		if s > 0 {
			ids = append(ids, id)
		}
	}
	ids = topK(ids, q.k(), func(a, b uint32) bool {
		if score[a] != score[b] {
			return score[a] > score[b]
		}
		return m.files[a].path < m.files[b].path
	})
	out := make([]FileHit, len(ids))
	for i, id := range ids {
		out[i] = FileHit{Path: m.files[id].path, Score: score[id], Why: why[id]}
	}
	return out
}

func (m *Model) symName(sy *sym) string {
	if sy.parent != 0 {
		return m.nameOf(sy.parent) + "." + m.nameOf(sy.name)
	}
	return m.nameOf(sy.name)
}

// spread adds to score a one-hop walk along the definition-reference graph
// from the best lexical hits, seeded by their scores. From a seed it goes
// to the files defining the names the seed uses, and to the files using
// the names the seed defines; an edge's weight grows with the uses, shrinks
// with the number of files defining the name (a name defined in more than
// MaxDefiners files carries none) and is ten times larger when the name's
// words are query words. Each seed hands out its own score in all, so a
// file reached from many seeds gains only when they are strong seeds; the
// sum is scaled so that the best-reached file gains Graph times the top
// score, and nothing more: the graph reorders close calls and does not
// prefer a project's central files for their own sake.
func (m *Model) spread(score map[uint32]float64, top float64, qts []qterm, explain bool, why map[uint32][]string) {
	p := &m.params
	qset := map[string]bool{}
	for _, t := range qts {
		qset[t.text] = true
	}
	seeds := make([]uint32, 0, len(score))
	for id := range score {
		seeds = append(seeds, id)
	}
	sort.Slice(seeds, func(i, j int) bool {
		if score[seeds[i]] != score[seeds[j]] {
			return score[seeds[i]] > score[seeds[j]]
		}
		return seeds[i] < seeds[j]
	})
	if len(seeds) > p.Seeds {
		seeds = seeds[:p.Seeds]
	}
	mentioned := func(n uint32) float64 {
		hit := false
		terms(m.nameOf(n), text.Stem, func(t string) {
			if qset[t] {
				hit = true
			}
		})
		if hit {
			return 1
		}
		return p.GraphOther
	}
	gain := map[uint32]float64{}
	via := map[uint32]string{}
	type edge struct {
		to uint32
		w  float64
		n  uint32
	}
	live := func(l []uint32) (n int) {
		for _, x := range l {
			if !m.files[x].dead {
				n++
			}
		}
		return n
	}
	norm := math.Log(1 + float64(m.live))
	for _, s := range seeds {
		f := &m.files[s]
		var edges []edge
		var total float64
		add := func(n uint32, c uint32, byUsers bool) {
			users, definers := m.usersOf(n)
			to := definers
			if byUsers {
				to = users
			}
			d := live(definers)
			if d == 0 || d > p.MaxDefiners {
				return
			}
			// A name most files use (a project's central type) says
			// little about this seed in particular: it is weighed down
			// as IDF weighs a common word. The seed's share goes by
			// its plain use counts, so that a seed whose uses are all
			// of common or unmentioned names hands out little.
			rare := math.Log(1+float64(m.live)/float64(live(users)+d)) / norm
			plain := math.Sqrt(float64(c)) / float64(d)
			for _, x := range to {
				if x != s && !m.files[x].dead {
					edges = append(edges, edge{x, plain * mentioned(n) * rare, n})
					total += plain
				}
			}
		}
		refs, defs := m.refsOf(s)
		for _, r := range refs {
			add(r.name, r.count, false)
		}
		if p.GraphUsers {
			for _, n := range defs {
				add(n, 1, true)
			}
		}
		if total == 0 {
			continue
		}
		for _, e := range edges {
			g := score[s] * e.w / total
			if explain && g > gain[e.to] {
				via[e.to] = fmt.Sprintf("%s via %s", f.path, m.nameOf(e.n))
			}
			gain[e.to] += g
		}
	}
	for id, g := range gain {
		add := p.Graph * math.Min(g, top)
		score[id] += add
		if explain {
			why[id] = append(why[id], fmt.Sprintf("graph from %s: %+.3f", via[id], add))
		}
	}
}
