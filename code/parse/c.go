package parse

import (
	"bytes"
	"sort"
	"strings"
)

// C and C++ share one scanner: the C++ constructs (classes, namespaces,
// templates, A::b) never occur in C, and C's are C++'s.

// cKeywords are the words that are never a definition's or a call's name.
var cKeywords = map[string]bool{
	"auto": true, "break": true, "case": true, "char": true, "const": true, "continue": true,
	"default": true, "do": true, "double": true, "else": true, "enum": true, "extern": true,
	"float": true, "for": true, "goto": true, "if": true, "inline": true, "int": true, "long": true,
	"register": true, "restrict": true, "return": true, "short": true, "signed": true,
	"sizeof": true, "static": true, "struct": true, "switch": true, "typedef": true, "union": true,
	"unsigned": true, "void": true, "volatile": true, "while": true, "_Bool": true, "bool": true,
	"_Alignas": true, "_Alignof": true, "_Atomic": true, "_Static_assert": true, "_Noreturn": true,
	"_Thread_local": true, "_Generic": true, "alignas": true, "alignof": true, "class": true,
	"constexpr": true, "consteval": true, "constinit": true, "const_cast": true, "decltype": true,
	"delete": true, "dynamic_cast": true, "explicit": true, "friend": true, "mutable": true,
	"namespace": true, "new": true, "noexcept": true, "operator": true, "private": true,
	"protected": true, "public": true, "reinterpret_cast": true, "static_assert": true,
	"static_cast": true, "template": true, "this": true, "throw": true, "try": true, "catch": true,
	"typeid": true, "typename": true, "using": true, "virtual": true,
	"co_await": true, "co_return": true, "co_yield": true, "requires": true, "concept": true,
	"thread_local": true, "wchar_t": true, "char8_t": true, "char16_t": true, "char32_t": true,
	"nullptr": true, "true": true, "false": true, "typeof": true, "__typeof__": true,
	"__attribute__": true, "__attribute": true, "__declspec": true, "__asm__": true, "asm": true,
	"__asm": true, "__inline": true, "__inline__": true, "__restrict": true, "__restrict__": true,
	"__extension__": true, "__volatile__": true, "__const": true, "defined": true,
}

// cAttrCalls are the words followed by a parenthesised group that is not a
// parameter list.
var cAttrCalls = map[string]bool{
	"__attribute__": true, "__attribute": true, "__declspec": true, "alignas": true, "_Alignas": true,
	"__asm__": true, "asm": true, "__asm": true, "decltype": true, "typeof": true, "__typeof__": true,
	"noexcept": true, "throw": true, "sizeof": true, "alignof": true, "_Alignof": true,
	"static_assert": true, "_Static_assert": true, "if": true, "while": true, "for": true,
	"switch": true, "return": true, "requires": true, "defined": true, "_Generic": true,
}

// cLex splits C or C++ source into tokens. Preprocessor directives do not
// reach toks: #define gives a macro symbol (its body's tokens go to mtoks,
// for references), #include an import; of an #if … #else … #endif every
// branch is read when each closes the brackets it opens, else only the
// first (never #if 0's), so that a header written in two branches does not
// unbalance the rest. Comments that begin a line go
// to cs; others are dropped.
type cLexer struct {
	src   []byte
	toks  []tok
	mtoks []tok
	cs    []comment
	f     *File
	line  int
	conds []int // for each #if being read: the tokens before its branch
}

func (l *cLexer) run() {
	src := l.src
	l.line = 1
	l.toks = make([]tok, 0, len(src)/6)
	lineStart := true // only white space since the last newline
	dirEnd := -1      // inside a directive's body until this index
	for i := 0; i < len(src); {
		if dirEnd >= 0 && i >= dirEnd {
			dirEnd = -1
		}
		c := src[i]
		out := &l.toks
		if dirEnd >= 0 {
			out = &l.mtoks
		}
		switch {
		case c == '\n':
			l.line++
			i++
			lineStart = true
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			i++ // a line continuation
			continue
		case c == '#' && lineStart && dirEnd < 0:
			i = l.directive(i)
			if i < len(src) && src[i] != '\n' {
				// A #define: its body is read as tokens up to the directive's end.
				dirEnd = cDirectiveEnd(src, i)
			}
			continue
		case c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*'):
			j := skipComment(src, i)
			n := countLines(src, i, j)
			if lineStart && dirEnd < 0 {
				l.cs = append(l.cs, comment{line: l.line, eline: l.line + n, text: string(src[i:j])})
			}
			l.line += n
			i = j
			continue
		}
		lineStart = false
		switch {
		case c == '"' || c == '\'':
			j := jsQuotedEnd(src, i)
			n := countLines(src, i, j)
			*out = append(*out, tok{kind: tString, s: i, e: j, line: l.line, eline: l.line + n})
			l.line += n
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && cStringPrefix(src[i:j]) {
				k := j
				if src[j-1] == 'R' && src[j] == '"' {
					k = cRawStringEnd(src, j)
				} else {
					k = jsQuotedEnd(src, j)
				}
				n := countLines(src, i, k)
				*out = append(*out, tok{kind: tString, s: i, e: k, line: l.line, eline: l.line + n})
				l.line += n
				i = k
				continue
			}
			*out = append(*out, tok{kind: tName, s: i, e: j, line: l.line, eline: l.line})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := i + 1
			for j < len(src) {
				d := src[j]
				if isIdentByte(d) || d == '.' ||
					d == '\'' && j+1 < len(src) && isIdentByte(src[j+1]) || // 1'000 (C++14, C23)
					(d == '+' || d == '-') && strings.IndexByte("eEpP", src[j-1]) >= 0 {
					j++
					continue
				}
				break
			}
			*out = append(*out, tok{kind: tNumber, s: i, e: j, line: l.line, eline: l.line})
			i = j
		default:
			n := 1
			if i+1 < len(src) {
				switch d := src[i+1]; {
				case c == ':' && d == ':', c == '-' && d == '>':
					n = 2
				case c == '.' && d == '.' && i+2 < len(src) && src[i+2] == '.':
					n = 3
				}
			}
			*out = append(*out, tok{kind: tOp, s: i, e: i + n, line: l.line, eline: l.line})
			i += n
		}
	}
}

