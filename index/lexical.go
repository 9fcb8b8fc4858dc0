package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/scorer"
	"github.com/blevesearch/bleve/v2/search/searcher"
)

// The lexical index lives in the vector store beside the rows: every row
// knows the length of its BM25 text, a base file holds the postings of its
// rows' terms, and a log record the terms of its row. A text search
// decodes the postings of its few terms and scores them into an array by
// row; filters are the rows' own (rowFilter). See "Words" in doc.go.

// textAnalyzer analyses bodies and query text alike: English, with
// possessives and stop words removed and Porter stemming, so that
// "deploying" finds "deployed" and a question finds statements.
const textAnalyzer = en.AnalyzerName

// termFreq is one distinct analysed term of a text and how often it occurs.
type termFreq struct {
	term string
	freq uint32
}

var (
	analyzerOnce sync.Once
	analyzerVal  analysis.Analyzer
	analyzerErr  error
)

// textAnalysis returns the analyser of entries and queries (textAnalyzer).
func textAnalysis() analysis.Analyzer {
	analyzerOnce.Do(func() {
		a, err := registry.NewCache().AnalyzerNamed(textAnalyzer)
		if err != nil {
			analyzerErr = err
			return
		}
		da, ok := a.(*analysis.DefaultAnalyzer)
		if !ok {
			analyzerErr = fmt.Errorf("an analyser of type %T", a)
			return
		}
		analyzerVal = newFastAnalyzer(da)
	})
	if analyzerErr != nil {
		panic(fmt.Sprintf("index: the %s analyser: %v", textAnalyzer, analyzerErr))
	}
	return analyzerVal
}

// lexText is the text a document is found by: its body and the turn
// before it.
func lexText(d *Doc) string {
	if d.Context != "" {
		return d.Text + "\n" + d.Context
	}
	return d.Text
}

// analyse returns the distinct terms of text, sorted, with their
// frequencies, encoded as appendTerms does (nil: none), and its number of
// terms counted with repeats (the length BM25 normalises by). The encoding
// is one allocation without pointers: a rebuild holds the terms of every
// document until it writes them, and a hundred thousand documents' worth
// of term strings cost the collector more than the analysis.
func analyse(text string) ([]byte, uint32) {
	var toks analysis.TokenStream
	if fa, ok := textAnalysis().(fastAnalyzer); ok {
		sc := tokScratchPool.Get().(*tokScratch)
		defer tokScratchPool.Put(sc)
		sc.text = append(sc.text[:0], text...)
		toks = fa.analyzeIn(sc.text, sc)
	} else {
		toks = textAnalysis().Analyze([]byte(text))
	}
	if len(toks) == 0 {
		return nil, 0
	}
	slices.SortFunc(toks, func(a, b *analysis.Token) int { return bytes.Compare(a.Term, b.Term) })
	distinct, size := 0, 0
	for i, t := range toks {
		if i == 0 || !bytes.Equal(t.Term, toks[i-1].Term) {
			distinct++
			size += len(t.Term) + 2*binary.MaxVarintLen32
		}
	}
	b := make([]byte, 0, size+binary.MaxVarintLen32)
	b = binary.AppendUvarint(b, uint64(distinct))
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && bytes.Equal(toks[j].Term, toks[i].Term) {
			j++
		}
		b = binary.AppendUvarint(b, uint64(len(toks[i].Term)))
		b = append(b, toks[i].Term...)
		b = binary.AppendUvarint(b, uint64(j-i))
		i = j
	}
	return b, uint32(len(toks))
}

// lexed is what the lexical index keeps of a document: its BM25 text's
// terms and length, and lexSum.
type lexed struct {
	terms []byte
	flen  uint32
	lsum  uint64
}

// lexOf analyses a loaded document (none when it failed to load).
func lexOf(d *Doc, err error) lexed {
	if err != nil {
		return lexed{}
	}
	text := lexText(d)
	terms, n := analyse(text)
	terms = addOwnTerms(terms, d)
	terms = addMentions(terms, d.Text, d.CreatedAt)
	return lexed{terms, n, lexSum(text, d.Role, d.Pin)}
}

