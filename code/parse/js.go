package parse

import (
	"bytes"
	"strings"
)

var jsNotCalls = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "catch": true, "function": true,
	"return": true, "typeof": true, "instanceof": true, "in": true, "of": true, "do": true,
	"else": true, "void": true, "delete": true, "yield": true, "async": true, "import": true,
	"await": true, "new": true, "throw": true, "case": true, "class": true, "const": true,
	"let": true, "var": true, "export": true, "default": true, "extends": true, "super": true,
	"this": true,
}

var jsModifiers = map[string]bool{
	"static": true, "async": true, "get": true, "set": true, "public": true, "private": true,
	"protected": true, "readonly": true, "abstract": true, "override": true, "declare": true,
	"accessor": true,
}

// jsScope is one open brace: its kind, the symbol it is the body of (-1 if none)
// and the name its members take as Parent.
type jsScope struct {
	kind     byte // 'c' class, 'i' interface, 'e' enum, 'n' namespace, 'o' object literal, 'f' function, 'b' block
	sym      int
	name     string
	exported bool
	paren    int // ( and [ open inside this brace
	// The innermost definition enclosing this brace, itself included.
	outer         string
	outerExported bool
}

type jsParser struct {
	scanned
	f      *File
	refs   bool
	stack  []jsScope
	bodyOf map[int]int  // index of a '{' that opens a symbol's body -> the symbol
	isDef  map[int]bool // indexes of tokens that name a definition
	work   int          // tokens looked at by the look-ahead helpers (TestScannersLinear)
	match  []int32      // matchBrackets
}

func parseJS(src []byte, refs bool) *File {
	p := newJSParser(src, refs)
	p.run()
	return p.f
}

func newJSParser(src []byte, refs bool) *jsParser {
	toks, cs := jsLex(src)
	p := &jsParser{scanned: newScanned(src, toks, cs), f: &File{}, refs: refs, bodyOf: map[int]int{}, isDef: map[int]bool{}}
	p.match = matchBrackets(src, toks)
	return p
}

// close returns the index after the bracket matching the one at i.
func (p *jsParser) close(i int) int {
	p.work++
	if i < 0 || i >= len(p.match) || p.match[i] < 0 {
		return len(p.toks)
	}
	return int(p.match[i]) + 1
}