// cStringPrefix reports whether an identifier just before a quote is an
// encoding or raw-string prefix: L u U u8 R LR uR UR u8R.
func cStringPrefix(b []byte) bool {
	switch string(b) {
	case "L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R":
		return true
	}
	return false
}

// cRawStringEnd returns the index after the raw string R"delim( … )delim"
// whose quote is at src[i].
func cRawStringEnd(src []byte, i int) int {
	j := i + 1
	for j < len(src) && j-i <= 17 && src[j] != '(' {
		if src[j] == '\n' || src[j] == '"' || src[j] == ')' || src[j] == '\\' || src[j] == ' ' {
			return jsQuotedEnd(src, i)
		}
		j++
	}
	if j >= len(src) || src[j] != '(' {
		return jsQuotedEnd(src, i)
	}
	end := append(append([]byte{')'}, src[i+1:j]...), '"')
	k := bytes.Index(src[j+1:], end)
	if k < 0 {
		return len(src)
	}
	return j + 1 + k + len(end)
}

// cDirective reads the preprocessor directive whose # is at i: its name
// ("define", "if", ...), where the name ends, and the end of its logical
// line.
func cDirective(src []byte, i int) (name string, nameEnd, end int) {
	end = cDirectiveEnd(src, i)
	k := i + 1
	for k < end && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	w := k
	for w < end && isIdentByte(src[w]) {
		w++
	}
	return string(src[k:w]), w, end
}

// cDirectiveEnd returns the index of the newline that ends the directive
// going on at i, following line continuations and block comments.
func cDirectiveEnd(src []byte, i int) int {
	for i < len(src) {
		switch c := src[i]; {
		case c == '\n':
			return i
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			i += 2
		case c == '\\' && i+2 < len(src) && src[i+1] == '\r' && src[i+2] == '\n':
			i += 3
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i = skipComment(src, i)
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			i = jsQuotedEnd(src, i)
		default:
			i++
		}
	}
	return len(src)
}

// directive reads the directive whose # is at i and returns where lexing
// goes on: the start of a #define's body, else the end of the directive (or
// of the skipped branch).
func (l *cLexer) directive(i int) int {
	src := l.src
	word, k, end := cDirective(src, i)
	rest := bytes.TrimSpace(src[k:end])
	switch word {
	case "define":
		if body := l.define(i, k, end); body < end {
			l.line += countLines(src, i, body)
			return body
		}
	case "include", "include_next", "import":
		if len(rest) > 1 && (rest[0] == '<' || rest[0] == '"') {
			q := byte('>')
			if rest[0] == '"' {
				q = '"'
			}
			if c := bytes.IndexByte(rest[1:], q); c >= 0 {
				l.f.Imports = append(l.f.Imports, string(rest[1:1+c]))
			}
		}
	case "if", "ifdef", "ifndef":
		if word == "if" && cFalse(rest) {
			e, atElse := l.skipBranch(end, true)
			if atElse {
				l.conds = append(l.conds, len(l.toks))
			}
			return e
		}
		l.conds = append(l.conds, len(l.toks))
	case "else", "elif", "elifdef", "elifndef":
		// The branch before was read. The next is read too when both keep
		// their brackets balanced; else only the first counts, so that a
		// header written twice does not unbalance the rest.
		if n := len(l.conds); n > 0 && cBalanced(l.src, l.toks[l.conds[n-1]:]) && l.branchBalanced(end) {
			l.conds[n-1] = len(l.toks)
			break
		}
		e, _ := l.skipBranch(end, false)
		if n := len(l.conds); n > 0 {
			l.conds = l.conds[:n-1]
		}
		return e
	case "endif":
		if n := len(l.conds); n > 0 {
			l.conds = l.conds[:n-1]
		}
	}
	l.line += countLines(src, i, end)
	return end
}

