package parse

import (
	"bytes"
	"path"
	"strings"
)

var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true, "def": true,
	"del": true, "elif": true, "else": true, "except": true, "finally": true, "for": true,
	"from": true, "global": true, "if": true, "import": true, "in": true, "is": true,
	"lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true, "raise": true,
	"return": true, "try": true, "while": true, "with": true, "yield": true,
}

// pyStringPrefix reports whether an identifier just before a quote is a string prefix.
func pyStringPrefix(s string) bool {
	if len(s) > 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 'r', 'R', 'b', 'B', 'u', 'U', 'f', 'F', 't', 'T':
		default:
			return false
		}
	}
	return true
}

// pyStringEnd returns the index after the string literal whose quote is at src[i].
// In an f-string a replacement field may hold strings of its own.
func pyStringEnd(src []byte, i int, fstr bool) int {
	q := src[i]
	triple := i+2 < len(src) && src[i+1] == q && src[i+2] == q
	if triple {
		i += 3
	} else {
		i++
	}
	brace := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\\':
			i += 2
			continue
		case fstr && c == '{':
			if brace == 0 && i+1 < len(src) && src[i+1] == '{' {
				i += 2
				continue
			}
			brace++
		case fstr && c == '}':
			if brace > 0 {
				brace--
			}
		case brace > 0 && (c == '\'' || c == '"'):
			i = pyStringEnd(src, i, false)
			continue
		case c == q && brace == 0:
			if !triple {
				return i + 1
			}
			if i+2 < len(src) && src[i+1] == q && src[i+2] == q {
				return i + 3
			}
		case c == '\n' && !triple:
			return i
		}
		i++
	}
	return len(src)
}

// pyLex splits Python source into tokens, with a tNewline at the end of each logical
// line (brackets and backslashes join lines), and collects the comments.
func pyLex(src []byte) (toks []tok, cs []comment) {
	l := newLexer(src)
	depth := 0
	endLine := func(i int) { // a tNewline token, never two in a row
		if len(l.toks) > 0 && l.toks[len(l.toks)-1].kind != tNewline {
			l.emitLine(tNewline, i, i)
		}
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			if depth == 0 {
				endLine(i)
			}
			l.line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '\\':
			i++
			if i < len(src) && src[i] == '\r' {
				i++
			}
			if i < len(src) && src[i] == '\n' {
				l.line++
				i++
			}
		case c == '#':
			j := i
			for j < len(src) && src[j] != '\n' {
				j++
			}
			i = l.addComment(i, j)
		case c == '"' || c == '\'':
			i = l.emit(tString, i, pyStringEnd(src, i, false))
		case isIdentStart(c):
			j := identEnd(src, i+1)
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && pyStringPrefix(string(src[i:j])) {
				f := strings.ContainsAny(string(src[i:j]), "fFtT")
				i = l.emit(tString, i, pyStringEnd(src, j, f))
				continue
			}
			i = l.emitLine(tName, i, j)
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '.' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			i = l.emitLine(tNumber, i, j)
		default:
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			}
			i = l.emitLine(tOp, i, i+1)
		}
	}
	endLine(len(src))
	return l.toks, l.cs
}

// pyModule is the dotted module name of a path: "pkg/sub/mod.py" is "pkg.sub.mod",
// "pkg/__init__.py" is "pkg".
func pyModule(p string) string {
	p = strings.TrimPrefix(path.Clean(strings.ReplaceAll(p, "\\", "/")), "./")
	p = strings.TrimSuffix(p, path.Ext(p))
	p = strings.TrimSuffix(strings.TrimSuffix(p, "__init__"), "/")
	p = strings.TrimLeft(p, "/.")
	return strings.ReplaceAll(p, "/", ".")
}