// angle returns the index after the '>' matching the '<' at i, or i+1 when the
// brackets do not close before a statement ends.
func (p *jsParser) angle(i int) int {
	depth := 0
	for j := i; j < len(p.toks) && j < i+lookAhead; j++ {
		p.work++
		t := p.toks[j]
		if t.kind != tOp {
			continue
		}
		switch p.src[t.s] {
		case '<':
			depth++
		case '>':
			if t.e-t.s == 1 {
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		case '(', '[', '{':
			if p.src[t.s] == '{' || t.e-t.s == 1 {
				k := p.close(j)
				j = k - 1
			}
		case ';', '}', ')', ']':
			return i + 1
		}
	}
	return i + 1
}

// skipType returns the index after a TypeScript type that starts at i.
func (p *jsParser) skipType(i int) int { return p.skipTypeArrow(i, false) }

// skipTypeArrow is skipType where, with arrowStop, a "=>" after a whole type ends it:
// the return type of an arrow function.
func (p *jsParser) skipTypeArrow(i int, arrowStop bool) int {
	operand := true
	for from := i; i < len(p.toks) && i < from+lookAhead; {
		p.work++
		t := p.toks[i]
		switch t.kind {
		case tOp:
			switch s := string(p.src[t.s:t.e]); s {
			case "{":
				if !operand {
					return i
				}
				i = p.close(i)
				operand = false
			case "(", "[":
				i = p.close(i)
				operand = false
			case "<":
				i = p.angle(i)
			case "=>":
				if arrowStop && !operand {
					return i
				}
				operand = true
				i++
			case "|", "&", ".", "?.", "?", ":", "-":
				operand = true
				i++
			default:
				return i
			}
		case tName:
			switch string(p.src[t.s:t.e]) {
			case "keyof", "typeof", "infer", "readonly", "unique", "asserts", "new":
			case "is", "extends", "as":
				operand = true
			default:
				if !operand {
					return i
				}
				operand = false
			}
			i++
		default:
			if !operand {
				return i
			}
			operand = false
			i++
		}
	}
	return i
}

// stmtEnd is the last line of the statement or member that goes on at token i.
func (p *jsParser) stmtEnd(i int) int {
	for j := i; j < len(p.toks); j++ {
		p.work++
		t := p.toks[j]
		if j > i && (t.line > p.toks[j-1].eline && p.endsExpr(j-1) && !p.continues(j) || j >= i+lookAhead) {
			return p.toks[j-1].eline
		}
		switch p.punct(j) {
		case '(', '[', '{':
			if p.match[j] < 0 {
				return p.toks[len(p.toks)-1].eline
			}
			j = int(p.match[j]) // the loop goes on after the closer
		case ')', ']', '}':
			return p.toks[max(j-1, i)].eline
		case ';', ',':
			return t.line
		}
	}
	return p.toks[len(p.toks)-1].eline
}

// endsExpr reports whether token i can end an expression (so a newline after it may
// end the statement).
func (p *jsParser) endsExpr(i int) bool {
	t := p.toks[i]
	if t.kind != tOp {
		return true
	}
	c := p.src[t.s]
	return t.e-t.s == 1 && (c == ')' || c == ']' || c == '}')
}

// continues reports whether token i carries on the expression before it.
func (p *jsParser) continues(i int) bool {
	t := p.toks[i]
	if t.kind != tOp {
		return false
	}
	switch p.src[t.s] {
	case '(', '[', '{', '!', '~', '@', '#':
		return false
	}
	return true
}

// jsDocText strips the markers of a JSDoc or line comment; other block comments are
// not documentation.
func jsDocText(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "/**") && s != "/**/":
		s = strings.TrimSuffix(strings.TrimPrefix(s, "/**"), "*/")
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			l = strings.TrimLeft(l, " \t")
			l = strings.TrimPrefix(l, "*")
			lines[i] = strings.TrimRight(strings.TrimPrefix(l, " "), " \t\r")
		}
		return strings.Join(lines, "\n"), true
	case strings.HasPrefix(s, "//"):
		s = strings.TrimPrefix(s, "//")
		if strings.HasPrefix(s, "/") || strings.HasPrefix(s, "!") {
			return "", false
		}
		return strings.TrimPrefix(s, " "), true
	}
	return "", false
}

// parent is the innermost enclosing definition: its name and whether it is exported.
func (p *jsParser) parent() (name string, exported bool) {
	if len(p.stack) == 0 {
		return "", false
	}
	s := p.stack[len(p.stack)-1]
	return s.outer, s.outerExported
}

// push opens a scope, working out the definition it is in.
func (p *jsParser) push(sc jsScope) {
	sc.outer, sc.outerExported = p.parent()
	if sc.sym >= 0 || sc.kind == 'o' && sc.name != "" {
		sc.outer, sc.outerExported = sc.name, sc.exported
	}
	p.stack = append(p.stack, sc)
}

func (p *jsParser) top() *jsScope { return last(p.stack) }