// define adds the macro of the #define at i whose word ends at k, and
// returns where its body starts (end when it has none or no name).
func (l *cLexer) define(i, k, end int) int {
	src := l.src
	for k < end && (src[k] == ' ' || src[k] == '\t') {
		k++
	}
	n := k
	for n < end && isIdentByte(src[n]) {
		n++
	}
	if n == k || !isIdentStart(src[k]) {
		return end
	}
	body := n
	if n < end && src[n] == '(' {
		if c := bytes.IndexByte(src[n:end], ')'); c >= 0 {
			body = n + c + 1
		}
	}
	sig := src[i:end]
	if nl := bytes.IndexByte(sig, '\n'); nl >= 0 {
		sig = sig[:nl]
	}
	if c := bytes.Index(sig, []byte("/*")); c > 0 && c > body-i {
		sig = sig[:c]
	}
	if c := bytes.Index(sig, []byte("//")); c > 0 && c > body-i {
		sig = sig[:c]
	}
	l.f.Symbols = append(l.f.Symbols, Symbol{Kind: KindMacro, Name: string(src[k:n]), Line: l.line,
		EndLine: l.line + countLines(src, i, end), Exported: true,
		Signature: oneLine(bytes.TrimSuffix(bytes.TrimSpace(sig), []byte("\\")))})
	return body
}

// cFalse reports whether an #if condition is plainly false: 0.
func cFalse(cond []byte) bool {
	if c := bytes.Index(cond, []byte("//")); c >= 0 {
		cond = cond[:c]
	}
	if c := bytes.Index(cond, []byte("/*")); c >= 0 {
		cond = cond[:c]
	}
	s := string(bytes.TrimSpace(cond))
	return s == "0" || s == "(0)" || s == "false"
}

// skipBranch skips the lines from the directive ending at end up to the
// #endif of its group, or, when toElse, to an #else or #elif of it (whose
// branch is then read), keeping only the macros #define'd there. It
// returns where lexing goes on.
func (l *cLexer) skipBranch(end int, toElse bool) (int, bool) {
	src := l.src
	depth := 0
	i := end
	for i < len(src) {
		// i is at a newline (or the end): look at the next line.
		l.line++
		i++
		j := i
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		var e int
		if j < len(src) && src[j] == '#' {
			var name string
			var w int
			name, w, e = cDirective(src, j)
			switch name {
			case "define":
				// The other branch's macros are still macros of the file.
				l.define(j, w, e)
			case "if", "ifdef", "ifndef":
				depth++
			case "endif":
				if depth == 0 {
					l.line += countLines(src, i, e)
					return e, false
				}
				depth--
			case "else", "elif", "elifdef", "elifndef":
				if depth == 0 && toElse {
					l.line += countLines(src, i, e)
					return e, true
				}
			}
		} else {
			e = bytes.IndexByte(src[i:], '\n')
			if e < 0 {
				return len(src), false
			}
			e += i
		}
		l.line += countLines(src, i, e)
		i = e
	}
	return len(src), false
}

// cBalanced reports whether toks close every bracket they open and end a
// statement (with ; or }), or are none.
func cBalanced(src []byte, toks []tok) bool {
	if n := len(toks); n > 0 && !(toks[n-1].kind == tOp && (toks[n-1].is(src, ";") || toks[n-1].is(src, "}"))) {
		return false
	}
	var b [3]int
	for _, t := range toks {
		if t.kind != tOp || t.e-t.s != 1 {
			continue
		}
		switch src[t.s] {
		case '{':
			b[0]++
		case '}':
			b[0]--
		case '(':
			b[1]++
		case ')':
			b[1]--
		case '[':
			b[2]++
		case ']':
			b[2]--
		}
		if b[0] < 0 || b[1] < 0 || b[2] < 0 {
			return false
		}
	}
	return b == [3]int{}
}

// branchBalanced reports whether the branch that starts after the
// directive ending at end, up to its group's next #else, #elif or #endif,
// closes every bracket it opens and ends a statement, or is empty.
func (l *cLexer) branchBalanced(end int) bool {
	src := l.src
	var b [3]int
	var last byte // the last byte of code
	depth := 0
	lineStart := true
	for i := end; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == '#' && lineStart:
			name, _, e := cDirective(src, i)
			switch name {
			case "if", "ifdef", "ifndef":
				depth++
			case "endif", "else", "elif", "elifdef", "elifndef":
				if depth == 0 {
					return b == [3]int{} && (last == 0 || last == ';' || last == '}')
				}
				if name == "endif" {
					depth--
				}
			}
			i = e
			continue
		case c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*'):
			i = skipComment(src, i)
			continue
		case c == '"' || c == '\'':
			i = jsQuotedEnd(src, i)
		case c == '{':
			b[0]++
		case c == '}':
			b[0]--
		case c == '(':
			b[1]++
		case c == ')':
			b[1]--
		case c == '[':
			b[2]++
		case c == ']':
			b[2]--
		}
		if b[0] < 0 || b[1] < 0 || b[2] < 0 {
			return false
		}
		lineStart = false
		last = c
		if c != '"' && c != '\'' {
			i++
		}
	}
	return false // the file ends inside the group
}

// cScope is the body a declaration is read in.
type cScope struct {
	kind   byte   // 't' top level or namespace, 'c' class, struct or union
	name   string // the enclosing namespace or type: the Parent of what is declared
	public bool   // members are public (struct, union, public: in a class)
	hidden bool   // in an anonymous namespace
}

type cParser struct {
	work   int // tokens looked at by the look-ahead helpers (TestScannersLinear)
	src    []byte
	toks   []tok
	match  []int32
	f      *File
	cs     []comment
	byEnd  map[int]int
	noRef  map[int]bool // tokens that name a definition
	types  map[string]bool
	spaces map[string]bool
	depth  int
}