// lexSum identifies what a row's lexical fields were made from.
func lexSum(text, role, pin string) uint64 {
	h := fnv.New64a()
	for _, s := range []string{text, role, pin} {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	return h.Sum64()
}

// The postings section of a base file, after its rows:
//
//	u32 terms, u32 term offsets (terms+1), u32 postings offsets (terms+1),
//	the terms' bytes, the postings
//
// The terms are sorted; term i is bytes [termOff[i], termOff[i+1]) of the
// terms' bytes and its postings bytes [postOff[i], postOff[i+1]) of the
// postings: uvarint document count, then per document the uvarint
// difference of its row from the one before (from 0 for the first) and
// the uvarint frequency. Rows are the base file's, in its order.

// appendLexSection encodes the postings of the documents whose terms
// (vecDoc.terms) are docTerms, the base file's rows in order. Terms get
// numbers as they come, the postings are counted per term and then laid
// out in one array, in row order: at 100k documents a map of growing
// slices took half a second.
func appendLexSection(b []byte, docTerms [][]byte) []byte {
	ids := map[string]uint32{}
	var terms []string
	var df []uint32
	n := 0
	for _, dt := range docTerms {
		eachTerm(dt, func(term string, _ uint32) {
			id, ok := ids[term]
			if !ok {
				id = uint32(len(terms))
				term = strings.Clone(term)
				ids[term] = id
				terms = append(terms, term)
				df = append(df, 0)
			}
			df[id]++
			n++
		})
	}
	start := make([]uint32, len(terms)+1)
	for id, c := range df {
		start[id+1] = start[id] + c
	}
	rows := make([]uint32, n)
	freqs := make([]uint32, n)
	fill := slices.Clone(start[:len(terms)])
	for i, dt := range docTerms {
		eachTerm(dt, func(term string, freq uint32) {
			id := ids[term]
			rows[fill[id]], freqs[fill[id]] = uint32(i), freq
			fill[id]++
		})
	}
	order := make([]uint32, len(terms))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(terms[a], terms[b]) })
	postings := make([]byte, 0, 3*n+binary.MaxVarintLen32*len(terms))
	termOff := make([]uint32, 0, len(terms)+1)
	postOff := make([]uint32, 0, len(terms)+1)
	tlen := 0
	for _, id := range order {
		termOff = append(termOff, uint32(tlen))
		tlen += len(terms[id])
		postOff = append(postOff, uint32(len(postings)))
		postings = binary.AppendUvarint(postings, uint64(df[id]))
		prev := uint32(0)
		for k := start[id]; k < start[id+1]; k++ {
			postings = binary.AppendUvarint(postings, uint64(rows[k]-prev))
			postings = binary.AppendUvarint(postings, uint64(freqs[k]))
			prev = rows[k]
		}
	}
	termOff = append(termOff, uint32(tlen))
	postOff = append(postOff, uint32(len(postings)))
	b = slices.Grow(b, 4+8*(len(terms)+1)+tlen+len(postings))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(terms)))
	for _, o := range termOff {
		b = binary.LittleEndian.AppendUint32(b, o)
	}
	for _, o := range postOff {
		b = binary.LittleEndian.AppendUint32(b, o)
	}
	for _, id := range order {
		b = append(b, terms[id]...)
	}
	return append(b, postings...)
}

// eachTerm calls fn with each term of terms, encoded as appendTerms
// encodes them (a document's own, known to be sound). The term is only
// valid during the call.
func eachTerm(terms []byte, fn func(term string, freq uint32)) {
	if len(terms) == 0 {
		return
	}
	r := rowReader{src: unsafe.String(unsafe.SliceData(terms), len(terms))}
	n := r.uvarint()
	for range n {
		term := r.str()
		freq := r.uvarint()
		if r.err != nil {
			return
		}
		fn(term, uint32(freq))
	}
}

// lexBase is a base file's postings section, read in place.
type lexBase struct {
	n              int
	termOff        string // n+1 u32s
	postOff        string // n+1 u32s
	terms, posting string
}