// add records a symbol that starts at token start and is named by token name; body
// is the index of the '{' opening its body, or -1 with end its last line.
func (p *jsParser) add(s Symbol, start, name, sigEnd, body, end int) {
	if s.Name == "" {
		return
	}
	st := p.toks[start]
	s.Line = st.line
	if body >= 0 && body < len(p.toks) {
		p.bodyOf[body] = len(p.f.Symbols)
		s.EndLine = p.toks[body].line
	} else {
		s.EndLine = end
	}
	if s.EndLine < s.Line {
		s.EndLine = s.Line
	}
	sigEnd = min(max(sigEnd, start), len(p.toks)-1)
	sig := p.src[st.s:p.toks[sigEnd].e]
	if body < 0 && (s.Kind == KindConst || s.Kind == KindVar || s.Kind == KindType || s.Kind == KindField) {
		if i := bytes.IndexByte(sig, '\n'); i >= 0 {
			sig = sig[:i]
		}
	}
	s.Signature = oneLine(sig)
	s.Doc = p.doc(s.Line, jsDocText)
	if name >= 0 {
		p.isDef[name] = true
	}
	p.f.Symbols = append(p.f.Symbols, s)
}

// header scans a function header from i (at its type parameters or '('): it returns
// the index of the body's '{' (-1 if none) and the last token of the signature.
func (p *jsParser) header(i int) (body, sigEnd int) {
	if p.op(i, "<") {
		i = p.angle(i)
	}
	if !p.op(i, "(") {
		return -1, i - 1
	}
	i = p.close(i)
	if p.op(i, ":") {
		i = p.skipType(i + 1)
	}
	if p.op(i, "{") {
		return i, i - 1
	}
	return -1, i - 1
}

// arrow reports whether an arrow function or function expression starts at i (after
// '=' or ':'), returning the index of its body's '{' (-1 for an expression body) and
// of the signature's last token.
func (p *jsParser) arrow(i int) (ok bool, body, sigEnd int) {
	if p.name(i, "async") {
		i++
	}
	if p.name(i, "function") {
		i++
		if p.op(i, "*") {
			i++
		}
		if p.isName(i) {
			p.isDef[i] = true
			i++
		}
		b, e := p.header(i)
		return true, b, e
	}
	switch {
	case p.isName(i) && p.op(i+1, "=>"):
		i++
	case p.op(i, "(") || p.op(i, "<"):
		if p.op(i, "<") {
			i = p.angle(i)
		}
		if !p.op(i, "(") {
			return false, -1, 0
		}
		i = p.close(i)
		if p.op(i, ":") {
			i = p.skipTypeArrow(i+1, true)
		}
		if !p.op(i, "=>") {
			return false, -1, 0
		}
	default:
		return false, -1, 0
	}
	if p.op(i+1, "{") {
		return true, i + 1, i
	}
	return true, -1, i
}

func (p *jsParser) run() {
	toks, src := p.toks, p.src
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		top := p.top()
		if c := p.punct(i); c != 0 {
			switch c {
			case '{':
				p.open(i)
				continue
			case '}':
				if top != nil {
					p.f.end(top.sym, t.line)
					p.stack = p.stack[:len(p.stack)-1]
				}
				continue
			case '(', '[':
				if top != nil {
					top.paren++
				}
			case ')', ']':
				if top != nil && top.paren > 0 {
					top.paren--
				}
			case '@':
				// A decorator before a class member: the member follows it.
				if top != nil && top.kind == 'c' && top.paren == 0 && p.isName(i+1) {
					j := i + 2
					for p.op(j, ".") && p.isName(j+1) {
						j += 2
					}
					if p.op(j, "(") {
						j = p.close(j)
					}
					if p.isName(j) && !p.name(j-1, "@") {
						if k := p.member(j, top); k > j {
							i = k - 1
							continue
						}
					}
					i = j - 1
				}
				continue
			}
		}
		if t.kind == tString && i > 0 {
			switch {
			case p.name(i-1, "from") || p.name(i-1, "import") && !p.op(i-2, "."):
				p.f.Imports = append(p.f.Imports, jsStringValue(t.text(src)))
			case p.op(i-1, "(") && (p.name(i-2, "require") || p.name(i-2, "import")) && p.op(i+1, ")"):
				p.f.Imports = append(p.f.Imports, jsStringValue(t.text(src)))
			}
		}
		if t.kind != tName {
			continue
		}
		if top != nil && top.paren == 0 && (top.kind == 'c' || top.kind == 'i' || top.kind == 'e' || top.kind == 'o' && top.name != "") && p.memberStart(i) {
			if j := p.member(i, top); j > i {
				i = j - 1
			}
			continue
		}
		if p.op(i-1, ".") || p.op(i-1, "?.") {
			continue
		}
		if p.op(i+1, ".") && p.isName(i+2) {
			p.assigned(i)
			continue
		}
		p.decl(i)
	}
	if p.refs {
		p.collectRefs()
	}
}

