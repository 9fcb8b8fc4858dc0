package index

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/search"
)

// TestAnalyse: terms are the analyser's, distinct and sorted, with their
// counts; the length counts repeats.
func TestAnalyse(t *testing.T) {
	enc, n := analyse("Deploying the deployment; deployed on Friday. Friday's deploy!")
	terms := decodeTerms(enc)
	want := []termFreq{{"deploi", 3}, {"deploy", 1}, {"fridai", 2}}
	if !slices.Equal(terms, want) || n != 6 {
		t.Errorf("analyse = %v, %d; want %v, 6", terms, n, want)
	}
	if terms, n := analyse("the of and"); terms != nil || n != 0 {
		t.Errorf("stop words: %v, %d", terms, n)
	}
}

// TestAnalyseReusesNothingItReturns analyses many texts, one after the
// other and from several goroutines, through analyse's reused room and
// through the analyser alone: the terms must agree, so nothing analyse
// returns or keeps (the stems) shares the room the next text is made in.
func TestAnalyseReusesNothingItReturns(t *testing.T) {
	slow := referenceAnalyzer(textAnalysis().(fastAnalyzer).a)
	want := func(text string) []termFreq {
		n := map[string]uint32{}
		for _, tok := range slow.Analyze([]byte(text)) {
			n[string(tok.Term)]++
		}
		var out []termFreq
		for term, f := range n {
			out = append(out, termFreq{term, f})
		}
		slices.SortFunc(out, func(a, b termFreq) int { return strings.Compare(a.term, b.term) })
		return out
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range 500 {
				var sb strings.Builder
				for range 5 + rng.IntN(60) {
					w := vocabulary[rng.IntN(len(vocabulary))]
					if rng.IntN(4) == 0 {
						w += []string{"ing", "ed", "s", "'s", "ation"}[rng.IntN(5)]
					}
					sb.WriteString(w + []string{" ", ", ", ". ", "; "}[rng.IntN(4)])
				}
				text := sb.String()
				enc, _ := analyse(text)
				if got, w := decodeTerms(enc), want(text); !slices.Equal(got, w) {
					t.Errorf("%q: %v, want %v", text, got, w)
					return
				}
			}
		})
	}
	wg.Wait()
}

// lexFixture is a vector store whose rows came from a base file and a log
// that adds, replaces and removes rows, with what each live path holds.
type lexFixture struct {
	vs   *vecStore
	live map[string]vecDoc
}

func newLexFixture(t *testing.T, seed uint64) lexFixture {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	words := vocabulary[:60]
	doc := func(i int) vecDoc {
		var b strings.Builder
		for range 1 + rng.IntN(30) {
			// Skewed, so that some terms are common and others rare.
			b.WriteString(words[int(float64(len(words))*math.Pow(rng.Float64(), 2))])
			b.WriteByte(' ')
		}
		lx := lexOf(&Doc{Text: b.String()}, nil)
		return vecDoc{
			path: fmt.Sprintf("entries/s/%04d.md", i), id: fmt.Sprint(i),
			kind: []string{"fact", "note", "turn"}[rng.IntN(3)], scope: []string{"a", "b"}[rng.IntN(2)],
			created: t0.Add(time.Duration(i) * time.Hour), terms: lx.terms, flen: lx.flen, lsum: lx.lsum,
		}
	}
	dir := t.TempDir()
	live := map[string]vecDoc{}
	var base []vecDoc
	for i := range 200 {
		d := doc(i)
		base = append(base, d)
		live[d.path] = d
	}
	baseName, log := vecFiles(dir, 1)
	if err := writeVecBase(baseName, "emb", 0, slices.Clone(base)); err != nil {
		t.Fatal(err)
	}
	var recs []byte
	for i := range 120 {
		switch {
		case i < 20: // removed
			p := base[i*7].path
			recs = logRecord(recs, &vecDoc{path: p}, true)
			delete(live, p)
		case i < 40: // replaced
			d := doc(i*5 + 1)
			recs = logRecord(recs, &d, false)
			live[d.path] = d
		default: // added, some added twice
			d := doc(200 + i%90)
			recs = logRecord(recs, &d, false)
			live[d.path] = d
		}
	}
	n, err := appendLog(log, 0, recs)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := loadVecStore(dir, meta{Embedder: "emb", VecSeq: 1, VecLog: n}, true)
	if err != nil {
		t.Fatal(err)
	}
	return lexFixture{vs, live}
}

