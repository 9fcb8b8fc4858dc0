package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/searcher"
)

// nearScore reports whether two scores differ only in their last bits.
func nearScore(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

// TestTextTopMatchesBleve: for queries of one to twenty-five words (repeats,
// words no document has and abbreviations among them, so that both of
// bleve's disjunction searchers are compared), over an index of several
// segments with deleted documents, textTop returns bleve's hits in bleve's
// order with bleve's scores, for the kept handle's statistics and for the
// snapshot's own.
func TestTextTopMatchesBleve(t *testing.T) {
	f := newFake(t)
	generate(t, f, 1500)
	mustOpen(t, f, opts(nil)).Close()
	// More segments, and deleted documents in the first ones.
	r := rand.New(rand.NewPCG(7, 8))
	for round := range 3 {
		for i := range 40 {
			f.writeDoc(t, fdoc{id: fmt.Sprintf("U%d-%d", round, i), created: t0.Add(time.Duration(i) * time.Minute),
				text: strings.Join([]string{vocabulary[r.IntN(len(vocabulary))], vocabulary[r.IntN(40)], "k8s deploy"}, " ")})
		}
		mustOpen(t, f, opts(nil)).Close()
	}
	st, err := StatFiles(f.root)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(st); i += 7 {
		f.remove(t, st[i].Path)
	}
	// Taken in, and the index closed: segments merging in the background
	// would change the statistics between the two searches compared.
	mustOpen(t, f, opts(nil)).Close()
	queries := []string{"k8s", "kubernetes deploy", "zzzunknown", "deploy deploy deploy"}
	for range 60 {
		var words []string
		for range 1 + r.IntN(25) {
			words = append(words, vocabulary[r.IntN(len(vocabulary))])
		}
		if r.IntN(4) == 0 {
			words = append(words, "qqqnothing")
		}
		queries = append(queries, strings.Join(words, " "))
	}
	for _, keep := range []bool{false, true} {
		o := opts(nil)
		if keep {
			o.Keep = new(Keep)
		}
		ix := mustOpen(t, f, o)
		compared, exactly, inexact := 0, 0, 0
		for _, q := range queries {
			for _, n := range []int{1, 10, 45, 300} {
				got, ok, err := ix.textTop(ix.c.ctx(), ix.textTerms(q), n, nil)
				if err != nil || !ok {
					t.Fatalf("textTop(%q): %v, %v", q, ok, err)
				}
				want, err := ix.search(bleve.NewSearchRequestOptions(ix.textQuery(q), n, 0, false))
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want.Hits) {
					t.Fatalf("keep %v, %q n=%d: %d hits, bleve %d", keep, q, n, len(got), len(want.Hits))
				}
				exact := len(ix.textTerms(q)) <= searcher.DisjunctionHeapTakeover
				for i, h := range want.Hits {
					g := got[i]
					if g.ID == h.ID && g.Score == h.Score {
						continue
					}
					// Past ten terms only the last bits may differ, and
					// only documents scored that close trade places.
					if !exact && nearScore(g.Score, h.Score) {
						if g.ID == h.ID || (i+1 < len(want.Hits) && nearScore(h.Score, want.Hits[i+1].Score)) || (i > 0 && nearScore(h.Score, want.Hits[i-1].Score)) || i == len(want.Hits)-1 {
							inexact++
							continue
						}
					}
					t.Fatalf("keep %v, %q n=%d, hit %d: %s %v, bleve %s %v", keep, q, n, i, g.ID, g.Score, h.ID, h.Score)
				}
				compared += len(got)
				if exact {
					exactly += len(got)
				}
			}
		}
		if exactly < 500 || compared-exactly < 500 {
			t.Errorf("keep %v: %d hits compared, %d of queries of ten terms or fewer", keep, compared, exactly)
		}
		t.Logf("keep %v: %d hits compared, %d of them to the bit; %d differ in their last bits", keep, compared, exactly, inexact)
		ix.Close()
	}
}

// TestBroadlyNeedsEveryKindAndScope: a document without a kind is not
// dropped by walking the postings of the other kinds, so a filter of kinds
// then runs as bleve's filtered search, which leaves it out.
func TestBroadlyNeedsEveryKindAndScope(t *testing.T) {
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
	if _, ok, _ := ix.broadly(q, 10, false, vq.side.vs); ok {
		t.Error("broadly took a kind filter with a document of no kind in the index")
	}
	res, err := ix.lexical(q, 400, false, vq.side.vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res {
		if strings.Contains(h.Path, "NOKIND") {
			t.Errorf("the document of no kind passed a filter of kinds")
		}
	}
}
