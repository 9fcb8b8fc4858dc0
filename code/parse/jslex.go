package parse

// jsRegexAfter lists the keywords after which a '/' starts a regular expression.
var jsRegexAfter = map[string]bool{
	"return": true, "typeof": true, "case": true, "do": true, "else": true, "in": true,
	"of": true, "new": true, "delete": true, "void": true, "throw": true, "yield": true,
	"await": true, "instanceof": true,
}

// jsQuotedEnd returns the index after the '…' or "…" string opening at src[i]; an
// unterminated string ends at the line's end.
func jsQuotedEnd(src []byte, i int) int {
	q := src[i]
	for i++; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '\n':
			return i
		case q:
			return i + 1
		}
	}
	return len(src)
}

// jsTemplateEnd returns the index after the template literal opening at src[i],
// skipping the expressions in ${…} with their own strings and templates.
func jsTemplateEnd(src []byte, i int) int {
	for i++; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '`':
			return i + 1
		case '$':
			if i+1 < len(src) && src[i+1] == '{' {
				i = jsExprEnd(src, i+2) - 1
			}
		}
	}
	return len(src)
}

// jsExprEnd returns the index after the '}' that closes a ${ expression starting at i.
func jsExprEnd(src []byte, i int) int {
	depth := 1
	for i < len(src) {
		switch c := src[i]; c {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '\'', '"':
			i = jsQuotedEnd(src, i)
			continue
		case '`':
			i = jsTemplateEnd(src, i)
			continue
		case '/':
			if i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*') {
				i = skipComment(src, i)
				continue
			}
		}
		i++
	}
	return len(src)
}

// jsRegexEnd returns the index after the regular expression literal opening at
// src[i], or -1 when there is none on this line (then '/' is division).
func jsRegexEnd(src []byte, i int) int {
	class := false
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '\n':
			return -1
		case '[':
			class = true
		case ']':
			class = false
		case '/':
			if !class {
				j++
				for j < len(src) && isIdentByte(src[j]) {
					j++
				}
				return j
			}
		}
	}
	return -1
}

// jsLex splits JavaScript or TypeScript source into tokens and comments. The
// operators "=>", "?." and "..." are single tokens; every other operator is one byte.
func jsLex(src []byte) (toks []tok, cs []comment) { return cLikeLex(src, false) }

// cLikeLex is jsLex, or with java the lexer for Java: no regular expressions or
// template literals, but text blocks ("""…""").
func cLikeLex(src []byte, java bool) (toks []tok, cs []comment) {
	line := 1
	toks = make([]tok, 0, len(src)/5)
	regexOK := func() bool {
		if len(toks) == 0 {
			return true
		}
		t := toks[len(toks)-1]
		switch t.kind {
		case tName:
			return jsRegexAfter[string(src[t.s:t.e])]
		case tOp:
			c := src[t.s]
			return t.e-t.s > 1 || c != ')' && c != ']' && c != '}'
		}
		return false
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*'):
			j := skipComment(src, i)
			n := countLines(src, i, j)
			cs = append(cs, comment{line: line, eline: line + n, text: string(src[i:j])})
			line += n
			i = j
		case c == '/' && !java && regexOK():
			j := jsRegexEnd(src, i)
			if j < 0 {
				toks = append(toks, tok{kind: tOp, s: i, e: i + 1, line: line, eline: line})
				i++
				continue
			}
			toks = append(toks, tok{kind: tString, s: i, e: j, line: line, eline: line})
			i = j
		case c == '\'' || c == '"' || c == '`' && !java:
			var j int
			switch {
			case java && c == '"' && i+2 < len(src) && src[i+1] == '"' && src[i+2] == '"':
				j = javaTextBlockEnd(src, i)
			case c == '`':
				j = jsTemplateEnd(src, i)
			default:
				j = jsQuotedEnd(src, i)
			}
			n := countLines(src, i, j)
			toks = append(toks, tok{kind: tString, s: i, e: j, line: line, eline: line + n})
			line += n
			i = j
		case isIdentStart(c) || c == '$' || c == '#' && i+1 < len(src) && isIdentStart(src[i+1]):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '$') {
				j++
			}
			toks = append(toks, tok{kind: tName, s: i, e: j, line: line, eline: line})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '.') {
				j++
			}
			toks = append(toks, tok{kind: tNumber, s: i, e: j, line: line, eline: line})
			i = j
		default:
			n := 1
			if i+1 < len(src) {
				switch d := src[i+1]; {
				case c == '=' && d == '>', c == '?' && d == '.' && !(i+2 < len(src) && isDigit(src[i+2])):
					n = 2
				case c == '.' && d == '.' && i+2 < len(src) && src[i+2] == '.':
					n = 3
				}
			}
			toks = append(toks, tok{kind: tOp, s: i, e: i + n, line: line, eline: line})
			i += n
		}
	}
	return toks, cs
}

// javaTextBlockEnd returns the index after the Java text block opening at src[i].
func javaTextBlockEnd(src []byte, i int) int {
	for i += 3; i+2 < len(src); i++ {
		if src[i] == '\\' {
			i++
			continue
		}
		if src[i] == '"' && src[i+1] == '"' && src[i+2] == '"' {
			return i + 3
		}
	}
	return len(src)
}