func newCParser(src []byte) (*cParser, *cLexer) {
	f := &File{}
	l := &cLexer{src: src, f: f}
	l.run()
	p := &cParser{src: src, toks: l.toks, match: matchBrackets(src, l.toks), f: f, cs: l.cs,
		byEnd: make(map[int]int, len(l.cs)), noRef: map[int]bool{}, types: map[string]bool{}, spaces: map[string]bool{}}
	for i, c := range l.cs {
		p.byEnd[c.eline] = i
	}
	return p, l
}

func parseC(src []byte, refs bool) *File {
	p, l := newCParser(src)
	for i := range p.f.Symbols { // the macros
		p.f.Symbols[i].Doc = commentDoc(p.cs, p.byEnd, p.f.Symbols[i].Line, cDocText)
	}
	p.block(0, len(p.toks), cScope{kind: 't', public: true})
	// Macros came first from the lexer: put every symbol in source order.
	sort.SliceStable(p.f.Symbols, func(a, b int) bool { return p.f.Symbols[a].Line < p.f.Symbols[b].Line })
	if refs {
		p.collectRefs(p.toks, true)
		p.collectRefs(l.mtoks, false)
	}
	return p.f
}

func (p *cParser) op(i int, s string) bool {
	return i >= 0 && i < len(p.toks) && p.toks[i].kind == tOp && p.toks[i].is(p.src, s)
}

func (p *cParser) name(i int, s string) bool {
	return i >= 0 && i < len(p.toks) && p.toks[i].kind == tName && p.toks[i].is(p.src, s)
}

func (p *cParser) isName(i int) bool {
	return i >= 0 && i < len(p.toks) && p.toks[i].kind == tName
}

func (p *cParser) text(i int) string { return p.toks[i].text(p.src) }

// after returns the index after the bracketed group opening at i, bounded
// by end.
func (p *cParser) after(i, end int) int {
	if m := int(p.match[i]); m >= 0 && m < end {
		return m + 1
	}
	return end
}

// angleEnd returns the index after the <…> group opening at i, or i+1 when
// it does not close before a ; { or }.
func (p *cParser) angleEnd(i, end int) int {
	depth := 0
	for j := i; j < end && j < i+lookAhead; j++ {
		p.work++
		t := p.toks[j]
		if t.kind != tOp {
			continue
		}
		switch p.src[t.s] {
		case '<':
			depth++
		case '>':
			depth--
			if depth == 0 {
				return j + 1
			}
		case '(', '[':
			j = p.after(j, end) - 1
		case ';', '{', '}':
			return i + 1
		}
	}
	return i + 1
}

func (p *cParser) add(s Symbol, start, nameTok, sigEnd, endTok int) int {
	s.Line = p.toks[start].line
	s.EndLine = max(p.toks[endTok].eline, s.Line)
	sigEnd = max(sigEnd, start)
	s.Signature = oneLine(p.src[p.toks[start].s:p.toks[sigEnd].e])
	s.Doc = commentDoc(p.cs, p.byEnd, s.Line, cDocText)
	if nameTok >= 0 {
		p.noRef[nameTok] = true
	}
	p.f.Symbols = append(p.f.Symbols, s)
	return len(p.f.Symbols) - 1
}

// cDocText strips the markers of a comment above a definition: any // or
// /* */ comment counts, Doxygen's /** /*! /// //! as well.
func cDocText(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "/*"):
		s = strings.TrimSuffix(strings.TrimLeft(strings.TrimPrefix(s, "/*"), "*!"), "*/")
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			l = strings.TrimLeft(l, " \t")
			if !strings.HasPrefix(l, "*/") {
				l = strings.TrimPrefix(l, "*")
			}
			lines[i] = strings.TrimRight(strings.TrimPrefix(l, " "), " \t\r*")
		}
		return strings.Join(lines, "\n"), true
	case strings.HasPrefix(s, "//"):
		s = strings.TrimLeft(strings.TrimPrefix(s, "//"), "/!")
		return strings.TrimRight(strings.TrimPrefix(s, " "), " \t\r"), true
	}
	return "", false
}

// block reads the declarations of toks[i:end] in scope sc.
func (p *cParser) block(i, end int, sc cScope) {
	p.depth++
	defer func() { p.depth-- }()
	for i < end {
		t := p.toks[i]
		if t.kind == tOp {
			switch p.src[t.s] {
			case '{', '(', '[':
				i = p.after(i, end)
			default:
				i++
			}
			continue
		}
		if t.kind != tName {
			i++
			continue
		}
		switch {
		case sc.kind == 'c' && (p.name(i, "public") || p.name(i, "private") || p.name(i, "protected")) && p.op(i+1, ":"):
			sc.public = p.name(i, "public")
			i += 2
			continue
		case p.name(i, "extern") && p.toks[min(i+1, end-1)].kind == tString && i+1 < end:
			if p.op(i+2, "{") && i+2 < end {
				close := p.after(i+2, end)
				p.block(i+3, close-1, sc)
				i = close
			} else {
				i += 2
			}
			continue
		case p.name(i, "namespace") || p.name(i, "inline") && p.name(i+1, "namespace"):
			i = p.namespace(i, end, sc)
			continue
		case p.name(i, "using") || p.name(i, "static_assert") || p.name(i, "_Static_assert"):
			i = p.using(i, end, sc)
			continue
		}
		i = p.decl(i, end, sc)
	}
}