// memberStart reports whether token i begins a member of a class, interface, enum
// or object literal: it follows '{', ';', '}' or ',' or begins a line.
func (p *jsParser) memberStart(i int) bool {
	if p.startsItem(i) {
		return true
	}
	prev := p.toks[i-1]
	if prev.kind == tName && jsModifiers[prev.text(p.src)] {
		return false
	}
	return prev.eline < p.toks[i].line && (prev.kind != tOp || p.endsExpr(i-1))
}

// open pushes the scope of the '{' at i.
func (p *jsParser) open(i int) {
	if sym, ok := p.bodyOf[i]; ok {
		s := p.f.Symbols[sym]
		kind := byte('f')
		switch s.Kind {
		case KindClass:
			kind = 'c'
		case KindInterface:
			kind = 'i'
		case KindEnum:
			kind = 'e'
		case KindModule:
			kind = 'n'
		}
		p.push(jsScope{kind: kind, sym: sym, name: s.Name, exported: s.Exported})
		return
	}
	sc := jsScope{kind: 'b', sym: -1}
	if i > 0 && p.toks[i-1].kind == tOp {
		switch string(p.src[p.toks[i-1].s:p.toks[i-1].e]) {
		case "=", "(", ",", ":", "[", "?", "|", "&":
			sc.kind = 'o'
			if p.op(i-1, "=") && p.name(i-3, "type") {
				sc.kind = 'b' // a type literal
			} else if (p.op(i-1, "=") || p.op(i-1, ":")) && p.isName(i-2) {
				sc.name = p.toks[i-2].text(p.src)
				_, sc.exported = p.parent()
				if len(p.stack) == 0 {
					sc.exported = p.name(i-3, "export") || p.name(i-4, "export")
				}
			}
		}
	}
	if p.name(i-1, "return") {
		sc.kind = 'o'
	}
	if p.name(i-1, "default") && p.name(i-2, "export") {
		sc.kind, sc.name, sc.exported = 'o', "default", true
	}
	p.push(sc)
}

// member reads a member of a class, interface, enum or object literal starting at i
// and returns the index to go on from.
func (p *jsParser) member(i int, sc *jsScope) int {
	start := i
	private := false
	j := i
	for p.isName(j) && jsModifiers[p.toks[j].text(p.src)] && (p.isName(j+1) || p.op(j+1, "*") || p.op(j+1, "[") || j+1 < len(p.toks) && p.toks[j+1].kind == tString) {
		if p.name(j, "private") || p.name(j, "protected") {
			private = true
		}
		j++
	}
	if p.op(j, "*") {
		j++
	}
	if !p.isName(j) {
		return i + 1
	}
	nameTok := j
	name := p.toks[j].text(p.src)
	if strings.HasPrefix(name, "#") {
		private = true
	}
	j++
	if p.op(j, "?") || p.op(j, "!") {
		j++
	}
	s := Symbol{Name: name, Parent: sc.name, Exported: sc.exported && !private}
	switch {
	case sc.kind == 'e':
		s.Kind = KindField
		p.add(s, start, nameTok, nameTok, -1, p.toks[nameTok].line)
		return j
	case p.op(j, "(") || p.op(j, "<"):
		s.Kind = KindMethod
		body, sigEnd := p.header(j)
		end := p.toks[min(sigEnd, len(p.toks)-1)].eline
		p.add(s, start, nameTok, sigEnd, body, end)
		if body >= 0 {
			return body
		}
		return sigEnd + 1
	case p.op(j, ":") && sc.kind == 'o', p.op(j, "=") && sc.kind == 'c':
		if ok, body, sigEnd := p.arrow(j + 1); ok {
			s.Kind = KindMethod
			end := p.stmtEnd(j + 1)
			p.add(s, start, nameTok, sigEnd, body, end)
			if body >= 0 {
				return body
			}
			return sigEnd + 1
		}
		if sc.kind == 'o' {
			return j + 1
		}
		s.Kind = KindField
		p.add(s, start, nameTok, p.lastOnLine(j), -1, p.stmtEnd(j))
		return j + 1
	case sc.kind != 'o' && (p.op(j, ":") || p.op(j, ";") || p.op(j, "}") || p.op(j, "=")):
		s.Kind = KindField
		p.add(s, start, nameTok, p.lastOnLine(j), -1, p.stmtEnd(j))
		return j
	}
	return i + 1
}

