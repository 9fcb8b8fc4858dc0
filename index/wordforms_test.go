package index

import (
	"encoding/json"
	"github.com/blevesearch/bleve/v2/analysis"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// terms is the analysed terms of text, space-separated.
func terms(text string) string {
	var out []string
	for _, tok := range textAnalysis().Analyze([]byte(text)) {
		out = append(out, string(tok.Term))
	}
	return strings.Join(out, " ")
}

// TestWordFormsMeet: irregular forms and their base, and British and
// American spellings, analyse to one term, so either finds the other.
func TestWordFormsMeet(t *testing.T) {
	for _, pair := range [][2]string{
		// irregular verbs
		{"lost", "lose"}, {"went", "go"}, {"gone", "going"}, {"ran", "run"}, {"bought", "buy"},
		{"thought", "think"}, {"caught", "catches"}, {"taught", "teach"}, {"left", "leave"},
		{"found", "find"}, {"felt", "feel"}, {"met", "meeting"}, {"won", "win"}, {"wrote", "write"},
		{"written", "writes"}, {"spoke", "speak"}, {"chose", "choose"}, {"chosen", "choosing"},
		{"forgot", "forget"}, {"forgotten", "forgetting"}, {"got", "get"}, {"told", "tell"},
		{"sold", "sell"}, {"saw", "see"}, {"seen", "seeing"}, {"ate", "eat"}, {"drove", "drive"},
		{"brought", "bring"}, {"built", "build"}, {"sent", "send"}, {"spent", "spend"},
		{"kept", "keep"}, {"slept", "sleep"}, {"paid", "pay"}, {"made", "make"}, {"took", "take"},
		{"gave", "give"}, {"knew", "know"}, {"grew", "grow"}, {"flew", "fly"}, {"swam", "swim"},
		{"sang", "sing"}, {"began", "begin"}, {"broke", "break"}, {"fell", "fall"}, {"learnt", "learned"},
		{"burnt", "burned"}, {"understood", "understand"}, {"stood", "stand"}, {"held", "hold"},
		// irregular nouns
		{"children", "child"}, {"grandchildren", "grandchild"}, {"mice", "mouse"}, {"men", "man"},
		{"women", "woman"}, {"people", "person"}, {"feet", "foot"}, {"teeth", "tooth"},
		{"wives", "wife"}, {"knives", "knife"}, {"shelves", "shelf"}, {"criteria", "criterion"},
		{"phenomena", "phenomenon"}, {"crises", "crisis"}, {"indices", "index"},
		{"policewomen", "policewoman"}, {"firemen", "fireman"}, {"businessmen", "businessman"},
		// spellings
		{"impostor", "imposter"}, {"impostors", "imposters"}, {"favourite", "favorite"},
		{"favourites", "favorites"}, {"travelling", "traveling"}, {"travelled", "traveled"},
		{"traveller", "traveler"}, {"fuelled", "fueled"}, {"dialling", "dialing"},
		{"colour", "color"}, {"colours", "colors"}, {"coloured", "colored"}, {"colourful", "colorful"},
		{"neighbour", "neighbor"}, {"neighbourhood", "neighborhood"}, {"behaviour", "behavior"},
		{"honour", "honor"}, {"flavour", "flavor"}, {"humour", "humor"}, {"labour", "labor"},
		{"organise", "organize"}, {"organised", "organized"}, {"organising", "organizing"},
		{"organisation", "organization"}, {"realise", "realize"}, {"realised", "realized"},
		{"apologise", "apologize"}, {"prioritise", "prioritize"}, {"summarise", "summarize"},
		{"authorised", "authorized"}, {"minimise", "minimize"}, {"standardise", "standardize"},
		{"analyse", "analyze"}, {"analysed", "analyzed"}, {"paralysed", "paralyzed"},
		{"catalysing", "catalyzing"}, {"grey", "gray"}, {"greyish", "grayish"},
		{"centre", "center"}, {"centres", "centers"}, {"centred", "centered"},
		{"theatre", "theater"}, {"metre", "meter"}, {"kilometres", "kilometers"}, {"fibre", "fiber"},
		{"defence", "defense"}, {"licence", "license"}, {"judgement", "judgment"},
		{"programme", "program"}, {"catalogue", "catalog"}, {"dialogue", "dialog"},
		{"jewellery", "jewelry"}, {"mum", "mom"}, {"aluminium", "aluminum"}, {"pyjamas", "pajamas"},
		{"sceptical", "skeptical"}, {"mould", "mold"}, {"cosy", "cozy"}, {"practise", "practice"},
		{"practised", "practiced"}, {"okay", "ok"}, {"towards", "toward"},
		// in any case, and beside other words
		{"We WENT to the Theatre", "we go to the theater"},
	} {
		if a, b := terms(pair[0]), terms(pair[1]); a != b || a == "" {
			t.Errorf("%q analyses to %q, %q to %q; want one term", pair[0], a, pair[1], b)
		}
	}
}

// TestWordFormsApart: words that only look like the forms above, and a
// comparative, keep their own term.
func TestWordFormsApart(t *testing.T) {
	for _, pair := range [][2]string{
		{"better", "good"}, {"best", "good"}, {"worse", "bad"},
		{"advise", "advize"}, {"exercise", "exercize"}, {"surprise", "surprize"},
		{"promise", "promize"}, {"noise", "noize"}, {"rise", "rize"}, {"otherwise", "otherwize"},
		{"fundraiser", "fundraizer"}, {"enterprise", "enterprize"}, {"premises", "premizes"},
		{"specimen", "speciman"}, {"abdomen", "abdoman"}, {"four", "for"}, {"hour", "hor"},
		{"tour", "tor"}, {"devour", "devor"}, {"genre", "gener"}, {"acre", "acer"},
		{"bit", "bite"}, {"rose", "rise"}, {"drew", "draw"}, {"ground", "grind"},
		{"lives", "life"}, {"leaves", "leaf"}, {"bound", "bind"}, {"lay", "lie"},
	} {
		if a, b := terms(pair[0]), terms(pair[1]); a == b {
			t.Errorf("%q and %q both analyse to %q; want them apart", pair[0], pair[1], a)
		}
	}
	for _, w := range []string{"advise", "exercise", "surprise", "promise", "noise", "rise", "otherwise", "fundraiser", "specimen", "four", "hour", "genre", "acre", "quelled", "called", "spelled"} {
		if got, changed := wordForm(w); changed {
			t.Errorf("wordForm(%q) = %q, want it unchanged", w, got)
		}
	}
}

// TestWordFormsSearch: a memory is found by the other forms of its words,
// both ways.
func TestWordFormsSearch(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "We bought the grey sofa for the children's room"})
	b := f.writeDoc(t, fdoc{id: "B", created: t0, text: "Organize the team offsite at the convention center"})
	f.writeDoc(t, fdoc{id: "C", created: t0, text: "The deploy pipeline runs nightly"})
	ix := mustOpen(t, f, opts(nil))
	for q, want := range map[string]string{
		"what did we buy for the child": a,
		"gray sofa":                     a,
		"organising the offsite centre": b,
	} {
		hits, err := ix.Search(Query{Text: q, Mode: ModeLexical})
		if err != nil || len(hits) == 0 || hits[0].Path != want {
			t.Errorf("Search(%q) = %+v, %v; want %s first", q, hits, err, want)
		}
	}
}