func (p *cParser) namespace(i, end int, sc cScope) int {
	start := i
	if p.name(i, "inline") {
		i++
	}
	j := i + 1
	var segs []int
	for j < end && p.isName(j) {
		segs = append(segs, j)
		j++
		if p.op(j, "::") {
			j++
			if p.name(j, "inline") {
				j++
			}
		}
	}
	for j < end && (p.op(j, "[") || p.name(j, "__attribute__")) { // attributes
		if p.name(j, "__attribute__") {
			j++
		}
		if j < end && (p.op(j, "[") || p.op(j, "(")) {
			j = p.after(j, end)
		}
	}
	if !p.op(j, "{") || j >= end {
		// An alias (namespace a = b;) or a broken one.
		for j < end && !p.op(j, ";") && !p.op(j, "{") && !p.op(j, "}") {
			j++
		}
		return j + 1
	}
	close := p.after(j, end)
	inner := sc
	inner.kind = 't'
	if len(segs) == 0 {
		inner.hidden = true
	} else {
		parent := sc.name
		for _, s := range segs {
			name := p.text(s)
			if p.depth < 200 {
				p.add(Symbol{Kind: KindModule, Name: name, Parent: parent, Exported: !sc.hidden}, start, s, j-1, close-1)
			}
			p.spaces[name] = true
			parent = name
		}
		inner.name = parent
	}
	if p.depth < 200 {
		p.block(j+1, close-1, inner)
	}
	return close
}

// declEnd returns the ; } or { that ends the declaration going on at j
// (or end), stepping over parenthesised and bracketed groups whole.
func (p *cParser) declEnd(j, end int) int {
	for j < end && !p.op(j, ";") && !p.op(j, "}") && !p.op(j, "{") {
		p.work++
		if p.op(j, "(") || p.op(j, "[") {
			j = p.after(j, end)
			continue
		}
		j++
	}
	return j
}

// using reads a using or static_assert declaration: using X = T is a type.
func (p *cParser) using(i, end int, sc cScope) int {
	j := p.declEnd(i+1, end)
	if p.name(i, "using") && p.isName(i+1) && p.op(i+2, "=") {
		p.add(Symbol{Kind: KindType, Name: p.text(i + 1), Parent: sc.name, Exported: sc.public && !sc.hidden}, i, i+1, max(j-1, i+1), min(j, end-1))
	}
	if p.op(j, "{") && j < end {
		j = p.after(j, end)
		for j < end && !p.op(j, ";") {
			j++
		}
	}
	return j + 1
}

// cTypeKind is the kind of a type keyword's definition.
func cTypeKind(w string) (Kind, bool) {
	switch w {
	case "struct", "union":
		return KindStruct, true
	case "class":
		return KindClass, true
	case "enum":
		return KindEnum, true
	}
	return "", false
}

// decl reads one declaration or definition starting at i and returns the
// index after it.
func (p *cParser) decl(i, end int, sc cScope) int {
	start := i
	if p.name(i, "template") && p.op(i+1, "<") {
		i = p.angleEnd(i+1, end)
		if i >= end {
			return end
		}
	}
	typedef, static, extern := false, false, false
	// The header: up to the ; or { that ends it, bracketed groups skipped.
	j := i
	assign, typeKw := -1, -1
	for j < end {
		p.work++
		t := p.toks[j]
		if t.kind == tName {
			switch p.text(j) {
			case "typedef":
				typedef = true
			case "static":
				static = true
			case "extern":
				extern = true
			case "struct", "class", "union", "enum":
				if typeKw < 0 && assign < 0 && !p.op(j-1, "<") && !p.op(j-1, ",") {
					typeKw = j
				}
			case "operator":
				// operator= and operator== are names, not initialisers.
				for j+1 < end && p.toks[j+1].kind == tOp && !p.op(j+1, "(") && !p.op(j+1, ";") && !p.op(j+1, "{") && !p.op(j+1, "}") {
					j++
				}
			}
			j++
			continue
		}
		if t.kind != tOp {
			j++
			continue
		}
		c := p.src[t.s]
		if t.e-t.s == 1 && (c == ';' || c == '{' || c == '}') {
			break
		}
		if t.e-t.s == 1 && (c == '(' || c == '[') {
			j = p.after(j, end)
			continue
		}
		if t.e-t.s == 1 && c == '=' && assign < 0 {
			assign = j
		}
		if t.e-t.s == 1 && c == ':' && p.op(j-1, ")") && assign < 0 {
			break // a constructor's initialiser list
		}
		j++
	}
	if j >= end {
		j = end
	}
	hidden := sc.hidden || static && sc.kind == 't'
	exported := sc.public && !hidden
	// A struct, class, union or enum with a body.
	if typeKw >= 0 && p.op(j, "{") && j < end && !p.hasCallBefore(typeKw, j) {
		return p.typeDef(start, typeKw, j, end, sc, typedef, exported)
	}
	if p.op(j, "{") && assign >= 0 && j < end {
		// An initialiser: int a[] = {…}; or a lambda.
		j = p.skipTo(j, end)
	}
	fn := p.funcName(i, j)
	if fn >= 0 && (assign < 0 || assign > fn) && !typedef {
		return p.function(start, fn, j, end, sc, exported)
	}
	if p.op(j, "{") && j < end {
		if p.op(j-1, ")") {
			// A body after a header with no plain name: a function returning a
			// function pointer, void (*(f(void)))(int) { … }, or a macro's.
			if n := p.innerFunc(i, j); n >= 0 && !typedef {
				return p.function(start, n, j, end, sc, exported)
			}
			return p.after(j, end)
		}
		// Brace initialisation (T x{…};).
		j = p.skipTo(j, end)
	}
	if extern && sc.kind == 't' || j <= i {
		return j + 1
	}
	kind := KindVar
	switch {
	case typedef:
		kind = KindType
	case sc.kind == 'c':
		kind = KindField
	}
	p.declarators(start, i, j, end, Symbol{Kind: kind, Parent: sc.name, Exported: exported || typedef && !hidden})
	return j + 1
}

