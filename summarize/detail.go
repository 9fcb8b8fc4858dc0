package summarize

import (
	"fmt"
	"unicode/utf8"
)

// Detail is how much summarizing a run does, chosen from the number of
// tokens of new material (Choose).
type Detail int

// Details, from no summary at all to the full L1/L2/L3 tree.
const (
	// DetailNone: too little material to be worth a summary; it stays in
	// the buffer at full fidelity.
	DetailNone Detail = iota
	// DetailBrief: one short L1 (about a fifth of the input).
	DetailBrief
	// DetailStandard: one paragraph-sized L1 (about an eighth).
	DetailStandard
	// DetailDetailed: the material is cut into chunks, one L1 each.
	DetailDetailed
	// DetailHierarchical: L1 chunks, grouped into L2 summaries.
	DetailHierarchical
)

// Thresholds of Choose, in tokens of new material.
const (
	BriefTokens        = 100
	StandardTokens     = 500
	DetailedTokens     = 3000
	HierarchicalTokens = 15000
)

var detailNames = []string{"none", "brief", "standard", "detailed", "hierarchical"}

// String returns the detail's name as written in front matter: none,
// brief, standard, detailed or hierarchical.
func (d Detail) String() string {
	if d < 0 || int(d) >= len(detailNames) {
		return fmt.Sprintf("Detail(%d)", int(d))
	}
	return detailNames[d]
}

// Choose returns the detail for a given number of tokens of new material:
// none below 100, brief up to 500, standard up to 3,000, detailed up to
// 15,000, hierarchical beyond.
func Choose(tokens int) Detail {
	switch {
	case tokens < BriefTokens:
		return DetailNone
	case tokens < StandardTokens:
		return DetailBrief
	case tokens < DetailedTokens:
		return DetailStandard
	case tokens <= HierarchicalTokens:
		return DetailDetailed
	}
	return DetailHierarchical
}

// ratio is the share of its input an L1 summary aims at.
func (d Detail) ratio() float64 {
	switch d {
	case DetailBrief:
		return 0.20
	case DetailStandard:
		return 0.12
	}
	return 0.10
}

// minTarget keeps a summary long enough to say something.
const minTarget = 24

func chunkTarget(d Detail, input int) int {
	return max(minTarget, int(float64(input)*d.ratio()+0.5))
}

// groupTarget is the size an L2 aims at: less than its L1s together, so
// the tree narrows, but not so little that it loses their gist.
func groupTarget(input, rolling int) int {
	return min(rolling, max(2*minTarget, int(float64(input)*0.4+0.5)))
}

// ApproxTokens estimates the number of tokens of s without a tokenizer:
// about four bytes of English text per token (one per rune for other
// scripts). It is the counter when Options.Count is nil.
func ApproxTokens(s string) int {
	if s == "" {
		return 0
	}
	n := utf8.RuneCountInString(s)
	ascii := 0
	for i := 0; i < len(s); i++ {
		if s[i] < utf8.RuneSelf {
			ascii++
		}
	}
	other := n - ascii
	return (ascii+3)/4 + other
}