// pyStringValue is the contents of a string token: prefix and quotes removed.
func pyStringValue(s string) string {
	s = strings.TrimLeft(s, "rRbBuUfFtT")
	for _, q := range []string{`"""`, `'''`, `"`, `'`} {
		if strings.HasPrefix(s, q) {
			s = strings.TrimPrefix(s, q)
			return strings.TrimSuffix(s, q)
		}
	}
	return s
}

func pyCommentText(s string) (string, bool) {
	if !strings.HasPrefix(s, "#") || strings.HasPrefix(s, "#!") {
		return "", false
	}
	s = strings.TrimPrefix(s, "#")
	return strings.TrimPrefix(s, " "), true
}

func pyExported(name string) bool {
	return !strings.HasPrefix(name, "_") || strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__")
}

func isUpperName(s string) bool {
	up := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			return false
		case c >= 'A' && c <= 'Z':
			up = true
		}
	}
	return up
}

type pyScope struct {
	indent int
	sym    int
	class  bool
}

func parsePython(p string, src []byte, refs bool) *File {
	f := &File{Package: pyModule(p)}
	toks, cs := pyLex(src)
	sc := newScanned(src, toks, cs)
	var stack []pyScope
	lastEnd := 1
	decoLine := 0    // first line of the decorators before a definition
	pendingDoc := -1 // the symbol whose docstring may come next
	for a := 0; a < len(toks); {
		b := a
		for b < len(toks) && toks[b].kind != tNewline {
			b++
		}
		ln := toks[a:b]
		a = b + 1
		if len(ln) == 0 {
			continue
		}
		first := ln[0]
		ls := first.s
		for ls > 0 && src[ls-1] != '\n' {
			ls--
		}
		indent := first.s - ls
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			f.Symbols[stack[len(stack)-1].sym].EndLine = lastEnd
			stack = stack[:len(stack)-1]
		}
		doc := pendingDoc
		pendingDoc = -1
		lastEnd = ln[len(ln)-1].eline
		if doc >= 0 && first.kind == tString && len(stack) > 0 && stack[len(stack)-1].sym == doc {
			if len(ln) == 1 || len(ln) == 2 && ln[1].is(src, ";") {
				f.Symbols[doc].Doc = dedent(pyStringValue(first.text(src)))
				continue
			}
		}
		if refs && !(first.kind == tName && (first.is(src, "import") || first.is(src, "from"))) {
			pyRefs(f, src, ln)
		}
		if first.kind == tOp && first.is(src, "@") {
			if decoLine == 0 {
				decoLine = first.line
			}
			continue
		}
		deco := decoLine
		decoLine = 0
		k := 0
		if first.kind == tName && first.is(src, "async") && len(ln) > 1 {
			k = 1
		}
		parent, inClass := "", false
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			parent, inClass = f.Symbols[top.sym].Name, top.class
		}
		switch {
		case k+1 < len(ln) && ln[k].kind == tName && ln[k+1].kind == tName && (ln[k].is(src, "def") || ln[k].is(src, "class")):
			name := ln[k+1].text(src)
			s := Symbol{Kind: KindFunc, Name: name, Parent: parent, Line: first.line, EndLine: lastEnd, Exported: pyExported(name)}
			isClass := ln[k].is(src, "class")
			switch {
			case isClass:
				s.Kind = KindClass
			case inClass:
				s.Kind = KindMethod
			}
			depth, colon := 0, len(ln)-1
			for j := k + 2; j < len(ln); j++ {
				if ln[j].kind != tOp {
					continue
				}
				switch src[ln[j].s] {
				case '(', '[', '{':
					depth++
				case ')', ']', '}':
					depth--
				case ':':
					if depth == 0 {
						colon = j
					}
				}
				if colon == j {
					break
				}
			}
			end := ln[colon].s
			if colon == len(ln)-1 && !ln[colon].is(src, ":") {
				end = ln[colon].e
			}
			s.Signature = oneLine(string(src[first.s:end]))
			from := first.line
			if deco > 0 {
				from = deco
			}
			s.Doc = sc.doc(from, pyCommentText)
			if refs && isClass {
				for j := k + 2; j < colon; j++ {
					if ln[j].kind == tName && !pyKeywords[ln[j].text(src)] && !(j+1 < len(ln) && ln[j+1].is(src, "(")) && !(j+1 < len(ln) && ln[j+1].is(src, "=")) {
						f.Refs = append(f.Refs, Ref{Name: ln[j].text(src), Line: ln[j].line})
					}
				}
			}
			f.Symbols = append(f.Symbols, s)
			stack = append(stack, pyScope{indent: indent, sym: len(f.Symbols) - 1, class: isClass})
			if colon == len(ln)-1 {
				pendingDoc = len(f.Symbols) - 1
			}
		case first.kind == tName && (first.is(src, "import") || first.is(src, "from")):
			pyImports(f, src, ln)
		case first.kind == tName && len(ln) > 1 && (len(stack) == 0 || inClass) && !pyKeywords[first.text(src)] &&
			(ln[1].is(src, "=") && !(len(ln) > 2 && ln[2].is(src, "=")) || ln[1].is(src, ":")):
			name := first.text(src)
			s := Symbol{Kind: KindVar, Name: name, Parent: parent, Line: first.line, EndLine: lastEnd, Exported: pyExported(name)}
			switch {
			case inClass:
				s.Kind = KindField
			case isUpperName(name):
				s.Kind = KindConst
			}
			sig := src[first.s:ln[len(ln)-1].e]
			if i := bytes.IndexByte(sig, '\n'); i >= 0 {
				sig = sig[:i]
			}
			s.Signature = oneLine(sig)
			s.Doc = sc.doc(first.line, pyCommentText)
			f.Symbols = append(f.Symbols, s)
		}
	}
	for len(stack) > 0 {
		f.Symbols[stack[len(stack)-1].sym].EndLine = lastEnd
		stack = stack[:len(stack)-1]
	}
	return f
}

