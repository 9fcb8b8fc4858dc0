package parse

import "strings"

// tok is one token of the hand-written scanners.
type tok struct {
	kind  byte // tName, tString, tNumber, tOp, tNewline
	s, e  int  // byte span in the source
	line  int  // line of the first byte
	eline int  // line of the last byte
}

const (
	tName    = 'n'
	tString  = 's'
	tNumber  = '0'
	tOp      = 'o'
	tNewline = ';' // end of a logical line (Python)
)

// comment is one comment of the source, markers included.
type comment struct {
	line, eline int
	text        string
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// text is the source of a token.
func (t tok) text(src []byte) string { return string(src[t.s:t.e]) }

// is reports whether the token is the operator or name s.
func (t tok) is(src []byte, s string) bool {
	return t.e-t.s == len(s) && string(src[t.s:t.e]) == s
}

// countLines counts the newlines in src[i:j].
func countLines(src []byte, i, j int) int {
	n := 0
	for ; i < j; i++ {
		if src[i] == '\n' {
			n++
		}
	}
	return n
}

// scanned is a source file as a scanner split it, with the look-ups its
// parser makes.
type scanned struct {
	src   []byte
	toks  []tok
	cs    []comment
	byEnd map[int]int // index in cs by last line
}

func newScanned(src []byte, toks []tok, cs []comment) scanned {
	s := scanned{src: src, toks: toks, cs: cs, byEnd: make(map[int]int, len(cs))}
	for i, c := range cs {
		s.byEnd[c.eline] = i
	}
	return s
}

// op reports whether token i is the operator o.
func (s *scanned) op(i int, o string) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].kind == tOp && s.toks[i].is(s.src, o)
}

// name reports whether token i is the name n.
func (s *scanned) name(i int, n string) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].kind == tName && s.toks[i].is(s.src, n)
}

// punct returns the one-byte operator that token i is, or 0 for any
// other token.
func (s *scanned) punct(i int) byte {
	if t := s.toks[i]; t.kind == tOp && t.e-t.s == 1 {
		return s.src[t.s]
	}
	return 0
}

// startsItem reports whether token i is the first of the file or follows
// '{', ';', '}' or ',': where a member or statement may begin.
func (s *scanned) startsItem(i int) bool {
	if i == 0 {
		return true
	}
	switch s.punct(i - 1) {
	case '{', ';', '}', ',':
		return true
	}
	return false
}

// last is the top of a stack, nil when it is empty.
func last[T any](stack []T) *T {
	if len(stack) == 0 {
		return nil
	}
	return &stack[len(stack)-1]
}

// isName reports whether token i is a name.
func (s *scanned) isName(i int) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].kind == tName
}

// doc joins the comment block that ends on the line before line, markers
// stripped by strip, or "" when there is none.
func (s *scanned) doc(line int, strip func(string) (string, bool)) string {
	return commentDoc(s.cs, s.byEnd, line, strip)
}

