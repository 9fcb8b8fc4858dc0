package code

import "errors"

// errNotBuilt is returned by the parts of the API not built yet.
var errNotBuilt = errors.New("code index: not built yet")

// Symbols returns up to k definitions matching q (a name, part of one, or
// words), best first.
func (ix *Index) Symbols(q string, k int) []SymbolHit { return nil }

// Touchpoints returns the definitions most relevant to q, as cards with an
// excerpt of the code around them and why each was chosen.
func (ix *Index) Touchpoints(q Query) []Touchpoint { return nil }

// Files returns the files most relevant to q.
func (ix *Index) Files(q Query) []FileHit { return nil }
