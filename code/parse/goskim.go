package parse

// goSkim is a small Go lexer that finds, outside type declarations' struct and
// interface braces, every top-level brace pair: function bodies and the composite
// literals of package variables. It blanks their contents (newlines kept, so every
// position is unchanged) for go/parser to parse only declarations, and takes the
// references out of them on the way. go/parser spends most of its time in bodies and
// large table initialisers; skipping them makes the Go extractor several times
// faster (BenchmarkParseGoroot).
type goSkim struct {
	src   []byte
	out   []byte // src with bodies blanked, allocated at the first body
	refs  []Ref
	doRef bool
}

var goKeywords = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true,
	"defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true,
	"goto": true, "if": true, "import": true, "interface": true, "map": true, "package": true,
	"range": true, "return": true, "select": true, "struct": true, "switch": true, "type": true,
	"var": true,
}

// goQuotedEnd returns the index after the string, raw string or rune that
// opens at src[i]. Interpreted strings and runes stop at a newline, as the
// Go scanner does.
func goQuotedEnd(src []byte, i int) int {
	raw := src[i] == '`'
	return quotedEnd(src, i, !raw, raw)
}

// run scans the file and returns the source to hand to go/parser.
func (s *goSkim) run() []byte {
	src := s.src
	depth, pdepth := 0, 0
	typeKw := false // the last token at the top level was "struct" or "interface"
	line := 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case isCommentStart(src, i):
			j := skipComment(src, i)
			line += countLines(src, i, j)
			i = j
		case c == '"' || c == '`' || c == '\'':
			j := goQuotedEnd(src, i)
			line += countLines(src, i, j)
			i = j
			typeKw = false
		case isIdentByte(c):
			j := identEnd(src, i+1)
			if depth == 0 {
				w := string(src[i:j])
				typeKw = w == "struct" || w == "interface"
			}
			i = j
		case c == '(' || c == '[':
			pdepth++
			i++
		case c == ')' || c == ']':
			if pdepth > 0 {
				pdepth--
			}
			i++
		case c == '{':
			if depth == 0 && !typeKw {
				i, line = s.body(i, line)
				typeKw = false
				continue
			}
			depth++
			typeKw = false
			i++
		case c == '}':
			if depth > 0 {
				depth--
			}
			typeKw = false
			i++
		default:
			if c != ' ' && c != '\t' && c != '\r' {
				typeKw = false
			}
			i++
		}
	}
	if s.out == nil {
		return src
	}
	return s.out
}

// body skips the function body whose '{' is at src[open], blanking it in s.out and
// collecting its references; it returns the index of the closing '}' (or the end).
func (s *goSkim) body(open, line int) (int, int) {
	src := s.src
	if s.out == nil {
		s.out = make([]byte, len(src))
		copy(s.out, src)
	}
	depth := 1
	prevDot := false   // the last token was '.'
	qual := ""         // the identifier before that '.'
	lastIdent := ""    // the last token was this identifier
	var quals []string // for each open ( or [, the qualifier it continues
	i := open + 1
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			s.out[i] = ' '
			i++
			continue
		case isCommentStart(src, i):
			i = s.blank(i, skipComment(src, i), &line)
			continue
		case c == '"' || c == '`' || c == '\'':
			i = s.blank(i, goQuotedEnd(src, i), &line)
			prevDot, lastIdent = false, ""
			continue
		case isIdentByte(c):
			j := identEnd(src, i+1)
			name := string(src[i:j])
			if s.doRef && (c < '0' || c > '9') && !goKeywords[name] {
				k := j
				for k < len(src) && (src[k] == ' ' || src[k] == '\t') {
					k++
				}
				call := k < len(src) && src[k] == '('
				if !call && k < len(src) && src[k] == '[' { // a generic call f[T](x)
					m := closeBracket(src, k)
					call = m < len(src) && src[m] == '('
				}
				switch {
				case prevDot:
					s.refs = append(s.refs, Ref{Name: name, Qual: qual, Line: line, Call: call})
				case call:
					s.refs = append(s.refs, Ref{Name: name, Line: line, Call: true})
				case j < len(src) && src[j] == '{' && !goPredeclared[name]:
					s.refs = append(s.refs, Ref{Name: name, Line: line}) // composite literal T{...}
				}
			}
			i = s.blank(i, j, &line)
			prevDot, lastIdent = false, name
			continue
		case c == '.':
			prevDot = !prevDot && (i+1 >= len(src) || src[i+1] != '.')
			qual = lastIdent
			lastIdent = ""
			s.out[i] = ' '
			i++
			continue
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i, line
			}
		case c == '(' || c == '[':
			// The qualifier of what follows the closing bracket: m for m[i].x and
			// f(a).x, r for r.(T).x, as go/ast's last identifier has it.
			q := lastIdent
			if prevDot {
				q = qual
			}
			quals = append(quals, q)
			prevDot, lastIdent = false, ""
			s.out[i] = ' '
			i++
			continue
		case c == ')' || c == ']':
			lastIdent = ""
			if n := len(quals); n > 0 {
				lastIdent, quals = quals[n-1], quals[:n-1]
			}
			prevDot = false
			s.out[i] = ' '
			i++
			continue
		}
		prevDot, lastIdent = false, ""
		s.out[i] = ' '
		i++
	}
	return i, line
}

// blank replaces src[i:j] by spaces in s.out, keeping newlines, and counts them.
func (s *goSkim) blank(i, j int, line *int) int {
	for k := i; k < j; k++ {
		if s.src[k] == '\n' {
			*line++
			continue
		}
		s.out[k] = ' '
	}
	return j
}

// closeBracket returns the index after the ']' matching src[open], or len(src) when
// it is not found within the line.
func closeBracket(src []byte, open int) int {
	depth := 0
	for i := open; i < len(src) && i < open+200; i++ {
		switch src[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '\n', '"', '`', '\'', '{', '}':
			return len(src)
		}
	}
	return len(src)
}
