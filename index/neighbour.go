package index

import (
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/search"

	"github.com/miramem/mira/mem"
)

// A conversation turn's index entry carries the text of the turn before it
// in its scope (Doc.Context), because a question is often asked in the
// words of the turn an answer replies to: "When did Caroline go to the
// support group?" is answered by "I went yesterday", after a turn that
// asked about the group. On LoCoMo (dev) this alone lifted BM25 recall@5
// from 0.548 to 0.633 and recall@10 from 0.619 to 0.721; the turn after,
// tried too, added little and would make every new turn change the index
// entry of the one before.
//
// Turns are ordered within their scope as mem.ComparePaths orders them:
// by file name, which is <created>__<id>.md, so by creation time and then
// id, across the role directories.

// TurnKey returns the scope of a conversation turn's path and the key that
// orders the scope's turns; ok is false for any other path. A turn here is
// a live file right in a role's directory, entries/<scope>/turns/<role>/.
func TurnKey(p string) (scope, key string, ok bool) {
	ep, err := mem.ParsePath(p)
	if err != nil || ep.Deleted || ep.Kind != mem.KindTurn || ep.Role == "" || ep.Shard != "" {
		return "", "", false
	}
	return ep.Scope, ep.Name, true
}

// TurnOrder orders conversation turns within their scopes, so that each
// turn's previous one can be found.
type TurnOrder struct {
	byScope map[string][]string // sorted by mem.ComparePaths
}

// NewTurnOrder orders the turn paths given (of any scopes, in any order);
// other paths are ignored.
func NewTurnOrder(paths []string) *TurnOrder {
	o := &TurnOrder{byScope: map[string][]string{}}
	for _, p := range paths {
		if s, _, ok := TurnKey(p); ok {
			o.byScope[s] = append(o.byScope[s], p)
		}
	}
	for _, ts := range o.byScope {
		slices.SortFunc(ts, mem.ComparePaths)
	}
	return o
}

// Previous returns the turn right before p in p's scope ("" for the first
// turn, or a path that is not a turn). p itself need not be in the order.
func (o *TurnOrder) Previous(p string) string {
	scope, _, ok := TurnKey(p)
	if !ok {
		return ""
	}
	ts := o.byScope[scope]
	i, _ := slices.BinarySearchFunc(ts, p, mem.ComparePaths)
	if i == 0 {
		return ""
	}
	return ts[i-1]
}

// next returns the turn right after p in p's scope, or "".
func (o *TurnOrder) next(p string) string {
	scope, _, ok := TurnKey(p)
	if !ok {
		return ""
	}
	ts := o.byScope[scope]
	i, found := slices.BinarySearchFunc(ts, p, mem.ComparePaths)
	if found {
		i++
	}
	if i < len(ts) {
		return ts[i]
	}
	return ""
}

// addDependents adds to the files to load the turns whose context changes
// with this update: the turn after each turn that is added, changed or
// removed. Without it a forgotten turn's text would stay findable through
// the index entry of the turn after it. Only the scopes with a changed
// turn are looked at.
func addDependents(ch *changes, man manifest, now int64) {
	var changed, prefixes []string
	removed, loading := map[string]bool{}, map[string]bool{}
	note := func(p string) {
		if s, _, ok := TurnKey(p); ok {
			changed = append(changed, p)
			if pre := mem.KindDir(s, mem.KindTurn) + "/"; !slices.Contains(prefixes, pre) {
				prefixes = append(prefixes, pre)
			}
		}
	}
	for _, o := range ch.load {
		loading[o.Path] = true
		note(o.Path)
	}
	for _, p := range ch.remove {
		removed[p] = true
		note(p)
	}
	if len(changed) == 0 {
		return
	}
	// The scopes' turns as indexed, plus the new ones; the removed ones
	// stay in the order so that their successors are found.
	var turns []string
	for p := range man {
		for _, pre := range prefixes {
			if strings.HasPrefix(p, pre) {
				turns = append(turns, p)
				break
			}
		}
	}
	for _, o := range ch.load {
		if _, indexed := man[o.Path]; !indexed {
			turns = append(turns, o.Path)
		}
	}
	order := NewTurnOrder(turns)
	for _, p := range changed {
		for next := order.next(p); next != ""; next = order.next(next) {
			if removed[next] {
				continue
			}
			if !loading[next] {
				if e, ok := man[next]; ok && e.broken == "" {
					ch.load = append(ch.load, obs{FileStat: FileStat{Path: next, Size: e.size, ModTime: e.mtime}, seen: now})
					loading[next] = true
				}
			}
			break
		}
	}
}

