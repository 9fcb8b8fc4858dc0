package secret

// keywordSet finds every occurrence of a set of keywords in one pass over the
// text (Aho–Corasick). A separate strings.Index per keyword costs about as
// much per keyword as the whole automaton does for all of them, and there
// are dozens of keywords.
type keywordSet struct {
	// class maps a byte to its column in delta. Bytes that occur in no
	// keyword share column 0, and ASCII letters share a column with their
	// other case, so the automaton matches regardless of case (case-sensitive
	// keywords are compared again on a hit). Few columns keep the table
	// small enough to stay in the L1 cache.
	class [256]uint16
	// ncls is the number of columns.
	ncls int
	// delta is the transition table, indexed state*ncls + class. An entry
	// has hasOutput set when the state it leads to ends a keyword.
	delta []uint16
	// out lists, for each state, the keywords (indexes into kws) ending there.
	out [][]int32
	kws []keyword
}

// keyword is one literal that triggers a rule.
type keyword struct {
	text string
	rule int
	fold bool // match regardless of ASCII case
}

const (
	hasOutput = 1 << 15
	stateMask = hasOutput - 1
)

func foldByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func newKeywordSet(kws []keyword) *keywordSet {
	ks := &keywordSet{kws: kws, ncls: 1}
	size := 1
	for _, kw := range kws {
		size += len(kw.text)
		for j := 0; j < len(kw.text); j++ {
			c := foldByte(kw.text[j])
			if ks.class[c] == 0 {
				ks.class[c] = uint16(ks.ncls)
				ks.ncls++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		ks.class[c] = ks.class[c+'a'-'A']
	}
	nc := ks.ncls

	// The trie of the folded keywords, a row of nc columns per state; -1
	// marks a missing edge.
	trie := make([]int32, 0, size*nc)
	out := make([][]int32, 0, size)
	addState := func() int32 {
		for range nc {
			trie = append(trie, -1)
		}
		out = append(out, nil)
		return int32(len(out) - 1)
	}
	addState()
	for i, kw := range kws {
		s := int32(0)
		for j := 0; j < len(kw.text); j++ {
			e := int(s)*nc + int(ks.class[kw.text[j]])
			if trie[e] < 0 {
				ns := addState()
				trie[e] = ns
			}
			s = trie[e]
		}
		out[s] = append(out[s], int32(i))
	}
	n := len(out)
	if n > stateMask {
		panic("secret: too many keyword states")
	}

	// Breadth-first, so that a state's failure state (which is shallower)
	// is complete before the state itself is.
	delta := make([]int32, n*nc)
	fail := make([]int32, n)
	var queue []int32
	for cl := 0; cl < nc; cl++ {
		if ns := trie[cl]; ns >= 0 {
			delta[cl] = ns
			queue = append(queue, ns)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		out[s] = append(out[s], out[fail[s]]...)
		row, frow := int(s)*nc, int(fail[s])*nc
		for cl := 0; cl < nc; cl++ {
			if ns := trie[row+cl]; ns >= 0 {
				fail[ns] = delta[frow+cl]
				delta[row+cl] = ns
				queue = append(queue, ns)
			} else {
				delta[row+cl] = delta[frow+cl]
			}
		}
	}

	ks.out = out
	ks.delta = make([]uint16, len(delta))
	for i, ns := range delta {
		v := uint16(ns)
		if len(out[ns]) > 0 {
			v |= hasOutput
		}
		ks.delta[i] = v
	}
	return ks
}

// find calls fn for every occurrence of every keyword, in order of the
// occurrence's end.
func (ks *keywordSet) find(text string, fn func(kw *keyword, pos int)) {
	delta, class, ncls := ks.delta, &ks.class, ks.ncls
	s := 0
	for i := 0; i < len(text); i++ {
		v := delta[s+int(class[text[i]])]
		s = int(v&stateMask) * ncls
		if v&hasOutput == 0 {
			continue
		}
		for _, k := range ks.out[int(v&stateMask)] {
			kw := &ks.kws[k]
			pos := i + 1 - len(kw.text)
			if !kw.fold && text[pos:i+1] != kw.text {
				continue
			}
			fn(kw, pos)
		}
	}
}