// parseLexSection checks the shape of a postings section and returns it.
// The postings themselves are checked as a search decodes them.
func parseLexSection(s string) (*lexBase, error) {
	if len(s) < 4 {
		return nil, errors.New("postings section cut short")
	}
	l := &lexBase{}
	n := l.u32(s, 0)
	if n > (len(s)-12)/8 {
		return nil, errors.New("bad term count")
	}
	l.n = n
	off := 4
	l.termOff, off = s[off:off+4*(n+1)], off+4*(n+1)
	l.postOff, off = s[off:off+4*(n+1)], off+4*(n+1)
	tlen, plen := l.u32(l.termOff, n), l.u32(l.postOff, n)
	if l.u32(l.termOff, 0) != 0 || l.u32(l.postOff, 0) != 0 || off+tlen+plen != len(s) {
		return nil, errors.New("postings section does not add up")
	}
	for i := range n {
		if l.u32(l.termOff, i) > l.u32(l.termOff, i+1) || l.u32(l.postOff, i) >= l.u32(l.postOff, i+1) {
			return nil, errors.New("postings offsets out of order")
		}
	}
	l.terms, l.posting = s[off:off+tlen], s[off+tlen:]
	for i := 1; i < n; i++ {
		if l.term(i-1) >= l.term(i) {
			return nil, errors.New("terms out of order")
		}
	}
	return l, nil
}

func (l *lexBase) u32(tab string, i int) int {
	return int(uint32(tab[4*i]) | uint32(tab[4*i+1])<<8 | uint32(tab[4*i+2])<<16 | uint32(tab[4*i+3])<<24)
}

func (l *lexBase) term(i int) string {
	return l.terms[l.u32(l.termOff, i):l.u32(l.termOff, i+1)]
}

// postings returns the encoded postings of term, "" when no base row has
// it.
func (l *lexBase) postings(term string) string {
	if l == nil {
		return ""
	}
	i, ok := sortSearch(l.n, func(i int) int { return strings.Compare(l.term(i), term) })
	if !ok {
		return ""
	}
	return l.posting[l.u32(l.postOff, i):l.u32(l.postOff, i+1)]
}

// sortSearch finds the index cmp says is 0 among n sorted ones.
func sortSearch(n int, cmp func(int) int) (int, bool) {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cmp(m) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < n && cmp(lo) == 0
}

// lexPost is a posting of a row the log added.
type lexPost struct {
	row  int32
	freq uint32
}

// eachPosting calls fn with every posting of term: the base's, then the
// log's, dead rows included. An error means the base's are damaged.
func (vs *vecStore) eachPosting(term string, fn func(row int, freq uint32)) error {
	if p := vs.lex.postings(term); p != "" {
		if err := decodePostings(p, vs.nbase, fn); err != nil {
			return err
		}
	}
	for _, lp := range vs.lexLog[term] {
		fn(int(lp.row), lp.freq)
	}
	return nil
}

// decodePostings calls fn with each posting of one term's encoded
// postings p, checking that they add up and name rows below nrows.
func decodePostings(p string, nrows int, fn func(row int, freq uint32)) error {
	df, n := uvarintString(p)
	if n <= 0 || df > uint64(len(p)) {
		return errors.New("bad postings")
	}
	p = p[n:]
	row := uint64(0)
	for range df {
		d, n := uvarintString(p)
		if n <= 0 {
			return errors.New("bad postings")
		}
		f, m := uvarintString(p[n:])
		if m <= 0 || f == 0 || f > math.MaxUint32 {
			return errors.New("bad postings")
		}
		p = p[n+m:]
		row += d
		if row >= uint64(nrows) {
			return errors.New("a posting past the rows")
		}
		fn(int(row), uint32(f))
	}
	if p != "" {
		return errors.New("postings longer than their count")
	}
	return nil
}

// addTerms records the terms of the log's row.
func (vs *vecStore) addTerms(row int, terms []termFreq) {
	if len(terms) == 0 {
		return
	}
	if vs.lexLog == nil {
		vs.lexLog = map[string][]lexPost{}
	}
	for _, t := range terms {
		vs.lexLog[t.term] = append(vs.lexLog[t.term], lexPost{int32(row), t.freq})
	}
}

