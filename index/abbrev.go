package index

import (
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
)

// abbreviations are the short and long forms people use for the same thing
// in notes about software. A memory tagged "db" should answer "which
// database did we pick", and one that says "k8s" a question about
// Kubernetes. The built-in embedder cannot know that (it learns only from
// the store's own words, and a fresh store has few), so the lexical side
// adds, at query time, the other words of each group a query word belongs
// to. Nothing else changes: a query with none of these words is searched
// exactly as written, and the added words can only add matches.
//
// Each line is one group; every word of it stands for the others. Words
// are compared after the text analyzer (lower case, stemmed), so plurals
// and inflections of a word belong to its group too. Keep the list short
// and unambiguous: a pair belongs here only when the short form means the
// long one in almost any project.
var abbreviations = []string{
	"db database",
	"pg postgres postgresql",
	"k8s kubernetes",
	"auth authentication",
	"authn authentication",
	"authz authorization",
	"repo repository",
	"config cfg configuration",
	"env environment",
	"js javascript",
	"deps dependencies",
	"docs documentation",
	"perf performance",
	"infra infrastructure",
	"dir directory",
	"pkg package",
	"prod production",
	"impl implementation",
	"msg message",
}

var (
	abbrevOnce sync.Once
	// abbrevTerms maps an analysed term to the analysed terms of the
	// groups it is in, itself excluded.
	abbrevTerms map[string][]string
)

// abbrevTable builds abbrevTerms with the index's text analyzer.
func abbrevTable(a analysis.Analyzer) map[string][]string {
	abbrevOnce.Do(func() {
		abbrevTerms = map[string][]string{}
		for _, g := range abbreviations {
			var terms []string
			for _, w := range strings.Fields(g) {
				for _, tok := range a.Analyze([]byte(w)) {
					terms = append(terms, string(tok.Term))
				}
			}
			for _, t := range terms {
				for _, o := range terms {
					if o != t && !contains(abbrevTerms[t], o) {
						abbrevTerms[t] = append(abbrevTerms[t], o)
					}
				}
			}
		}
	})
	return abbrevTerms
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// expandAbbreviations returns the analysed terms to search for besides
// those of text: the other forms of each abbreviation group a term of
// text belongs to, each once, none already in text. It is nil for most
// queries.
func expandAbbreviations(a analysis.Analyzer, text string) []string {
	if a == nil || text == "" {
		return nil
	}
	table := abbrevTable(a)
	toks := a.Analyze([]byte(text))
	have := make(map[string]bool, len(toks))
	for _, t := range toks {
		have[string(t.Term)] = true
	}
	var extra []string
	for _, t := range toks {
		for _, o := range table[string(t.Term)] {
			if !have[o] {
				have[o] = true
				extra = append(extra, o)
			}
		}
	}
	return extra
}
