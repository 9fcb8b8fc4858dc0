package rank

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// SymbolHit is one ranked symbol: the Index-th of its file's symbols, in
// the order Put was given them.
type SymbolHit struct {
	Path         string
	Index        int
	Name, Parent string
	Kind         string
	Line         int
	Score        float64
	Why          []string
}

// Symbols ranks symbols. A query that is one name (ExecuteC,
// bash_completions, Command.Execute, parsefl) is matched against the
// symbols' names: whole, then by prefix, by the initials of their parts,
// inside, and as a subsequence, ignoring case and separators, so that
// camelCase and snake_case spellings meet. Any other query is ranked by
// BM25F over the symbols' names, parents, signatures and doc comments.
func (m *Model) Symbols(q Query) []SymbolHit {
	text := strings.TrimSpace(q.Text)
	var score map[uint32]float64
	why := map[uint32][]string{}
	if isName(text) {
		score = m.nameSearch(text, q.Explain, why)
	}
	var ids []uint32
	var scoreOf func(uint32) float64
	if len(score) == 0 {
		// Scored in place: a word query may score a good share of the
		// tree's symbols, and a map of them all costs more than the query.
		lx := &lexical{terms: m.queryTerms(text)}
		m.symbolScores(lx)
		ids = make([]uint32, 0, len(lx.symHit))
		for _, s := range lx.symHit {
			if lx.sym[s] > 0 && !m.files[m.sym(s).file].dead {
				ids = append(ids, s)
			}
		}
		scoreOf = func(s uint32) float64 { return lx.sym[s] }
		if q.Explain {
			for _, s := range ids {
				why[s] = append(why[s], "words: "+m.symbolWords(s, lx.terms))
			}
		}
	} else {
		ids = make([]uint32, 0, len(score))
		for s, sc := range score {
			if sc > 0 && !m.files[m.sym(s).file].dead {
				ids = append(ids, s)
			}
		}
		scoreOf = func(s uint32) float64 { return score[s] }
	}
	ids = topK(ids, q.k(), func(a, b uint32) bool {
		if sa, sb := scoreOf(a), scoreOf(b); sa != sb {
			return sa > sb
		}
		fa, fb := m.files[m.sym(a).file].path, m.files[m.sym(b).file].path
		if fa != fb {
			return fa < fb
		}
		return a < b
	})
	out := make([]SymbolHit, len(ids))
	for i, s := range ids {
		sy := m.sym(s)
		f := &m.files[sy.file]
		out[i] = SymbolHit{Path: f.path, Index: int(s - f.symLo), Name: m.nameOf(sy.name),
			Parent: m.nameOf(sy.parent), Kind: sy.kind, Line: int(sy.line), Score: scoreOf(s), Why: why[s]}
	}
	return out
}

// symbolWords says which query terms a symbol holds, in which fields.
func (m *Model) symbolWords(s uint32, qts []qterm) string {
	var parts []string
	for _, q := range qts {
		_, ps := m.postings(q.id)
		i := sort.Search(len(ps), func(i int) bool { return ps[i].id >= s })
		if i < len(ps) && ps[i].id == s {
			parts = append(parts, describe(q.text, &ps[i].tf, &symFieldNames))
		}
	}
	return strings.Join(parts, "; ")
}

// isName reports whether a query is one identifier, maybe qualified by
// dots or ::.
func isName(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if class(c) == 0 && c != '_' && c != '.' && c != ':' {
			return false
		}
	}
	return true
}

// nameSearch scores every distinct name against the query's last part,
// and, when the query is qualified, the symbols' parents against the part
// before it.
func (m *Model) nameSearch(q string, explain bool, why map[uint32][]string) map[uint32]float64 {
	q = strings.ReplaceAll(q, "::", ".")
	var parent string
	if i := strings.LastIndexByte(q, '.'); i >= 0 {
		parent, q = q[:i], q[i+1:]
		if j := strings.LastIndexByte(parent, '.'); j >= 0 {
			parent = parent[j+1:]
		}
	}
	key := nameKey(q)
	if key == "" {
		return nil
	}
	pkey := nameKey(parent)
	m.allNames()
	score := map[uint32]float64{}
	for n := 1; n < len(m.nameStr); n++ {
		if len(m.nameSyms[n]) == 0 {
			continue
		}
		sc, how := matchName(q, key, m.nameStr[n], m.nameKey[n], m.nameInit[n])
		if sc == 0 {
			continue
		}
		for _, s := range m.nameSyms[n] {
			sy := m.sym(s)
			v := sc
			if pkey != "" {
				ps, _ := matchName(parent, pkey, m.nameStr[sy.parent], m.nameKey[sy.parent], m.nameInit[sy.parent])
				v *= 0.5 + 0.5*ps
			}
			if sy.kind != "field" && sy.kind != "var" {
				v *= 1.05 // definitions one can call or use as a type first
			}
			score[s] = v
			if explain {
				why[s] = []string{fmt.Sprintf("name %s %s", how, m.nameStr[n])}
			}
		}
	}
	return score
}

// matchName scores a name against a query, both also given as keys
// (lower-case, no separators): 1 for the same name, less for the same key,
// a prefix, the initials of the name's parts, a substring, and a
// subsequence. Shorter names score higher among equals.
func matchName(q, qkey, name, key, inits string) (float64, string) {
	if key == "" {
		return 0, ""
	}
	short := float64(len(qkey)) / float64(len(key)) // in (0, 1] below
	switch {
	case name == q:
		return 1, "exact"
	case key == qkey:
		return 0.9, "same words"
	case strings.HasPrefix(key, qkey):
		return 0.6 + 0.2*short, "prefix"
	case inits == qkey:
		return 0.6, "initials"
	case strings.Contains(key, qkey):
		return 0.4 + 0.2*short, "inside"
	case len(qkey) >= 2 && subsequence(qkey, key):
		return 0.2 * math.Min(1, short*1.5), "subsequence"
	}
	return 0, ""
}

// initials is the first letter of each part of a name: parseFlagSet: pfs.
func initials(name string) string {
	var b strings.Builder
	splitInto(name, func(p string) { b.WriteByte(p[0]) })
	return b.String()
}

func subsequence(q, s string) bool {
	i := 0
	for j := 0; j < len(s) && i < len(q); j++ {
		if s[j] == q[i] {
			i++
		}
	}
	return i == len(q)
}
