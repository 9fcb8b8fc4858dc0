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

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

var goKeywords = map[string]bool{
	"break": true, "case": true, "chan": true, "const": true, "continue": true, "default": true,
	"defer": true, "else": true, "fallthrough": true, "for": true, "func": true, "go": true,
	"goto": true, "if": true, "import": true, "interface": true, "map": true, "package": true,
	"range": true, "return": true, "select": true, "struct": true, "switch": true, "type": true,
	"var": true,
}

// skipQuoted returns the index after the literal that opens at src[i] with quote q.
// Interpreted strings and runes stop at a newline, as the Go scanner does.
func skipQuoted(src []byte, i int, q byte) int {
	for i++; i < len(src); i++ {
		switch src[i] {
		case '\\':
			if q != '`' {
				i++
			}
		case '\n':
			if q != '`' {
				return i
			}
		case q:
			return i + 1
		}
	}
	return len(src)
}

// skipComment returns the index after the comment that opens at src[i] ("//" or "/*").
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
		case c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*'):
			j := skipComment(src, i)
			for _, b := range src[i:j] {
				if b == '\n' {
					line++
				}
			}
			i = j
		case c == '"' || c == '`' || c == '\'':
			j := skipQuoted(src, i, c)
			for _, b := range src[i:j] {
				if b == '\n' {
					line++
				}
			}
			i = j
			typeKw = false
		case isIdentByte(c):
			j := i + 1
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
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
	prevDot := false // the last token was '.'
	qual := ""       // the identifier before that '.'
	lastIdent := ""  // the last token was this identifier
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
		case c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*'):
			j := skipComment(src, i)
			i = s.blank(i, j, &line)
			continue
		case c == '"' || c == '`' || c == '\'':
			j := skipQuoted(src, i, c)
			i = s.blank(i, j, &line)
			prevDot, lastIdent = false, ""
			continue
		case isIdentByte(c):
			j := i + 1
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
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