// A turn is found by its own words and by those of the turn before it,
// and the two are weighed apart. With the turn before in the same text,
// the question that an answer replies to shares every word of the answer's
// entry and is ranked beside it, often above it: recall@5 rose and
// recall@1 fell (docs/performance.md). So a turn with context has a
// second field, its own text alone, kept in the same postings under
// terms no word analyses to: ownPrefix and the analysed term, and
// ownLenTerm, whose frequency is the number of terms of the own text (the
// length BM25 normalises that field by). A text search scores such a row
// ownShare by its own text and the rest by both, each by BM25 as usual;
// a row without context, which is the same text either way, is scored
// as before.
const (
	ownPrefix  = "\x01"
	ownLenTerm = "\x02"
	// ownShare is the own text's share of a turn's lexical score.
	ownShare = 0.4
)

// addOwnTerms adds to terms, those of d's BM25 text, the terms of its own
// text alone when d has context.
func addOwnTerms(terms []byte, d *Doc) []byte {
	if d.Context == "" || len(terms) == 0 {
		return terms
	}
	own, n := analyse(d.Text)
	extra := []termFreq{{ownLenTerm, max(n, 1)}}
	eachTerm(own, func(term string, freq uint32) { extra = append(extra, termFreq{ownPrefix + term, freq}) })
	return mergeTerms(terms, extra)
}

// ownNorms fills ln.own from the rows' own lengths (ownLenTerm), the
// mean own length being that of every live row's own text: a row without
// context is its own text.
func (vs *vecStore) ownNorms(ln *lexNorms, length uint64) {
	ownLen := map[int]uint32{}
	vs.eachPosting(ownLenTerm, func(row int, freq uint32) {
		if ln.k[row] >= 0 {
			ownLen[row] = freq
		}
	})
	if len(ownLen) == 0 || ln.docs == 0 {
		return
	}
	total := length
	for row, n := range ownLen {
		total = total - uint64(vs.rows[row].flen) + uint64(n)
	}
	avg := float64(total) / float64(ln.docs)
	ln.own = make([]float64, len(vs.rows))
	for i := range ln.own {
		ln.own[i] = -1
	}
	for row, n := range ownLen {
		ln.own[row] = search.BM25_k1 * (1 - search.BM25_b + (search.BM25_b * float64(n) / avg))
	}
}

// ownScores adds to sc the BM25 scores of the own texts of the rows with
// context for the terms, as textTopGroups scores the whole texts: a term's
// documents are the rows whose own text has it, with context (its
// ownPrefix term) or without (plainDF, counted from the term's postings).
// Each term's own postings are decoded once.
func (vs *vecStore) ownScores(terms []string, plainDF []int, ln *lexNorms, sc *textScratch) error {
	idf := make([]float64, len(terms))
	ends := make([]int, len(terms)) // of each term's postings in posts
	posts := sc.ownPosts[:0]
	sumSq := 0.0
	for i, t := range terms {
		df := plainDF[i]
		err := vs.eachPosting(ownPrefix+t, func(row int, freq uint32) {
			if ln.own[row] >= 0 {
				df++
				if sc.matched[row] != 0 {
					posts = append(posts, lexPost{int32(row), freq})
				}
			}
		})
		if err != nil {
			return err
		}
		ends[i] = len(posts)
		idf[i] = math.Log(1 + (float64(ln.docs)-float64(df)+0.5)/(float64(df)+0.5))
		sumSq += idf[i] * idf[i]
	}
	sc.ownPosts = posts
	norm := 1.0 / math.Sqrt(sumSq)
	start := 0
	for i := range terms {
		weight := idf[i] * norm
		for _, p := range posts[start:ends[i]] {
			tf := math.Sqrt(float64(p.freq))
			sc.ownAcc[p.row] += idf[i] * (tf * search.BM25_k1) / (tf + ln.own[p.row]) * weight
			sc.ownMatched[p.row]++
		}
		start = ends[i]
	}
	return nil
}