// hasCallBefore reports whether a depth-0 parenthesised group that follows
// a name comes before the type keyword's body: struct s *f(void) { … } is
// a function.
func (p *cParser) hasCallBefore(kw, body int) bool {
	for k := kw + 1; k < body; k++ {
		if p.op(k, "(") && !(p.isName(k-1) && cAttrCalls[p.text(k-1)]) {
			return true
		}
	}
	return false
}

// skipTo returns the index of the ; ending the statement whose initialiser
// brace is at j.
func (p *cParser) skipTo(j, end int) int {
	for j < end {
		p.work++
		switch {
		case p.op(j, "{") || p.op(j, "(") || p.op(j, "["):
			j = p.after(j, end)
		case p.op(j, ";"):
			return j
		case p.op(j, "}"):
			return j
		default:
			j++
		}
	}
	return end
}

// funcName returns the token naming the function whose parameter list is
// a depth-0 group of toks[i:j], or -1: the last name before a group that
// is not an attribute, sizeof and the like, unless it is an upper-case
// macro after the parameters (int f(void) NONNULL(1)).
func (p *cParser) funcName(i, j int) int {
	var cands []int // name tokens
	var closes []int
	for k := i; k < j; k++ {
		p.work++
		if !p.op(k, "(") {
			if p.op(k, "[") || p.op(k, "{") {
				k = p.after(k, j) - 1
			}
			continue
		}
		close := p.after(k, j)
		n := p.nameBefore(k, i)
		if n >= 0 {
			cands = append(cands, n)
			closes = append(closes, close)
		}
		k = close - 1
	}
	if len(cands) == 0 {
		return -1
	}
	last := len(cands) - 1
	if last > 0 && cUpper(p.text(cands[last])) {
		allNames := true
		for k := closes[last-1]; k < cands[last]; k++ {
			if !p.isName(k) {
				allNames = false
			}
		}
		if allNames {
			last--
		}
	}
	return cands[last]
}

// innerFunc returns the name of a function whose declarator is nested in
// a group opening with * or ^ in toks[i:j]: f in void (*(f(void)))(int), or -1.
func (p *cParser) innerFunc(i, j int) int {
	for k := i; k < j; k++ {
		if !p.op(k, "(") {
			continue
		}
		close := p.after(k, j)
		if p.op(k+1, "*") || p.op(k+1, "^") {
			for m := k + 1; m < close-1; m++ {
				if p.op(m, "(") && p.isName(m-1) && !cKeywords[p.text(m-1)] && !cAttrCalls[p.text(m-1)] {
					return m - 1
				}
			}
		}
		k = close - 1
	}
	return -1
}

// nameBefore returns the token naming what the group opening at k is the
// parameter list of, or -1: a name (not a keyword), operator@, ~Name, or
// name<…>.
func (p *cParser) nameBefore(k, i int) int {
	n := k - 1
	if n < i {
		return -1
	}
	if p.op(n, ">") {
		n = p.beforeAngles(n, i)
		if n == k-1 || p.name(n, "operator") {
			return -1
		}
	}
	// operator+, operator(), operator new, operator bool.
	for m := n; m >= i && m >= n-3; m-- {
		if p.name(m, "operator") {
			if p.op(m+1, "(") && m+1 == k {
				return -1 // operator ( ) ( … ): the first group is the name's
			}
			return m
		}
	}
	if !p.isName(n) {
		return -1
	}
	w := p.text(n)
	if cKeywords[w] || cAttrCalls[w] {
		return -1
	}
	return n
}

// beforeAngles returns the token before the < that matches the > at n
// (the start of name<…>), reading back no further than lo nor than
// cBackScan tokens; n itself when there is none.
func (p *cParser) beforeAngles(n, lo int) int {
	depth := 0
	for m := n; m >= lo && m > n-cBackScan; m-- {
		p.work++
		if p.op(m, ">") {
			depth++
		} else if p.op(m, "<") {
			depth--
			if depth == 0 {
				return m - 1
			}
		}
	}
	return n
}

// cBackScan bounds the tokens read back from a parameter list to the name
// before template arguments (f<int>(…), A<T>::f(…)).
const cBackScan = 128

func cUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'a' && s[i] <= 'z' {
			return false
		}
	}
	return true
}

// fnName is the name of the function at token n: operator names joined up
// to their parameters, ~ kept for a destructor.
func (p *cParser) fnName(n int) string {
	if p.name(n, "operator") {
		var b strings.Builder
		b.WriteString("operator")
		k := n + 1
		if p.op(k, "(") && p.op(k+1, ")") {
			return "operator()"
		}
		for ; k < len(p.toks) && k < n+6 && !p.op(k, "("); k++ {
			if p.isName(k) {
				b.WriteByte(' ')
			}
			b.WriteString(p.text(k))
		}
		return b.String()
	}
	if p.op(n-1, "~") {
		return "~" + p.text(n)
	}
	return p.text(n)
}