// pyImports adds the modules of an import statement: "a.b" for import a.b as c, "..x"
// for from ..x import y.
func pyImports(f *File, src []byte, ln []tok) {
	var mod strings.Builder
	flush := func() {
		if mod.Len() > 0 {
			f.Imports = append(f.Imports, mod.String())
			mod.Reset()
		}
	}
	from := ln[0].is(src, "from")
	skip := false // after "as": the alias
	for _, t := range ln[1:] {
		switch {
		case t.kind == tName && t.is(src, "import"):
			flush()
			if from {
				return
			}
		case t.kind == tName && t.is(src, "as"):
			skip = true
		case t.kind == tOp && t.is(src, ","):
			flush()
			skip = false
		case t.kind == tOp && (t.is(src, "(") || t.is(src, ")")):
		case skip:
		case t.kind == tName || t.kind == tOp && t.is(src, "."):
			mod.WriteString(t.text(src))
		}
	}
	flush()
}

// pyRefs adds the calls and attribute uses of one logical line.
func pyRefs(f *File, src []byte, ln []tok) {
	for j, t := range ln {
		if t.kind != tName {
			continue
		}
		name := t.text(src)
		if pyKeywords[name] || j > 0 && ln[j-1].kind == tName && (ln[j-1].is(src, "def") || ln[j-1].is(src, "class")) {
			continue
		}
		call := j+1 < len(ln) && ln[j+1].kind == tOp && src[ln[j+1].s] == '('
		dot := j > 0 && ln[j-1].kind == tOp && src[ln[j-1].s] == '.'
		switch {
		case dot:
			q := ""
			if j > 1 && ln[j-2].kind == tName {
				q = ln[j-2].text(src)
			}
			f.Refs = append(f.Refs, Ref{Name: name, Qual: q, Line: t.line, Call: call})
		case call:
			f.Refs = append(f.Refs, Ref{Name: name, Line: t.line, Call: true})
		}
	}
}
