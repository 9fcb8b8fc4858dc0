package index

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
)

// sameTokens reports how asciiTokensIn and the Unicode tokenizer differ on
// b, "" when they agree on every term, offset and position.
func sameTokens(b []byte) string {
	want := unicode.NewUnicodeTokenizer().Tokenize(b)
	got := asciiTokensIn(b, &tokScratch{})
	show := func(ts analysis.TokenStream) string {
		s := ""
		for _, t := range ts {
			s += fmt.Sprintf("[%q %d-%d @%d] ", t.Term, t.Start, t.End, t.Position)
		}
		return s
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%q: got %s, want %s", b, show(got), show(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if string(g.Term) != string(w.Term) || g.Start != w.Start || g.End != w.End || g.Position != w.Position {
			return fmt.Sprintf("%q: got %s, want %s", b, show(got), show(want))
		}
	}
	return ""
}

// TestASCIITokensMatch: on ASCII text, asciiTokensIn gives the Unicode
// tokenizer's tokens: for tricky cases and for random strings over every
// class of character, dense in the joiners.
func TestASCIITokensMatch(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", "_", "__", "_a", "a_", "a_b", "1_2", "_1_", "a.b", "a..b", "a.b.c", "1.2.3", "a.1", "1.a",
		"a:b", "1:2", "a,b", "1,2", "1;2", "a;b", "it's", "it''s", "'s", "a'", "3.14", "e.g.", "U.S.A.", "foo_bar.baz",
		"don't stop", "k8s v1.2.3-rc1 x86_64", "user@example.com", "http://a.b/c?d=e&f", "--flag=value", "a\r\nb",
		"tabs\tand\nnewlines", "C++ and C#", "50% off", "$3,000.50", "2026-11-27T10:00:00Z", "a'1", "1'a", "1'2", "a:1",
	} {
		if d := sameTokens([]byte(s)); d != "" {
			t.Error(d)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZ9_:,;.'  -!?\n\t\"()/@#$%&*+=<>[]{}|\\~`^"
	for range 200_000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			if rng.IntN(3) == 0 {
				b[i] = alphabet[rng.IntN(4)] // letters, digits, '_' and ':' often
			} else {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		if d := sameTokens(b); d != "" {
			t.Fatal(d)
		}
	}
}

// TestFastAnalyzerMatches: the analyser with asciiTokensIn in front gives
// the terms the analyser alone gives, for ASCII and other text.
func TestFastAnalyzerMatches(t *testing.T) {
	fast := textAnalysis()
	slow := referenceAnalyzer(fast.(fastAnalyzer).a)
	if fast.(fastAnalyzer).stems == nil {
		t.Error("the stems are not kept")
	}
	for _, s := range []string{
		"Deploying the deployment; deployed on Friday. Friday's deploy!", // twice: stems from the cache
		"Running runners ran; the runner's runs",
		"Deploying the deployment; deployed on Friday. Friday's deploy!",
		"We've decided: Postgres 16.2 for the users' DB, not MySQL's.",
		"café naïve résumé — “quoted” ’s",
		"日本語のテキスト and English",
		"k8s_cluster-01 runs v1.2.3; see https://example.com/a_b?c=d",
	} {
		a, b := fast.Analyze([]byte(s)), slow.Analyze([]byte(s))
		if len(a) != len(b) {
			t.Fatalf("%q: %d terms, want %d", s, len(a), len(b))
		}
		for i := range a {
			if string(a[i].Term) != string(b[i].Term) {
				t.Errorf("%q: term %d is %q, want %q", s, i, a[i].Term, b[i].Term)
			}
		}
	}
}

// FuzzASCIITokens: asciiTokensIn agrees with the Unicode tokenizer on any
// ASCII input.
func FuzzASCIITokens(f *testing.F) {
	for _, s := range []string{"it's a_b 1.2", "a:b,c;d", "__x__", "e.g. U.S."} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !isASCII(b) {
			return
		}
		if d := sameTokens(b); d != "" {
			t.Fatal(d)
		}
	})
}

// BenchmarkAnalyse is a document's analysis as a rebuild makes it (a
// ~40-word ASCII text): with the Unicode tokenizer and every word stemmed,
// with asciiTokensIn, with the stems kept as well, and as analyse makes it
// for the index, its tokens in reused room and its terms encoded.
func BenchmarkAnalyse(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	texts := make([][]byte, 1000)
	for i := range texts {
		var sb []byte
		for range 40 {
			sb = append(sb, vocabulary[rng.IntN(2000)]...)
			sb = append(sb, ' ')
		}
		texts[i] = append(sb, "-- we're deploying it on Friday's release."...)
	}
	fast := textAnalysis().(fastAnalyzer)
	for _, a := range []struct {
		name string
		a    analysis.Analyzer
	}{{"unicode", fast.a}, {"ascii", fastAnalyzer{a: fast.a}}, {"ascii+stems", fast}} {
		b.Run(a.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				a.a.Analyze(texts[i%len(texts)])
				i++
			}
		})
	}
	strs := make([]string, len(texts))
	for i, t := range texts {
		strs[i] = string(t)
	}
	b.Run("analyse", func(b *testing.B) {
		i := 0
		for b.Loop() {
			analyse(strs[i%len(strs)])
			i++
		}
	})
}