// function reads a function or method whose name is at n in the header
// toks[start:j] (j the { of its body, a ; or a constructor's :).
func (p *cParser) function(start, n, j, end int, sc cScope, exported bool) int {
	name := p.fnName(n)
	// The qualifier: A::B::f has Parent B.
	q := n
	if p.op(q-1, "~") {
		q--
	}
	parent, qualified := sc.name, false
	if p.op(q-1, "::") {
		m := q - 2
		if p.op(m, ">") {
			m = p.beforeAngles(m, start)
		}
		if p.isName(m) {
			parent, qualified = p.text(m), true
		}
	}
	// The body: after the parameters, qualifiers, a trailing return type, an
	// initialiser list.
	k := j
	if p.op(k, ":") {
		for k < end {
			p.work++
			switch {
			case p.op(k, "{") && !p.isName(k-1) && !p.op(k-1, ">"):
			case p.op(k, "(") || p.op(k, "{") || p.op(k, "["):
				k = p.after(k, end)
				continue
			case p.op(k, ";") || p.op(k, "}"):
			default:
				k++
				continue
			}
			break
		}
	}
	sigEnd := j - 1
	kind := KindFunc
	switch {
	case qualified && !p.spaces[parent]:
		kind = KindMethod
	case !qualified && sc.kind == 'c':
		kind = KindMethod
	}
	if qualified {
		exported = exported && !strings.HasPrefix(name, "_")
	}
	if p.op(k, "{") && k < end {
		close := p.after(k, end)
		p.add(Symbol{Kind: kind, Name: name, Parent: parent, Exported: exported}, start, n, sigEnd, close-1)
		return close
	}
	// A declaration: only a class's members are listed.
	if sc.kind == 'c' && !qualified {
		e := min(k, end-1)
		if p.op(sigEnd, "=") { // = 0, = default
			sigEnd--
		}
		for sigEnd > n && p.op(sigEnd, "=") {
			sigEnd--
		}
		p.add(Symbol{Kind: KindMethod, Name: name, Parent: parent, Exported: exported}, start, n, cSigEnd(p, n, sigEnd), e)
	}
	return k + 1
}

// cSigEnd leaves a pure or defaulted declaration's "= 0" out of its signature.
func cSigEnd(p *cParser, n, sigEnd int) int {
	for k := sigEnd; k > n; k-- {
		if p.op(k, "=") && p.op(k-1, ")") {
			return k - 1
		}
	}
	return sigEnd
}

// typeDef reads a struct, class, union or enum whose keyword is at kw and
// body brace at body, and the declarators after it.
func (p *cParser) typeDef(start, kw, body, end int, sc cScope, typedef, exported bool) int {
	kind, _ := cTypeKind(p.text(kw))
	k := kw + 1
	if kind == KindEnum && (p.name(k, "class") || p.name(k, "struct")) {
		k++
	}
	nameTok := -1
	for ; k < body; k++ {
		p.work++
		switch {
		case p.op(k, "[") || p.op(k, "("):
			k = p.after(k, body) - 1
		case p.op(k, "<"):
			k = p.angleEnd(k, body) - 1
		case p.op(k, ":") || p.name(k, "final"):
			k = body
		case p.isName(k) && !cKeywords[p.text(k)]:
			nameTok = k
		}
	}
	close := p.after(body, end)
	sym := -1
	name := ""
	if nameTok >= 0 {
		name = p.text(nameTok)
	} else if typedef {
		// typedef struct { … } T: the struct is T.
		if n := p.firstDeclarator(close, end); n >= 0 {
			name, nameTok = p.text(n), n
		}
	}
	if name != "" {
		sym = p.add(Symbol{Kind: kind, Name: name, Parent: sc.name, Exported: exported || typedef}, start, nameTok, body-1, close-1)
		p.f.Symbols[sym].Signature = oneLine(p.src[p.toks[start].s:p.toks[max(body-1, start)].e])
		p.types[name] = true
	}
	inner := cScope{kind: 'c', name: name, public: kind != KindClass, hidden: sc.hidden}
	if name == "" && sc.kind == 'c' {
		inner.name, inner.public = sc.name, sc.public // an anonymous member union: its fields are the type's
	}
	switch {
	case p.depth >= 200:
	case kind == KindEnum:
		p.enumerators(body+1, close-1, name, exported || typedef)
	default:
		p.block(body+1, close-1, inner)
	}
	// Declarators: struct s { … } a, *b; or typedef struct s { … } T;
	j := p.declEnd(close, end)
	if j > close {
		kind := KindVar
		switch {
		case typedef:
			kind = KindType
		case sc.kind == 'c':
			kind = KindField
		}
		if !(typedef && nameTok >= close) { // not the name the anonymous type took
			p.declarators(start, close, j, end, Symbol{Kind: kind, Parent: sc.name, Exported: exported || typedef})
		} else if n := p.nextDeclarator(close, j); n > 0 {
			p.declarators(start, n, j, end, Symbol{Kind: kind, Parent: sc.name, Exported: true})
		}
	}
	if j >= end {
		return end
	}
	return j + 1
}

