package parse

// jsRegexAfter lists the keywords after which a '/' starts a regular expression.
var jsRegexAfter = map[string]bool{
	"return": true, "typeof": true, "case": true, "do": true, "else": true, "in": true,
	"of": true, "new": true, "delete": true, "void": true, "throw": true, "yield": true,
	"await": true, "instanceof": true,
}

// jsQuotedEnd returns the index after the '…' or "…" string opening at src[i]; an
// unterminated string ends at the line's end.
func jsQuotedEnd(src []byte, i int) int { return quotedEnd(src, i, true, false) }

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
			if isCommentStart(src, i) {
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
	l := newLexer(src)
	regexOK := func() bool {
		if len(l.toks) == 0 {
			return true
		}
		t := l.toks[len(l.toks)-1]
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
		case l.space(i):
			i++
		case isCommentStart(src, i):
			i = l.addComment(i, skipComment(src, i))
		case c == '/' && !java && regexOK():
			if j := jsRegexEnd(src, i); j >= 0 {
				i = l.emitLine(tString, i, j)
			} else {
				i = l.emitLine(tOp, i, i+1)
			}
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
			i = l.emit(tString, i, j)
		case isIdentStart(c) || c == '$' || c == '#' && i+1 < len(src) && isIdentStart(src[i+1]):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '$') {
				j++
			}
			i = l.emitLine(tName, i, j)
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '.') {
				j++
			}
			i = l.emitLine(tNumber, i, j)
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
			i = l.emitLine(tOp, i, i+n)
		}
	}
	return l.toks, l.cs
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