// reference scores the live documents for terms as textTop documents it,
// from the documents themselves: the n best that pass keep, best first,
// ties by row.
func (fx lexFixture) reference(terms []string, n int, keep func(vecDoc) bool) []lexHit {
	docs, length := 0, 0.0
	df := map[string]int{}
	for _, d := range fx.live {
		docs++
		length += float64(d.flen)
		for _, tf := range decodeTerms(d.terms) {
			df[tf.term]++
		}
	}
	avg := length / float64(docs)
	idf := func(t string) float64 {
		return math.Log(1 + (float64(docs)-float64(df[t])+0.5)/(float64(df[t])+0.5))
	}
	sumSq := 0.0
	for _, t := range terms {
		sumSq += idf(t) * idf(t)
	}
	var hits []lexHit
	for p, d := range fx.live {
		score, matched := 0.0, 0
		dt := decodeTerms(d.terms)
		for _, t := range terms {
			i, ok := slices.BinarySearchFunc(dt, t, func(a termFreq, t string) int { return strings.Compare(a.term, t) })
			if !ok {
				continue
			}
			tf := math.Sqrt(float64(dt[i].freq))
			score += idf(t) * (tf * search.BM25_k1) / (tf + search.BM25_k1*(1-search.BM25_b+search.BM25_b*float64(d.flen)/avg)) *
				idf(t) / math.Sqrt(sumSq)
			matched++
		}
		if matched == 0 || keep != nil && !keep(d) {
			continue
		}
		hits = append(hits, lexHit{fx.vs.find(p), score * float64(matched) / float64(len(terms))})
	}
	slices.SortFunc(hits, func(a, b lexHit) int { return cmp.Or(cmp.Compare(b.score, a.score), a.row-b.row) })
	return hits[:min(n, len(hits))]
}

// TestTextTopMatchesReference: over a base file and a log that adds,
// replaces and removes rows, textTop finds what BM25 over the live
// documents finds, with and without filters, for queries with repeated,
// unknown and many terms.
func TestTextTopMatchesReference(t *testing.T) {
	for seed := range uint64(3) {
		fx := newLexFixture(t, seed)
		rng := rand.New(rand.NewPCG(seed, 2))
		compared := 0
		for q := range 300 {
			var terms []string
			for range 1 + rng.IntN(14) {
				w := vocabulary[rng.IntN(70)] // a few the documents never use
				terms = append(terms, textTerm(t, w))
			}
			n := []int{1, 5, 30, 400}[q%4]
			var f *rowFilter
			var keep func(vecDoc) bool
			switch q % 3 {
			case 1:
				f = newRowFilter(fx.vs, Query{Kinds: []string{"note", "turn"}})
				keep = func(d vecDoc) bool { return d.kind != "fact" }
			case 2:
				f = newRowFilter(fx.vs, Query{Scopes: []string{"b"}, Since: t0.Add(100 * time.Hour)})
				keep = func(d vecDoc) bool { return d.scope == "b" && !d.created.Before(t0.Add(100*time.Hour)) }
			}
			got, err := fx.vs.textTop(terms, n, f)
			if err != nil {
				t.Fatal(err)
			}
			want := fx.reference(terms, n, keep)
			if len(got) != len(want) {
				t.Fatalf("seed %d %v n=%d: %d hits, want %d", seed, terms, n, len(got), len(want))
			}
			for i := range got {
				// The sums add the same terms in another order: the
				// last bits may differ, and the order of hits that close.
				if math.Abs(got[i].score-want[i].score) > 1e-9*want[i].score {
					t.Fatalf("seed %d %v n=%d: hit %d scores %v, want %v", seed, terms, n, i, got[i].score, want[i].score)
				}
				if got[i].row != want[i].row && math.Abs(got[i].score-want[i].score) > 1e-12 {
					t.Fatalf("seed %d %v n=%d: hit %d is row %d, want %d", seed, terms, n, i, got[i].row, want[i].row)
				}
				if fx.vs.rows[got[i].row].dead {
					t.Fatalf("a dead row found")
				}
			}
			compared += len(got)
		}
		if compared < 5000 {
			t.Errorf("seed %d: only %d hits compared", seed, compared)
		}
	}
}

// textTerm is the one term word analyses to.
func textTerm(t *testing.T, w string) string {
	terms := decodeTerms(first(analyse(w)))
	if len(terms) != 1 {
		t.Fatalf("%q analyses to %v", w, terms)
	}
	return terms[0].term
}

// TestLexCompaction: a base file written from the live rows (a
// compaction) holds the same postings as the base and log it replaces.
func TestLexCompaction(t *testing.T) {
	fx := newLexFixture(t, 7)
	docs, err := fx.vs.liveDocs()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base, _ := vecFiles(dir, 2)
	if err := writeVecBase(base, "emb", 0, docs); err != nil {
		t.Fatal(err)
	}
	vs, err := loadVecStore(dir, meta{Embedder: "emb", VecSeq: 2}, true)
	if err != nil {
		t.Fatal(err)
	}
	if vs.lexLog != nil || vs.lex.n == 0 {
		t.Fatalf("the compacted store has %d log terms and %d base terms", len(vs.lexLog), vs.lex.n)
	}
	for _, w := range vocabulary[:60] {
		term := textTerm(t, w)
		a, _ := fx.vs.textTop([]string{term}, 1000, nil)
		b, _ := vs.textTop([]string{term}, 1000, nil)
		if len(a) != len(b) {
			t.Fatalf("%s: %d hits before compaction, %d after", term, len(a), len(b))
		}
		for i := range a {
			if fx.vs.rows[a[i].row].path != vs.rows[b[i].row].path && a[i].score != b[i].score || math.Abs(a[i].score-b[i].score) > 1e-12 {
				t.Fatalf("%s: hit %d differs: %s %v, %s %v", term, i, fx.vs.rows[a[i].row].path, a[i].score, vs.rows[b[i].row].path, b[i].score)
			}
		}
	}
}

