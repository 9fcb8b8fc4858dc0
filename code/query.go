package code

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/miramem/mira/code/rank"
)

// Default sizes of answers.
const (
	defaultSymbols     = 20
	defaultFiles       = 20
	defaultTouchpoints = 8
	maxTouchpoints     = 12
	excerptLines       = 30
	cochangeSeeds      = 10 // co-change partners taken of each file a query names
	perFile            = 3  // touchpoints from one file at most
)

// Symbols returns up to k definitions matching q (a name, part of one, or
// words), best first, as cards with their first lines.
func (ix *Index) Symbols(q string, k int) []SymbolHit {
	if k <= 0 {
		k = defaultSymbols
	}
	ix.mu.RLock()
	hits := ix.model.Symbols(rank.Query{Text: q, K: k})
	by := ix.byPath
	ix.mu.RUnlock()
	d := ix.modules()
	var out []SymbolHit
	for _, h := range hits {
		f, s, ok := symbolIn(by, h.Path, h.Index, h.Name)
		if !ok {
			continue
		}
		out = append(out, SymbolHit{Card: ix.cardOf(d, f, s, true, false), Score: h.Score})
	}
	return out
}

// symbolIn finds the index-th definition of the file at p, checking its
// name: the ranking model may be a step ahead of the files during an
// update. Only that file's definitions are decoded.
func symbolIn(by map[string]*fileRec, p string, index int, name string) (*fileRec, *pSymbol, bool) {
	f := by[p]
	if f == nil || f.Skip != "" {
		return nil, nil, false
	}
	pf := f.file()
	if pf == nil || index < 0 || index >= len(pf.Symbols) || pf.Symbols[index].Name != name {
		return nil, nil, false
	}
	return f, &pf.Symbols[index], true
}

// modules returns lookup tables that know only the modules (go.mod files)
// of the project, for cards: the whole tables when built, else tables of
// the go.mod files alone, which a query makes without decoding every
// file's definitions.
func (ix *Index) modules() *derived {
	ix.mu.RLock()
	st := ix.st
	ix.mu.RUnlock()
	ix.derMu.Lock()
	defer ix.derMu.Unlock()
	if ix.der != nil && ix.derSt == st {
		return ix.der
	}
	if ix.mods != nil && ix.modsSt == st {
		return ix.mods
	}
	d := &derived{mods: map[string]string{}}
	for _, f := range st.Files {
		if f.Skip == "" && path.Base(f.Path) == "go.mod" {
			if m := goModule(filepath.Join(ix.root, filepath.FromSlash(f.Path))); m != "" {
				d.mods[path.Dir(f.Path)] = m
			}
		}
	}
	ix.mods, ix.modsSt = d, st
	return d
}

// near turns what a query points at into the ranking model's near seeds:
// the files it names and their co-change partners, and the paths its
// boosts name, with why.
func (ix *Index) near(q Query) (map[string]float64, map[string][]string) {
	near := map[string]float64{}
	why := map[string][]string{}
	add := func(p string, w float64, reason string) {
		if w <= 0 {
			return
		}
		w = min(w, 1)
		if w > near[p] {
			near[p] = w
		}
		why[p] = append(why[p], reason)
	}
	now := time.Now()
	hist := ix.history()
	ix.hmu.Lock()
	for _, f := range q.Files {
		f = cleanPath(f)
		add(f, 1, "named in the conversation")
		cc := hist.Cochange(f, cochangeSeeds, now)
		top := 0.0
		for _, c := range cc {
			top = max(top, c.Weight)
		}
		for _, c := range cc {
			if top > 0 {
				add(c.Path, c.Weight/top, fmt.Sprintf("changed with %s in %d commits", f, c.Count))
			}
		}
	}
	ix.hmu.Unlock()
	for k, w := range q.Boost {
		p, _, _ := strings.Cut(k, "#")
		add(cleanPath(p), w, "pointed at by memory")
	}
	return near, why
}

// Files returns up to q.K files most relevant to q (20 when K is 0).
func (ix *Index) Files(q Query) []FileHit {
	k := q.K
	if k <= 0 {
		k = defaultFiles
	}
	near, nearWhy := ix.near(q)
	ix.mu.RLock()
	hits := ix.model.Files(rank.Query{Text: q.Text, K: k, Near: near, Explain: q.Explain})
	by := ix.byPath
	ix.mu.RUnlock()
	out := make([]FileHit, 0, len(hits))
	for _, h := range hits {
		f := by[h.Path]
		if f == nil {
			continue
		}
		fh := FileHit{Path: h.Path, Score: h.Score, Stale: ix.isStale(f)}
		if q.Explain {
			fh.Why = append(append([]string(nil), h.Why...), nearWhy[h.Path]...)
		}
		out = append(out, fh)
	}
	return out
}