// lastOnLine is the last token on the line of token i, or the 64th after it: a
// signature is cut short anyway, and a minified file is one long line.
func (p *jsParser) lastOnLine(i int) int {
	for n := 0; n < 64 && i+1 < len(p.toks) && p.toks[i+1].line == p.toks[i].eline; n++ {
		p.work++
		i++
	}
	return i
}

// decl reads a declaration that may start at the keyword at i.
func (p *jsParser) decl(i int) {
	src := p.src
	kw := p.toks[i].text(src)
	start := i
	exported := false
	for k := i - 1; k >= 0 && p.isName(k); k-- {
		w := p.toks[k].text(src)
		if w == "export" {
			exported, start = true, k
			break
		}
		if w != "default" && w != "declare" && w != "async" && w != "abstract" && w != "const" {
			break
		}
		start = k
	}
	parent, _ := p.parent()
	s := Symbol{Parent: parent, Exported: exported}
	named := func(j int) (int, bool) {
		if p.isName(j) && !p.name(j, "extends") && !p.name(j, "implements") {
			s.Name = p.toks[j].text(src)
			return j, true
		}
		if p.name(i-1, "default") {
			s.Name = "default"
			return -1, true
		}
		return -1, false
	}
	switch kw {
	case "function":
		k := i - 1
		if p.name(k, "async") {
			k--
		}
		if k >= 0 && p.toks[k].kind == tOp && !p.op(k, ";") && !p.op(k, "}") && !p.op(k, "{") && !p.op(k, ")") {
			return // a function expression, read where it is bound
		}
		j := i + 1
		if p.op(j, "*") {
			j++
		}
		nameTok, ok := named(j)
		if !ok {
			return
		}
		if nameTok >= 0 {
			j = nameTok + 1
		}
		s.Kind = KindFunc
		body, sigEnd := p.header(j)
		p.add(s, start, nameTok, sigEnd, body, p.toks[min(sigEnd, len(p.toks)-1)].eline)
	case "class", "interface", "enum", "namespace", "module":
		if kw == "module" && i+1 < len(p.toks) && p.toks[i+1].kind == tString {
			s.Name = jsStringValue(p.toks[i+1].text(src))
			s.Kind = KindModule
			if p.op(i+2, "{") {
				p.add(s, start, -1, i+1, i+2, 0)
			}
			return
		}
		nameTok, ok := named(i + 1)
		if !ok || kw != "class" && nameTok < 0 {
			return
		}
		s.Kind = map[string]Kind{"class": KindClass, "interface": KindInterface, "enum": KindEnum, "namespace": KindModule, "module": KindModule}[kw]
		j := i + 1
		if nameTok >= 0 {
			j = nameTok + 1
		}
		for j < len(p.toks) && !p.op(j, "{") && !p.op(j, ";") && !p.op(j, "}") {
			switch {
			case p.op(j, "<"):
				j = p.angle(j)
			case p.op(j, "("):
				j = p.close(j)
			default:
				j++
			}
		}
		if !p.op(j, "{") {
			return
		}
		p.add(s, start, nameTok, j-1, j, 0)
	case "type":
		if !p.isName(i+1) || !(p.op(i+2, "=") || p.op(i+2, "<")) || (top(p) != nil && top(p).kind != 'n') {
			return
		}
		s.Kind, s.Name = KindType, p.toks[i+1].text(src)
		p.add(s, start, i+1, p.lastOnLine(i), -1, p.stmtEnd(i+2))
	case "const", "let", "var":
		if !p.isName(i + 1) {
			return
		}
		s.Name = p.toks[i+1].text(src)
		j := i + 2
		if p.op(j, ":") {
			j = p.skipType(j + 1)
		}
		if !p.op(j, "=") {
			return
		}
		if ok, body, sigEnd := p.arrow(j + 1); ok {
			s.Kind = KindFunc
			p.add(s, start, i+1, sigEnd, body, p.stmtEnd(j+1))
			return
		}
		if sc := top(p); sc != nil && sc.kind != 'n' {
			return
		}
		s.Kind = KindVar
		if kw == "const" {
			s.Kind = KindConst
		}
		p.add(s, start, i+1, p.lastOnLine(i), -1, p.stmtEnd(j+1))
	}
}

