package secret

import "strings"

// joinedRule finds secrets wrapped over two lines: a token broken by a
// terminal or an editor ("ghp_…" and the rest of it on the next line), a
// shell assignment continued with a backslash, or a newline escaped as \n
// inside a JSON string. Where a line ends in a run of token characters
// that mixes letters and digits or cases (see mixed), and the next line
// (after its indentation) starts with another, the two lines are joined
// and scanned again; only secrets that cross the join are reported, each
// under the rule that found it.
func joinedRule(text string, depth int, add func(hit)) {
	if depth >= maxDepth {
		return
	}
	// Line breaks, then breaks escaped as \n: each found with IndexByte,
	// which is much faster than looking at every byte.
	for _, b := range []byte{'\n', '\\'} {
		for m := 0; m < len(text); m++ {
			k := strings.IndexByte(text[m:], b)
			if k < 0 {
				break
			}
			m += k
			next := m + 1 // the first byte after the line break
			if b == '\\' {
				if m+1 >= len(text) || text[m+1] != 'n' {
					continue
				}
				next = m + 2
			}
			joinAt(text, m, next, depth, add)
		}
	}
}

// joinAt joins the lines around the line break text[m:next] if they end
// and start with parts of a token (see joinedRule).
func joinAt(text string, m, next, depth int, add func(hit)) {
	e1 := m
	if text[m] == '\n' && e1 > 0 && text[e1-1] == '\r' {
		e1--
	}
	if e1 > 0 && text[e1-1] == '\\' {
		e1-- // a shell line continued
	}
	// Most lines end in punctuation, or the next starts with it or a
	// lower-case word: say so before walking over either run.
	j := skipBlanks(text, next)
	if e1 == 0 || j >= len(text) || !tokenByte(text[e1-1]) || !tokenByte(text[j]) {
		return
	}
	// One walk back over the run says what it holds.
	s1 := e1
	var lower, digit bool
	uppers := 0
	hexRun := 0 // hex digits at the end, after any : / or .
	hexOnly := true
	for s1 > 0 && e1-s1 < maxName && tokenByte(text[s1-1]) {
		s1--
		c := text[s1]
		switch {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			uppers++
		case '0' <= c && c <= '9':
			digit = true
		}
		if hexOnly {
			if '0' <= c && c <= '9' || 'a' <= c && c <= 'f' {
				hexRun++
			} else {
				hexOnly = false
				if c != ':' && c != '/' && c != '.' {
					hexRun = 0
				}
			}
		}
	}
	// As in mixed: a capital that starts a word does not count.
	upper := uppers > 1 || uppers == 1 && !('A' <= text[s1] && text[s1] <= 'Z')
	if e1-s1 < 8 || !(digit && (lower || upper) || lower && upper) || hexRun == 40 || hexRun == 64 {
		return // short, a word, or a whole git or SHA-256 hash in hex (a line
		// that ends in one ends with it whole, as notes often do)
	}
	e2 := j
	for e2 < len(text) && e2-j < maxValue && tokenByte(text[e2]) {
		e2++
	}
	if e2-j < 4 || !mixed(text[j:e2]) {
		return
	}
	ls := max(0, s1-maxName)
	if k := strings.LastIndexByte(text[ls:s1], '\n'); k >= 0 {
		ls += k + 1
	}
	le := min(len(text), e2+maxName)
	if k := strings.IndexByte(text[e2:le], '\n'); k >= 0 {
		le = e2 + k
	}
	joined := text[ls:e1] + text[j:le]
	at := e1 - ls
	for _, h := range rescan(joined, depth+1) {
		if h.lo < at && h.hi > at {
			add(hit{rule: h.rule, lo: ls + h.lo, hi: j + h.hi - at, redacted: h.redacted})
		}
	}
}

// tokenByte reports the characters of tokens and keys.
func tokenByte(c byte) bool {
	return wordByte(c) || c == '-' || c == '+' || c == '/' || c == '.' || c == '~'
}

// mixed reports a run that reads as part of a token rather than a word:
// letters and digits, or an upper-case letter after the first character
// beside lower-case ones ("Mira", which starts a sentence, is a word).
func mixed(s string) bool {
	lower, upper, digit, _ := classes(s)
	if digit {
		return lower || upper
	}
	if !lower {
		return false
	}
	for i := 1; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}