// baseTerms returns the terms of every base row, from the postings, for a
// compaction.
func (vs *vecStore) baseTerms() ([][]termFreq, error) {
	out := make([][]termFreq, vs.nbase)
	l := vs.lex
	if l == nil {
		return out, nil
	}
	for i := range l.n {
		term := strings.Clone(l.term(i))
		err := decodePostings(l.posting[l.u32(l.postOff, i):l.u32(l.postOff, i+1)], vs.nbase, func(row int, freq uint32) {
			out[row] = append(out[row], termFreq{term, freq})
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lexNorms is what BM25 needs of every row, computed once per store:
// the live documents, and for each row the term k1·(1 − b + b·length/avg)
// of its score's denominator, or -1 for a dead row. A search reads it for
// every posting of its terms, a few hundred thousand at 100,000 entries:
// 8 bytes a row in a row of their own, rather than the rows' fields, which
// lie 150 bytes apart.
type lexNorms struct {
	once sync.Once
	docs int
	// deadBase counts the dead rows of the base file: with none, a term's
	// live documents in the base are its postings' count (liveDF).
	deadBase int
	k        []float64
	// own is k for the own text of a row with context (addOwnTerms),
	// -1 for the others; nil when no row has context.
	own []float64
}

// norms returns the store's lexNorms.
func (vs *vecStore) norms() *lexNorms {
	ln := vs.lexNorm
	if ln == nil {
		ln = &lexNorms{} // a store that is not searched twice
	}
	ln.once.Do(func() {
		var length uint64
		for i := range vs.rows {
			if r := &vs.rows[i]; !r.dead {
				ln.docs++
				length += uint64(r.flen)
			} else if i < vs.nbase {
				ln.deadBase++
			}
		}
		ln.k = make([]float64, len(vs.rows))
		avg := float64(length) / float64(max(ln.docs, 1))
		for i := range vs.rows {
			ln.k[i] = -1
			if r := &vs.rows[i]; !r.dead && avg > 0 {
				ln.k[i] = search.BM25_k1 * (1 - search.BM25_b + (search.BM25_b * float64(r.flen) / avg))
			}
		}
		vs.ownNorms(ln, length)
	})
	return ln
}

// textTerms returns the analysed terms of a text query, repeats included,
// and the other forms of its abbreviations (expandAbbreviations); and the
// members of the families its words name (familyGroups).
func textTerms(text string) ([]string, []termGroup) {
	a := textAnalysis()
	var terms []string
	for _, tok := range a.Analyze([]byte(text)) {
		terms = append(terms, string(tok.Term))
	}
	terms = append(terms, expandAbbreviations(a, text)...)
	return terms, familyGroups(a, text, terms)
}

// textScratch is the per-row state of one text search, reused.
type textScratch struct {
	acc     []float64 // summed term scores, by row
	matched []uint16  // terms matched, by row
	touched []uint32  // rows with a match, in the order found
	// ownAcc and ownMatched are acc and matched of the own texts of rows
	// with context (addOwnTerms).
	ownAcc     []float64
	ownMatched []uint16
	ownPosts   []lexPost // the own postings of one search's terms
	// best is a group's best score by row, found the rows it scored
	// (zeroed after each group); extra and extraIn the groups' sums by
	// row (zeroed with the rows touched). Made on the first query with
	// a group: at a million entries a group of common words scored
	// hundreds of thousands of rows, through maps, a third of a second.
	best, extra, extraIn []float64
	found                []uint32
}

var textScratchPool keptPool[textScratch]

// lexHit is a row found by words and its BM25 score.
type lexHit struct {
	row   int
	score float64
}

// textTop returns the n best live rows that f lets through (nil: all) for
// the terms OR-ed, by BM25 as bleve scores a disjunction of term queries:
// each term's score weighted by the query norm, summed over the terms a
// row has, and scaled by the share of the query's terms it has. Ties go
// to the earlier row.
func (vs *vecStore) textTop(terms []string, n int, f *rowFilter) ([]lexHit, error) {
	return vs.textTopGroups(terms, nil, n, f)
}

// liveDF returns the number of live rows among term's postings. Without
// dead rows in the base its base postings are counted by their count,
// without decoding them (a common word has hundreds of thousands at a
// million entries); they are checked when they are scored.
func (vs *vecStore) liveDF(term string, ln *lexNorms) (int, error) {
	if ln.deadBase > 0 {
		df := 0
		err := vs.eachPosting(term, func(row int, _ uint32) {
			if ln.k[row] >= 0 {
				df++
			}
		})
		return df, err
	}
	df := 0
	if p := vs.lex.postings(term); p != "" {
		n, w := uvarintString(p)
		if w <= 0 || n > uint64(len(p)) {
			return 0, errors.New("bad postings")
		}
		df = int(n)
	}
	for _, lp := range vs.lexLog[term] {
		if ln.k[lp.row] >= 0 {
			df++
		}
	}
	return df, nil
}

// scoreTerm adds the BM25 score of term, times weight, to the rows of
// its postings in sc: eachPosting with the score written out, the loop
// every posting of a query's terms goes through.
func (vs *vecStore) scoreTerm(term string, idf, weight float64, ln *lexNorms, sc *textScratch) error {
	add := func(d int, freq uint32) {
		k := ln.k[d]
		if k < 0 {
			return
		}
		var tf float64
		if freq < scorer.MaxSqrtCache {
			tf = scorer.SqrtCache[int(freq)]
		} else {
			tf = math.Sqrt(float64(freq))
		}
		if sc.matched[d] == 0 {
			sc.touched = append(sc.touched, uint32(d))
		}
		sc.acc[d] += idf * (tf * search.BM25_k1) / (tf + k) * weight
		sc.matched[d]++
	}
	if p := vs.lex.postings(term); p != "" {
		if err := scorePostings(p, vs.nbase, ln.k, sc, idf, weight); err != nil {
			return err
		}
	}
	for _, lp := range vs.lexLog[term] {
		add(int(lp.row), lp.freq)
	}
	return nil
}

// scorePostings is scoreTerm over a base term's encoded postings p,
// checked as decodePostings checks them.
func scorePostings(p string, nrows int, ks []float64, sc *textScratch, idf, weight float64) error {
	df, n := uvarintString(p)
	if n <= 0 || df > uint64(len(p)) {
		return errors.New("bad postings")
	}
	p = p[n:]
	acc, matched := sc.acc[:nrows], sc.matched[:nrows]
	ks = ks[:nrows]
	row := uint64(0)
	for range df {
		var d, f uint64
		// One byte each, most of the time: a gap under 128 rows and a
		// frequency under 128.
		if len(p) >= 2 && p[0] < 0x80 && p[1] < 0x80 {
			d, f = uint64(p[0]), uint64(p[1])
			p = p[2:]
		} else {
			var n, m int
			d, n = uvarintString(p)
			if n <= 0 {
				return errors.New("bad postings")
			}
			f, m = uvarintString(p[n:])
			if m <= 0 {
				return errors.New("bad postings")
			}
			p = p[n+m:]
		}
		if f == 0 || f > math.MaxUint32 {
			return errors.New("bad postings")
		}
		row += d
		if row >= uint64(nrows) {
			return errors.New("a posting past the rows")
		}
		k := ks[row]
		if k < 0 {
			continue
		}
		var tf float64
		if f < scorer.MaxSqrtCache {
			tf = scorer.SqrtCache[int(f)]
		} else {
			tf = math.Sqrt(float64(f))
		}
		if matched[row] == 0 {
			sc.touched = append(sc.touched, uint32(row))
		}
		// The same operations in the same order as in scoreTerm (and
		// as bleve's), so the sums are the same to the bit.
		acc[row] += idf * (tf * search.BM25_k1) / (tf + k) * weight
		matched[row]++
	}
	if p != "" {
		return errors.New("postings longer than their count")
	}
	return nil
}

// textTopGroups is textTop with groups of terms besides the terms: a row
// scores the best of a group's terms, as a term of the query would, times
// the group's weight, and the group counts as that weight of a term in the
// share of the query's terms the row has. Without groups it is textTop.
func (vs *vecStore) textTopGroups(terms []string, groups []termGroup, n int, f *rowFilter) ([]lexHit, error) {
	if len(terms) == 0 || len(terms) > math.MaxUint16 || n <= 0 {
		return nil, nil
	}
	ln := vs.norms()
	docs := ln.docs
	if docs == 0 {
		return nil, nil
	}
	sc := textScratchPool.get()
	defer func() {
		for _, d := range sc.touched {
			sc.acc[d], sc.matched[d] = 0, 0
			if ln.own != nil {
				sc.ownAcc[d], sc.ownMatched[d] = 0, 0
			}
		}
		sc.touched = sc.touched[:0]
		textScratchPool.put(sc)
	}()
	if len(sc.acc) < len(vs.rows) {
		grow := len(vs.rows) + len(vs.rows)/16
		sc.acc = make([]float64, grow)
		sc.matched = make([]uint16, grow)
		sc.ownAcc, sc.ownMatched = nil, nil
	}
	if ln.own != nil && len(sc.ownAcc) < len(sc.acc) {
		sc.ownAcc = make([]float64, len(sc.acc))
		sc.ownMatched = make([]uint16, len(sc.acc))
	}
	// Each term's live documents, counted by a first pass over its
	// postings (decoding them twice costs less than keeping them: a
	// question of common words has hundreds of thousands at 100k).
	type clause struct {
		term string
		df   int
		idf  float64
	}
	clauses := make([]clause, len(terms))
	var plainDF []int // by term: live rows without context (ownScores)
	if ln.own != nil {
		plainDF = make([]int, len(terms))
	}
	for i, t := range terms {
		var df int
		var err error
		if plainDF == nil {
			df, err = vs.liveDF(t, ln)
		} else {
			err = vs.eachPosting(t, func(row int, _ uint32) {
				if ln.k[row] >= 0 {
					df++
					if ln.own[row] < 0 {
						plainDF[i]++
					}
				}
			})
		}
		if err != nil {
			return nil, err
		}
		clauses[i] = clause{t, df, math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))}
	}
	if len(clauses) <= searcher.DisjunctionHeapTakeover {
		// bleve's slice searcher adds a document's terms in the order of
		// their document counts.
		slices.SortStableFunc(clauses, func(a, b clause) int { return a.df - b.df })
	}
	sumSq := 0.0
	for _, c := range clauses {
		sumSq += c.idf * c.idf
	}
	norm := 1.0 / math.Sqrt(sumSq)
	for _, c := range clauses {
		if err := vs.scoreTerm(c.term, c.idf, c.idf*norm, ln, sc); err != nil {
			return nil, err
		}
	}
	if ln.own != nil {
		if err := vs.ownScores(terms, plainDF, ln, sc); err != nil {
			return nil, err
		}
	}
	// A group's best term for each row it matches, weighted: few rows
	// name the members of a family.
	var (
		extra   []float64 // summed over the groups, by row; nil: no group matched
		extraIn []float64 // the groups' weights a row matched
		groupW  float64
	)
	for _, g := range groups {
		groupW += g.weight
		if len(sc.best) < len(sc.acc) {
			sc.best = make([]float64, len(sc.acc))
		}
		best, found := sc.best, sc.found[:0]
		for _, t := range g.terms {
			df := 0
			err := vs.eachPosting(t, func(row int, _ uint32) {
				if ln.k[row] >= 0 {
					df++
				}
			})
			if err != nil {
				return nil, err
			}
			if df == 0 {
				continue
			}
			idf := math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
			vs.eachPosting(t, func(d int, freq uint32) {
				k := ln.k[d]
				if k < 0 {
					return
				}
				tf := math.Sqrt(float64(freq))
				if best[d] == 0 { // every score is above 0
					found = append(found, uint32(d))
				}
				best[d] = max(best[d], idf*(tf*search.BM25_k1)/(tf+k)*idf*norm)
			})
		}
		sc.found = found
		for _, d := range found {
			s := best[d]
			best[d] = 0
			if extra == nil {
				if len(sc.extra) < len(sc.acc) {
					sc.extra, sc.extraIn = make([]float64, len(sc.acc)), make([]float64, len(sc.acc))
				}
				extra, extraIn = sc.extra, sc.extraIn
			}
			if sc.matched[d] == 0 && extraIn[d] == 0 {
				sc.touched = append(sc.touched, d)
			}
			extra[d] += g.weight * s
			extraIn[d] += g.weight
		}
	}
	if extra != nil {
		defer func() {
			for _, d := range sc.touched {
				extra[d], extraIn[d] = 0, 0
			}
		}()
	}
	better := func(a, b lexHit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return a.row - b.row
	}
	total := float64(len(terms)) + groupW
	// The facts among the rows found add their terms to the rows they
	// name (facts.go).
	own := func(d int) (float64, float64) {
		if extra == nil {
			return sc.acc[d], float64(sc.matched[d])
		}
		return sc.acc[d] + extra[d], float64(sc.matched[d]) + extraIn[d]
	}
	var keys map[int]factKey
	if len(vs.from) > 0 {
		keys = vs.lexKeys(sc.touched, f, own, func(a, m float64) float64 { return a * (min(m, total) / total) })
		for d := range keys {
			if sc.matched[d] == 0 && (extraIn == nil || extraIn[d] == 0) {
				sc.touched = append(sc.touched, uint32(d))
			}
		}
	}
	insert := n <= 256
	top := make([]lexHit, 0, min(n, len(sc.touched))+1)
	for _, d := range sc.touched {
		if f != nil && !f.pass(&vs.rows[d]) {
			continue
		}
		h := lexHit{int(d), sc.acc[d] * (float64(sc.matched[d]) / total)}
		if extra != nil {
			h.score = (sc.acc[d] + extra[d]) * ((float64(sc.matched[d]) + extraIn[d]) / total)
		}
		if keys != nil {
			if k, ok := keys[int(d)]; ok {
				a, m := own(int(d))
				h.score = (a + k.acc) * (min(m+k.matched, total) / total)
			}
		}
		if ln.own != nil && ln.own[d] >= 0 {
			h.score = (1-ownShare)*h.score + ownShare*sc.ownAcc[d]*(float64(sc.ownMatched[d])/float64(len(terms)))
		}
		if !insert {
			top = append(top, h)
			continue
		}
		if len(top) == n && better(h, top[n-1]) >= 0 {
			continue
		}
		i, _ := slices.BinarySearchFunc(top, h, better)
		top = slices.Insert(top, i, h)
		if len(top) > n {
			top = top[:n]
		}
	}
	if !insert {
		slices.SortFunc(top, better)
		top = top[:min(n, len(top))]
	}
	return top, nil
}

// newest returns the n newest live rows that pass the query's filters as
// candidates, newest first; rows without a creation time come last, and
// ties go by path.
func (vs *vecStore) newest(q Query, n int) []Candidate {
	f := newRowFilter(vs, q)
	before := func(a, b int) bool {
		ra, rb := &vs.rows[a], &vs.rows[b]
		if ra.hasCreated != rb.hasCreated {
			return ra.hasCreated
		}
		if ra.created != rb.created {
			return ra.created > rb.created
		}
		return ra.path < rb.path
	}
	var top []int
	for i := range vs.rows {
		r := &vs.rows[i]
		if r.dead || f != nil && !f.pass(r) {
			continue
		}
		if len(top) == n && !before(i, top[n-1]) {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, i, func(a, b int) int {
			if before(a, b) {
				return -1
			}
			return 1
		})
		top = slices.Insert(top, at, i)
		if len(top) > n {
			top = top[:n]
		}
	}
	out := make([]Candidate, len(top))
	for i, r := range top {
		out[i].Path, out[i].vrow = vs.rows[r].path, r+1
		vs.fields(r, &out[i])
	}
	return out
}