// Touchpoints returns the definitions most relevant to q — q.K of them,
// 8 when K is 0, at most 12 — as cards with an excerpt of up to 30 lines
// of the code around each and why it was chosen, fitted under q.Budget
// tokens when it is set. Files the query names bring in the files that
// change with them; q.Boost raises the paths and symbols memories point
// at. A file with no matching definition (text, or a script) is given as
// a card of kind "file".
func (ix *Index) Touchpoints(q Query) []Touchpoint {
	k := q.K
	if k <= 0 {
		k = defaultTouchpoints
	}
	k = min(k, maxTouchpoints)
	count := q.Count
	if count == nil {
		count = approxTokens
	}
	near, nearWhy := ix.near(q)
	ix.mu.RLock()
	files := ix.model.Files(rank.Query{Text: q.Text, K: 3 * k, Near: near, Explain: q.Explain})
	syms := ix.model.Symbols(rank.Query{Text: q.Text, K: 10 * k, Explain: q.Explain})
	by := ix.byPath
	ix.mu.RUnlock()
	d := ix.modules()

	fileScore := map[string]float64{}
	fileRank := map[string]int{}
	fileWhy := map[string][]string{}
	topFile := 0.0
	for i, h := range files {
		fileScore[h.Path] = h.Score
		fileRank[h.Path] = i + 1
		fileWhy[h.Path] = h.Why
		topFile = max(topFile, h.Score)
	}
	topSym := 0.0
	for _, h := range syms {
		topSym = max(topSym, h.Score)
	}
	type cand struct {
		id    int32 // the index of the definition in its file; -1: the file
		f     *fileRec
		s     *pSymbol
		score float64
		why   []string
	}
	var cands []cand
	have := map[string]int{}
	for _, h := range syms {
		f, sym, ok := symbolIn(by, h.Path, h.Index, h.Name)
		if !ok {
			continue
		}
		s := 0.0
		if topSym > 0 {
			s = h.Score / topSym
		}
		fs := 0.0
		if topFile > 0 {
			fs = fileScore[h.Path] / topFile
		}
		c := cand{id: int32(h.Index), f: f, s: sym, score: s * (0.5 + fs)}
		if b := q.Boost[h.Path+"#"+h.Name]; b > 0 {
			c.score *= 1 + b
			c.why = append(c.why, "pointed at by memory")
		}
		if q.Explain {
			c.why = append(c.why, h.Why...)
			if r := fileRank[h.Path]; r > 0 {
				c.why = append(c.why, fmt.Sprintf("its file ranks %d", r))
			}
			c.why = append(c.why, nearWhy[h.Path]...)
		}
		cands = append(cands, c)
		have[h.Path]++
	}
	// Files that rank well without a matching definition: their best
	// definition by how much the project uses it, or the file itself.
	for _, h := range files {
		if have[h.Path] > 0 || topFile == 0 {
			continue
		}
		f := by[h.Path]
		if f == nil || f.Skip != "" {
			continue
		}
		c := cand{id: -1, f: f, score: 0.9 * h.Score / topFile}
		if q.Explain {
			c.why = append(append(c.why, h.Why...), nearWhy[h.Path]...)
		}
		cands = append(cands, c)
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].score != cands[b].score {
			return cands[a].score > cands[b].score
		}
		if cands[a].f.Path != cands[b].f.Path {
			return cands[a].f.Path < cands[b].f.Path
		}
		return cands[a].id < cands[b].id
	})

	var out []Touchpoint
	used := 0
	taken := map[string]int{}
	for _, c := range cands {
		if len(out) >= k {
			break
		}
		if taken[c.f.Path] >= perFile {
			continue
		}
		var tp Touchpoint
		if c.id >= 0 {
			tp.Card = ix.cardOf(d, c.f, c.s, true, false)
			tp.Excerpt = ix.excerpt(c.f, tp.Line, tp.EndLine)
		} else {
			tp.Card = Card{Kind: "file", Name: path.Base(c.f.Path), Path: c.f.Path, Lang: c.f.Lang,
				Module: d.module(c.f), Line: 1, EndLine: c.f.Lines, Stale: ix.isStale(c.f)}
			tp.Excerpt = ix.lines(c.f, 1, excerptLines)
		}
		tp.Score = c.score
		if q.Explain {
			tp.Why = c.why
		}
		if q.Budget > 0 {
			n := count(touchText(tp))
			if used+n > q.Budget {
				// Without its excerpt it may still fit.
				tp.Excerpt = ""
				if n = count(touchText(tp)); used+n > q.Budget {
					continue
				}
			}
			used += n
		}
		taken[c.f.Path]++
		out = append(out, tp)
	}
	return out
}

// touchText is what a touchpoint costs in a prompt.
func touchText(t Touchpoint) string {
	return t.Path + ":" + fmt.Sprint(t.Line) + "\n" + t.Signature + "\n" + t.Doc + "\n" + t.Excerpt + "\n"
}

// excerpt returns up to excerptLines lines of f around the definition at
// from..to: the whole definition with a few lines either side when it is
// short, its first lines when long.
func (ix *Index) excerpt(f *fileRec, from, to int) string {
	n := to - from + 1
	if n >= excerptLines {
		return ix.lines(f, from, from+excerptLines-1)
	}
	pad := min(3, (excerptLines-n)/2)
	return ix.lines(f, max(1, from-pad), to+pad)
}