func top(p *jsParser) *jsScope { return p.top() }

// assigned reads a function assigned to a member at i: A.prototype.m = function…
// (a method of A), exports.f = … or module.exports.f = … (an exported function).
func (p *jsParser) assigned(i int) {
	src := p.src
	j, parent, exported := i, "", false
	switch {
	case p.op(i+1, ".") && p.name(i+2, "prototype") && p.op(i+3, ".") && p.isName(i+4):
		parent, j = p.toks[i].text(src), i+4
	case p.name(i, "exports") && p.isName(i+2):
		exported, j = true, i+2
	case p.name(i, "module") && p.name(i+2, "exports") && p.op(i+3, ".") && p.isName(i+4):
		exported, j = true, i+4
	default:
		return
	}
	if !p.op(j+1, "=") || i > 0 && !p.memberStart(i) && !p.op(i-1, "=") {
		return
	}
	ok, body, sigEnd := p.arrow(j + 2)
	if !ok {
		return
	}
	s := Symbol{Kind: KindFunc, Name: p.toks[j].text(src), Parent: parent, Exported: exported}
	if parent != "" {
		s.Kind = KindMethod
	}
	p.add(s, i, j, sigEnd, body, p.stmtEnd(j+2))
}

func jsStringValue(s string) string {
	if len(s) >= 2 {
		return s[1 : len(s)-1]
	}
	return s
}

// collectRefs adds calls, member uses and capitalised type uses.
func (p *jsParser) collectRefs() {
	src, toks := p.src, p.toks
	for i, t := range toks {
		if t.kind != tName || p.isDef[i] {
			continue
		}
		name := t.text(src)
		call := p.op(i+1, "(") || p.op(i-1, "new") || p.name(i-1, "new")
		dot := p.op(i-1, ".") || p.op(i-1, "?.")
		switch {
		case dot:
			q := ""
			if p.isName(i - 2) {
				q = toks[i-2].text(src)
			}
			p.f.Refs = append(p.f.Refs, Ref{Name: name, Qual: q, Line: t.line, Call: call})
		case call && !jsNotCalls[name]:
			p.f.Refs = append(p.f.Refs, Ref{Name: name, Line: t.line, Call: true})
		case name[0] >= 'A' && name[0] <= 'Z' && i > 0 && (p.op(i-1, ":") || p.op(i-1, "<") || p.op(i-1, "|") || p.op(i-1, "&") ||
			p.name(i-1, "extends") || p.name(i-1, "implements") || p.name(i-1, "as")):
			p.f.Refs = append(p.f.Refs, Ref{Name: name, Line: t.line})
		}
	}
}