// resetStems empties the analyser's stem cache, which keeps the terms of
// the words it has seen.
func resetStems(t *testing.T) {
	fa := textAnalysis().(fastAnalyzer)
	fa.stems.mu.Lock()
	clear(fa.stems.m)
	fa.stems.mu.Unlock()
}

// TestIndexBeforeWordFormsRebuilt: an index written before word forms
// joined (format 10) holds its words' old terms; it is rebuilt, not read
// with the new analyser, which would miss them.
func TestIndexBeforeWordFormsRebuilt(t *testing.T) {
	f := newFake(t)
	a := f.writeDoc(t, fdoc{id: "A", created: t0, text: "Caroline went to the colour run"})
	f.writeDoc(t, fdoc{id: "B", created: t0, text: "Melanie paints sunsets"})
	noWordForms = true
	resetStems(t)
	t.Cleanup(func() { noWordForms = false; resetStems(t) })
	mustOpen(t, f, opts(nil)).Close()
	meta := filepath.Join(currentGen(t, f.root), "meta.json")
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(b), `"version": `+strconv.Itoa(m.Version), `"version": 10`, 1)
	if err := os.WriteFile(meta, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	noWordForms = false
	resetStems(t)
	ix := mustOpen(t, f, opts(nil))
	if !ix.LastUpdate().Rebuilt {
		t.Errorf("LastUpdate() = %+v, want a rebuild of the format-10 index", ix.LastUpdate())
	}
	for _, q := range []string{"go", "color"} {
		hits, err := ix.Search(Query{Text: q, Mode: ModeLexical})
		if err != nil || len(hits) != 1 || hits[0].Path != a {
			t.Errorf("Search(%q) = %+v, %v; want %s", q, hits, err, a)
		}
	}
}

// wordFormFilter takes each term to its form (wordForm), as the analyser
// does before it stems.
type wordFormFilter struct{}

func (wordFormFilter) Filter(toks analysis.TokenStream) analysis.TokenStream {
	for _, t := range toks {
		if form, ok := wordForm(string(t.Term)); ok && !t.KeyWord {
			t.Term = []byte(form)
		}
	}
	return toks
}

// referenceAnalyzer is the analyser the index uses, built from the
// bleve analyser a with wordFormFilter before its stemmer, and nothing kept
// between calls: what the fast one must agree with.
func referenceAnalyzer(a *analysis.DefaultAnalyzer) *analysis.DefaultAnalyzer {
	n := len(a.TokenFilters)
	filters := append(slices.Clone(a.TokenFilters[:n-1]), wordFormFilter{}, a.TokenFilters[n-1])
	return &analysis.DefaultAnalyzer{CharFilters: a.CharFilters, Tokenizer: a.Tokenizer, TokenFilters: filters}
}
