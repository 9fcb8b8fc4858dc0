package index

import "sync"

// textTerms returns the analysed terms of a text query, one per clause of
// the disjunction textQuery builds (repeats included, as there).
func (ix *Index) textTerms(text string) []string {
	a := textAnalysis()
	var terms []string
	for _, tok := range a.Analyze([]byte(text)) {
		terms = append(terms, string(tok.Term))
	}
	return append(terms, expandAbbreviations(a, text)...)
}

// textScratch is the per-row state of one text search, reused.
type textScratch struct {
	acc     []float64 // summed term scores, by row
	matched []uint16  // terms matched, by row
	touched []uint32  // rows with a match, in the order found
}

var textScratchPool = sync.Pool{New: func() any { return new(textScratch) }}