// commentDoc joins the comments that end on the lines right above line,
// each through strip (false stops), into the doc comment of what starts
// on line. byEnd maps a comment's last line to its index in cs.
func commentDoc(cs []comment, byEnd map[int]int, line int, strip func(string) (string, bool)) string {
	var parts []string
	for l := line - 1; l > 0; {
		i, ok := byEnd[l]
		if !ok {
			break
		}
		t, ok := strip(cs[i].text)
		if !ok {
			break
		}
		parts = append(parts, t)
		l = cs[i].line - 1
	}
	if len(parts) == 0 {
		return ""
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// dedent removes the indentation common to the lines after the first (as Python's
// inspect.cleandoc does) and trims the result.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	margin := -1
	for _, l := range lines[1:] {
		t := strings.TrimLeft(l, " \t")
		if t == "" {
			continue
		}
		if n := len(l) - len(t); margin < 0 || n < margin {
			margin = n
		}
	}
	for i := 1; i < len(lines); i++ {
		if margin > 0 && len(lines[i]) >= margin {
			lines[i] = lines[i][margin:]
		} else {
			lines[i] = strings.TrimLeft(lines[i], " \t")
		}
		lines[i] = strings.TrimRight(lines[i], " \t\r")
	}
	lines[0] = strings.TrimSpace(lines[0])
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// matchBrackets pairs each opening bracket token ( [ { with the closing one that
// ends it, whatever its kind, as a depth count would: match[i] is the index of the
// closer, or -1 when the file ends first. One pass, so that skipping a bracketed
// group costs nothing however often it is done.
func matchBrackets(src []byte, toks []tok) []int32 {
	match := make([]int32, len(toks))
	var stack []int32
	for i, t := range toks {
		match[i] = -1
		if t.kind != tOp || t.e-t.s != 1 {
			continue
		}
		switch src[t.s] {
		case '(', '[', '{':
			stack = append(stack, int32(i))
		case ')', ']', '}':
			if n := len(stack); n > 0 {
				match[stack[n-1]] = int32(i)
				stack = stack[:n-1]
			}
		}
	}
	return match
}

// lookAhead bounds the tokens a scanner's look-ahead reads past bracketed groups
// before it settles: real headers and statements are far shorter, and the bound
// keeps broken files linear (TestScannersLinear).
const lookAhead = 2048

// lexer is what the hand-written scanners share while they split a
// source: the line of the byte at hand, and the tokens and comments found
// so far. A scanner's loop looks at the byte at hand, finds where the
// token or comment it opens ends (skipComment, quotedEnd, identEnd, or
// its language's own), and adds it with emit or addComment, which keep
// the line count.
type lexer struct {
	src  []byte
	line int
	toks []tok
	cs   []comment
}

// newLexer starts with room for a token every 5 bytes and 4 comments:
// sources hold about that many, and growing the lists from nothing cost
// an allocation a doubling (BenchmarkParseTree's allocs/op).
func newLexer(src []byte) lexer {
	return lexer{src: src, line: 1, toks: make([]tok, 0, len(src)/5), cs: make([]comment, 0, 4)}
}

// emit adds the token src[i:j], which may span lines, and returns j.
func (l *lexer) emit(kind byte, i, j int) int {
	n := countLines(l.src, i, j)
	l.toks = append(l.toks, tok{kind: kind, s: i, e: j, line: l.line, eline: l.line + n})
	l.line += n
	return j
}

// emitLine adds the token src[i:j], which holds no line break, and
// returns j.
func (l *lexer) emitLine(kind byte, i, j int) int {
	l.toks = append(l.toks, tok{kind: kind, s: i, e: j, line: l.line, eline: l.line})
	return j
}

// addComment adds the comment src[i:j] and returns j.
func (l *lexer) addComment(i, j int) int {
	n := countLines(l.src, i, j)
	l.cs = append(l.cs, comment{line: l.line, eline: l.line + n, text: string(l.src[i:j])})
	l.line += n
	return j
}

// space steps over the blank or line break at src[i], counting lines,
// and reports whether there was one.
func (l *lexer) space(i int) bool {
	switch l.src[i] {
	case '\n':
		l.line++
	case ' ', '\t', '\r', '\f', '\v':
	default:
		return false
	}
	return true
}

// isCommentStart reports whether a "//" or "/*" comment opens at src[i].
func isCommentStart(src []byte, i int) bool {
	return src[i] == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*')
}

// skipComment returns the index after the "//" or "/*" comment that opens
// at src[i]; a block comment does not nest.
func skipComment(src []byte, i int) int {
	if src[i+1] == '/' {
		for i += 2; i < len(src) && src[i] != '\n'; i++ {
		}
		return i
	}
	for i += 2; i+1 < len(src); i++ {
		if src[i] == '*' && src[i+1] == '/' {
			return i + 2
		}
	}
	return len(src)
}

// quotedEnd returns the index after the string that the quote at src[i]
// opens and the same quote closes. With escapes a backslash escapes the
// byte after it; without multiline a line break ends the string (an
// unterminated one) before it.
func quotedEnd(src []byte, i int, escapes, multiline bool) int {
	q := src[i]
	for i++; i < len(src); i++ {
		switch src[i] {
		case '\\':
			if escapes {
				i++
			}
		case '\n':
			if !multiline {
				return i
			}
		case q:
			return i + 1
		}
	}
	return len(src)
}

// identEnd returns the index after the identifier bytes from src[i].
func identEnd(src []byte, i int) int {
	for i < len(src) && isIdentByte(src[i]) {
		i++
	}
	return i
}

// end closes the definition sym (none when negative) at the '}' on line:
// it ends there, or on its own first line when that is later.
func (f *File) end(sym, line int) {
	if sym >= 0 {
		f.Symbols[sym].EndLine = max(line, f.Symbols[sym].Line)
	}
}
