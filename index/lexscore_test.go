package index

import "testing"

// TestTextTopRefusesDamagedPostings: a search refuses postings that do
// not decode as well when it counts a term's live documents from the
// postings' own count (no dead row in the base) as when it decodes them
// twice, and never reads a row past the rows.
func TestTextTopRefusesDamagedPostings(t *testing.T) {
	docs := [][]byte{
		appendTerms(nil, []termFreq{{"alpha", 1}, {"beta", 2}}),
		appendTerms(nil, []termFreq{{"beta", 1}}),
		appendTerms(nil, []termFreq{{"alpha", 300}, {"gamma", 1}}),
	}
	sec := string(appendLexSection(nil, docs))
	refused := 0
	for i := range len(sec) {
		for _, x := range []byte{1, 0x80, 0xff} {
			b := []byte(sec)
			b[i] ^= x
			l, err := parseLexSection(string(b))
			if err != nil {
				continue
			}
			for _, dead := range []bool{false, true} {
				vs := &vecStore{lex: l, nbase: 3, lexNorm: &lexNorms{}, rows: []vecRow{{path: "a", flen: 3}, {path: "b", flen: 1}, {path: "c", flen: 301}}}
				vs.rows[1].dead = dead
				var bad error
				for _, term := range []string{"alpha", "beta", "gamma"} {
					if err := vs.eachPosting(term, func(int, uint32) {}); err != nil {
						bad = err
					}
				}
				_, err := vs.textTop([]string{"alpha", "beta", "gamma"}, 10, nil)
				if bad != nil && err == nil {
					t.Fatalf("byte %d ^ %#x, dead row %v: postings that do not decode (%v) searched", i, x, dead, bad)
				}
				if bad != nil {
					refused++
				}
			}
		}
	}
	if refused == 0 {
		t.Fatal("no damage reached the postings")
	}
}
