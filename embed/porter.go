package embed

// stem reduces an ASCII lower-case English word to its Porter stem (M. F.
// Porter, "An algorithm for suffix stripping", 1980, with the usual
// "logi"/"bli" amendments). Words that are not plain a–z, or that have at
// most two letters, are returned unchanged.
//
// Porter rather than a lighter s-stripper because English analyzers for the
// lexical index commonly stem with Porter too, and it is better that both
// halves of hybrid retrieval reduce a word alike. Character n-grams cover
// what stemming misses (misspellings, compounds).
func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	var buf [64]byte
	if len(w) > len(buf) {
		return w
	}
	s := porter{b: append(buf[:0], w...)}
	s.step1a()
	s.step1b()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	if string(s.b) == w {
		return w
	}
	return string(s.b)
}

// porter holds the word being stemmed; every step shortens or rewrites its
// tail in place.
type porter struct {
	b []byte
}

// cons reports whether b[i] is a consonant in Porter's sense: not a vowel,
// and y only when it follows a vowel (or starts the word).
func (p *porter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !p.cons(i-1)
	}
	return true
}

// measure is m in [C](VC)^m[V] for b[:n].
func (p *porter) measure(n int) int {
	m, i := 0, 0
	for i < n && p.cons(i) {
		i++
	}
	for i < n {
		for i < n && !p.cons(i) {
			i++
		}
		if i >= n {
			break
		}
		for i < n && p.cons(i) {
			i++
		}
		m++
	}
	return m
}

// hasVowel reports whether b[:n] contains a vowel.
func (p *porter) hasVowel(n int) bool {
	for i := 0; i < n; i++ {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

// doubleCons reports whether b[:n] ends in a double consonant.
func (p *porter) doubleCons(n int) bool {
	return n >= 2 && p.b[n-1] == p.b[n-2] && p.cons(n-1)
}

// cvc reports whether b[:n] ends consonant–vowel–consonant with the last
// consonant not w, x or y (so "hop" gets its e back, "snow" does not).
func (p *porter) cvc(n int) bool {
	if n < 3 || !p.cons(n-1) || p.cons(n-2) || !p.cons(n-3) {
		return false
	}
	switch p.b[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

func (p *porter) ends(suf string) bool {
	n := len(p.b)
	return n >= len(suf) && string(p.b[n-len(suf):]) == suf
}

// replace swaps the suffix suf (which the word must end with) for rep.
func (p *porter) replace(suf, rep string) {
	p.b = append(p.b[:len(p.b)-len(suf)], rep...)
}

func (p *porter) step1a() {
	switch {
	case p.ends("sses"):
		p.replace("sses", "ss")
	case p.ends("ies"):
		p.replace("ies", "i")
	case p.ends("ss"):
	case p.ends("s"):
		p.replace("s", "")
	}
}

func (p *porter) step1b() {
	if p.ends("eed") {
		if p.measure(len(p.b)-3) > 0 {
			p.replace("eed", "ee")
		}
		return
	}
	var suf string
	switch {
	case p.ends("ed"):
		suf = "ed"
	case p.ends("ing"):
		suf = "ing"
	default:
		return
	}
	if !p.hasVowel(len(p.b) - len(suf)) {
		return
	}
	p.replace(suf, "")
	n := len(p.b)
	switch {
	case p.ends("at"), p.ends("bl"), p.ends("iz"):
		p.b = append(p.b, 'e')
	case p.doubleCons(n):
		switch p.b[n-1] {
		case 'l', 's', 'z':
		default:
			p.b = p.b[:n-1]
		}
	case p.measure(n) == 1 && p.cvc(n):
		p.b = append(p.b, 'e')
	}
}

func (p *porter) step1c() {
	if p.ends("y") && p.hasVowel(len(p.b)-1) {
		p.b[len(p.b)-1] = 'i'
	}
}

// rule is one suffix rewrite of steps 2–4.
type rule struct{ suf, rep string }

var step2Rules = []rule{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"},
	{"izer", "ize"}, {"bli", "ble"}, {"alli", "al"}, {"entli", "ent"},
	{"eli", "e"}, {"ousli", "ous"}, {"ization", "ize"}, {"ation", "ate"},
	{"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"},
	{"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

var step3Rules = []rule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
	{"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
	"ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

// longest returns the index of the longest rule suffix the word ends with,
// or -1: Porter applies only the longest match, even when its condition then
// fails.
func (p *porter) longest(rules []rule) int {
	best := -1
	for i, r := range rules {
		if p.ends(r.suf) && (best < 0 || len(r.suf) > len(rules[best].suf)) {
			best = i
		}
	}
	return best
}

func (p *porter) step2() {
	if i := p.longest(step2Rules); i >= 0 {
		r := step2Rules[i]
		if p.measure(len(p.b)-len(r.suf)) > 0 {
			p.replace(r.suf, r.rep)
		}
	}
}

func (p *porter) step3() {
	if i := p.longest(step3Rules); i >= 0 {
		r := step3Rules[i]
		if p.measure(len(p.b)-len(r.suf)) > 0 {
			p.replace(r.suf, r.rep)
		}
	}
}

func (p *porter) step4() {
	best := ""
	for _, s := range step4Suffixes {
		if p.ends(s) && len(s) > len(best) {
			best = s
		}
	}
	if best == "" {
		return
	}
	n := len(p.b) - len(best)
	if p.measure(n) <= 1 {
		return
	}
	if best == "ion" && (n == 0 || (p.b[n-1] != 's' && p.b[n-1] != 't')) {
		return
	}
	p.b = p.b[:n]
}

func (p *porter) step5() {
	if p.ends("e") {
		n := len(p.b) - 1
		if m := p.measure(n); m > 1 || (m == 1 && !p.cvc(n)) {
			p.b = p.b[:n]
		}
	}
	n := len(p.b)
	if p.measure(n) > 1 && p.doubleCons(n) && p.b[n-1] == 'l' {
		p.b = p.b[:n-1]
	}
}