// enumerators adds the constants of an enum body toks[i:end].
func (p *cParser) enumerators(i, end int, parent string, exported bool) {
	want := true
	for k := i; k < end; k++ {
		p.work++
		switch {
		case p.op(k, "(") || p.op(k, "[") || p.op(k, "{"):
			k = p.after(k, end) - 1
		case p.op(k, ","):
			want = true
		case want && p.isName(k):
			want = false
			e := k
			for e+1 < end && !p.op(e+1, ",") {
				if p.op(e+1, "(") || p.op(e+1, "[") || p.op(e+1, "{") {
					e = p.after(e+1, end) - 1
					continue
				}
				e++
			}
			p.add(Symbol{Kind: KindConst, Name: p.text(k), Parent: parent, Exported: exported}, k, k, e, e)
			k = e
		}
	}
}

// firstDeclarator returns the name token of the first declarator in
// toks[i:] up to the ;, or -1.
func (p *cParser) firstDeclarator(i, end int) int {
	last := -1
	for k := i; k < end && k < i+lookAhead; k++ {
		p.work++
		switch {
		case p.op(k, ";") || p.op(k, ",") || p.op(k, "=") || p.op(k, "[") || p.op(k, "{") || p.op(k, "}"):
			return last
		case p.op(k, "("):
			if n := p.innerName(k, end); n >= 0 {
				return n
			}
			k = p.after(k, end) - 1
		case p.isName(k) && !cKeywords[p.text(k)]:
			last = k
		}
	}
	return last
}

// nextDeclarator returns the index after the first declarator's comma in
// toks[i:j], or 0 when there is none.
func (p *cParser) nextDeclarator(i, j int) int {
	for k := i; k < j; k++ {
		if p.op(k, ",") {
			return k + 1
		}
	}
	return 0
}

// innerName returns the name inside a declarator group (*name) or (^name),
// or -1.
func (p *cParser) innerName(k, end int) int {
	close := p.after(k, end) - 1
	for m := k + 1; m < close; m++ {
		if p.op(m, "*") || p.op(m, "&") || p.op(m, "^") || p.op(m, "::") || p.isName(m) && cKeywords[p.text(m)] {
			continue
		}
		if p.isName(m) && (p.op(m+1, ")") || p.op(m+1, "[") || p.op(m+1, "(")) {
			return m
		}
		if !p.isName(m) {
			return -1
		}
	}
	return -1
}

// declarators adds the names declared by toks[i:j] (the ; at j): each
// comma-separated declarator's name, the last name before =, [, :, or (.
func (p *cParser) declarators(start, i, j, end int, s Symbol) {
	angle := 0
	last := -1
	segStart := i
	flush := func(k int) {
		if last >= 0 {
			s.Name = p.text(last)
			sigEnd := k - 1
			for sigEnd > last && p.toks[sigEnd].line > p.toks[last].line {
				sigEnd--
			}
			from := start
			if segStart > i {
				from = last
			}
			if p.depth < 200 {
				p.add(s, from, last, max(sigEnd, last), min(j, end-1))
			}
		}
		last = -1
	}
	stop := false // after = or [ or : the declarator's name is known
	for k := i; k < j; k++ {
		p.work++
		switch {
		case p.op(k, "<") && p.isName(k-1):
			angle++
		case p.op(k, ">") && angle > 0:
			angle--
		case p.op(k, ",") && angle == 0:
			flush(k)
			segStart = k + 1
			stop = false
		case p.op(k, "(") || p.op(k, "{"):
			if !stop && p.op(k, "(") {
				if n := p.innerName(k, j); n >= 0 {
					last = n
					stop = true
				}
			}
			k = p.after(k, j) - 1
		case p.op(k, "[") || p.op(k, "=") || p.op(k, ":") && angle == 0:
			if p.op(k, "[") {
				k = p.after(k, j) - 1
			}
			stop = true
		case !stop && p.isName(k) && !cKeywords[p.text(k)]:
			last = k
		}
	}
	flush(j)
}

// collectRefs adds calls (f(, x.f(, p->f(, A::f(), member names, the names
// after struct, union, enum and class, and capitalised names.
func (p *cParser) collectRefs(toks []tok, main bool) {
	is := func(i int, s string) bool {
		return i >= 0 && i < len(toks) && toks[i].kind == tOp && toks[i].is(p.src, s)
	}
	for i, t := range toks {
		if t.kind != tName || main && p.noRef[i] {
			continue
		}
		name := t.text(p.src)
		if cKeywords[name] {
			continue
		}
		q := ""
		member := is(i-1, ".") || is(i-1, "->") || is(i-1, "::")
		if member && i > 1 && toks[i-2].kind == tName {
			q = toks[i-2].text(p.src)
		}
		prevKw := i > 0 && toks[i-1].kind == tName
		if prevKw {
			switch toks[i-1].text(p.src) {
			case "struct", "union", "enum", "class":
			default:
				prevKw = false
			}
		}
		switch {
		case is(i+1, "("):
			p.f.Refs = append(p.f.Refs, Ref{Name: name, Qual: q, Line: t.line, Call: true})
		case member || prevKw:
			p.f.Refs = append(p.f.Refs, Ref{Name: name, Qual: q, Line: t.line})
		case name[0] >= 'A' && name[0] <= 'Z' && !is(i+1, "::"):
			p.f.Refs = append(p.f.Refs, Ref{Name: name, Line: t.line})
		}
	}
}