// TestLexSectionDamage: a postings section whose offsets or postings do
// not add up is refused, at load or when a search decodes it, never read
// past its end.
func TestLexSectionDamage(t *testing.T) {
	docs := []vecDoc{
		{path: "a", terms: appendTerms(nil, []termFreq{{"alpha", 1}, {"beta", 2}}), flen: 3},
		{path: "b", terms: appendTerms(nil, []termFreq{{"beta", 1}}), flen: 1},
	}
	sec := string(appendLexSection(nil, [][]byte{docs[0].terms, docs[1].terms}))
	l, err := parseLexSection(sec)
	if err != nil || l.n != 2 || l.postings("beta") == "" || l.postings("gamma") != "" {
		t.Fatalf("parse: %v, %+v", err, l)
	}
	for cut := range len(sec) {
		if _, err := parseLexSection(sec[:cut]); err == nil {
			t.Errorf("a section cut to %d of %d bytes accepted", cut, len(sec))
		}
	}
	for i := range len(sec) {
		for _, x := range []byte{1, 0x80, 0xff} {
			b := []byte(sec)
			b[i] ^= x
			l, err := parseLexSection(string(b))
			if err != nil {
				continue
			}
			vs := &vecStore{lex: l, nbase: 2, rows: []vecRow{{path: "a", flen: 3}, {path: "b", flen: 1}}}
			for _, term := range []string{"alpha", "beta"} {
				vs.eachPosting(term, func(row int, _ uint32) {
					if row < 0 || row >= 2 {
						t.Fatalf("byte %d ^ %#x: a posting of row %d", i, x, row)
					}
				})
			}
		}
	}
}

func first[A, B any](a A, _ B) A { return a }

// TestFilterDropsNoKind: a filter of kinds leaves out a document without
// a kind, even when it names every kind the others have.
func TestFilterDropsNoKind(t *testing.T) {
	f := newFake(t)
	generate(t, f, 300)
	f.writeFile(t, "entries/global/notes/20261001T000000Z__NOKIND.md", "id: NOKIND\nscope: global\n---\n"+vocabulary[3]+"\n", oldTime)
	ix := mustOpen(t, f, opts(nil))
	vq, err := ix.vectorQuery("anything")
	if err != nil {
		t.Fatal(err)
	}
	defer vq.release()
	q := Query{Text: vocabulary[3], Kinds: []string{"fact", "decision", "note", "preference", "turn"}}
	res, err := ix.lexical(q, 400, vq.side.vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res {
		if strings.Contains(h.Path, "NOKIND") {
			t.Errorf("the document of no kind passed a filter of kinds")
		}
	}
}

// TestVecBaseByteOrder: a base file is the same byte for byte whether the
// vectors go out as they lie in memory (a little-endian machine) or are
// encoded one by one (a big-endian one), and reads back the same either
// way; a row without a vector, and one pending, keep their flags.
func TestVecBaseByteOrder(t *testing.T) {
	defer func(le bool) { nativeLittleEndian = le }(nativeLittleEndian)
	const dim = 5
	var docs []vecDoc
	for i := range 300 {
		d := vecDoc{path: fmt.Sprintf("entries/global/notes/%03d.md", i), scope: "global", created: time.Unix(int64(i), 0),
			terms: appendTerms(nil, []termFreq{{fmt.Sprint("t", i%7), 1}}), flen: 1}
		switch i % 10 {
		case 3:
		case 4:
			d.pending = true
		default:
			d.vec = make([]float32, dim)
			for j := range d.vec {
				d.vec[j] = float32(i*dim+j) / 7
			}
		}
		docs = append(docs, d)
	}
	var files [2][]byte
	for k, le := range []bool{true, false} {
		nativeLittleEndian = le
		dir := t.TempDir()
		base, _ := vecFiles(dir, 1)
		if err := writeVecBase(base, "emb", dim, slices.Clone(docs)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(base)
		if err != nil {
			t.Fatal(err)
		}
		files[k] = b
		vs, err := loadVecStore(dir, meta{Embedder: "emb", Dim: dim, VecSeq: 1, Docs: len(docs)}, false)
		if err != nil {
			t.Fatalf("little-endian %v: %v", le, err)
		}
		for i := range docs {
			r := vs.find(docs[i].path)
			if r < 0 {
				t.Fatalf("little-endian %v: %s not found", le, docs[i].path)
			}
			if got := vs.vector(r); !slices.Equal(got, docs[i].vec) {
				t.Fatalf("little-endian %v: %s: vector %v, want %v", le, docs[i].path, got, docs[i].vec)
			}
			if vs.rows[r].pending != docs[i].pending {
				t.Fatalf("little-endian %v: %s: pending %v", le, docs[i].path, vs.rows[r].pending)
			}
		}
		vs.close()
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the base files of the two byte orders differ")
	}
}
