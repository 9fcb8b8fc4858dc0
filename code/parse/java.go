package parse

import "strings"

var javaModifiers = map[string]bool{
	"public": true, "private": true, "protected": true, "static": true, "final": true,
	"abstract": true, "synchronized": true, "native": true, "default": true, "transient": true,
	"volatile": true, "strictfp": true, "sealed": true, "non": true, "-": true,
}

var javaNotCalls = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "catch": true, "return": true,
	"synchronized": true, "new": true, "super": true, "this": true, "throw": true, "try": true,
	"assert": true,
}

func newJavaParser(src []byte) *javaParser {
	toks, cs := cLikeLex(src, true)
	return &javaParser{scanned: newScanned(src, toks, cs), f: &File{}, bodyOf: map[int]int{}, noRef: map[int]bool{}}
}

type javaParser struct {
	work int // tokens looked at by the look-ahead helpers (TestScannersLinear)
	scanned
	f      *File
	stack  []jsScope // kinds: 'c' type body, 'e' enum body, 'f' method body, 'b' other
	bodyOf map[int]int
	noRef  map[int]bool // definition names and package and import statements
}

func parseJava(src []byte, refs bool) *File {
	p := newJavaParser(src)
	p.run()
	if refs {
		p.collectRefs()
	}
	return p.f
}

// close returns the index after the bracket matching the one at i; '<' matches '>'.
func (p *javaParser) close(i int) int {
	open, shut := byte('('), byte(')')
	if i < len(p.toks) {
		switch p.src[p.toks[i].s] {
		case '<':
			open, shut = '<', '>'
		case '[':
			open, shut = '[', ']'
		case '{':
			open, shut = '{', '}'
		}
	}
	depth := 0
	for ; i < len(p.toks); i++ {
		p.work++
		t := p.toks[i]
		if t.kind != tOp {
			continue
		}
		switch c := p.src[t.s]; {
		case c == open:
			depth++
		case c == shut:
			depth--
			if depth == 0 {
				return i + 1
			}
		case c == ';' || open == '<' && (c == '{' || c == '}' || c == ')'):
			return i + 1
		}
	}
	return len(p.toks)
}

// headerEnd returns the index of the '{' or ';' ending a declaration header at i.
func (p *javaParser) headerEnd(i int) int {
	for i < len(p.toks) {
		p.work++
		switch {
		case p.op(i, "{") || p.op(i, ";") || p.op(i, "}"):
			return i
		case p.op(i, "(") || p.op(i, "<") || p.op(i, "["):
			i = p.close(i)
		default:
			i++
		}
	}
	return len(p.toks) - 1
}

func (p *javaParser) add(s Symbol, start, nameTok, sigEnd, end int) {
	if s.Name == "" || start >= len(p.toks) {
		return
	}
	s.Line = p.toks[start].line
	sigEnd = min(max(sigEnd, start), len(p.toks)-1)
	if p.op(sigEnd+1, "{") && end < 0 {
		p.bodyOf[sigEnd+1] = len(p.f.Symbols)
		s.EndLine = s.Line
	} else {
		s.EndLine = max(end, s.Line)
	}
	sigStart := start
	for p.op(sigStart, "@") && p.isName(sigStart+1) && !p.name(sigStart+1, "interface") && sigStart < sigEnd {
		sigStart += 2
		for p.op(sigStart, ".") && p.isName(sigStart+1) {
			sigStart += 2
		}
		if p.op(sigStart, "(") {
			sigStart = p.close(sigStart)
		}
	}
	if sigStart > sigEnd {
		sigStart = start
	}
	s.Signature = oneLine(p.src[p.toks[sigStart].s:p.toks[sigEnd].e])
	s.Doc = p.doc(s.Line, javaDocText)
	p.noRef[nameTok] = true
	p.f.Symbols = append(p.f.Symbols, s)
}

func javaDocText(s string) (string, bool) {
	if strings.HasPrefix(s, "/**") {
		return jsDocText(s)
	}
	return "", false
}

func (p *javaParser) run() {
	for i := 0; i < len(p.toks); i++ {
		t := p.toks[i]
		top := last(p.stack)
		if c := p.punct(i); c != 0 {
			switch c {
			case '{':
				sc := jsScope{kind: 'b', sym: -1}
				if sym, ok := p.bodyOf[i]; ok {
					s := p.f.Symbols[sym]
					sc.sym, sc.name, sc.exported = sym, s.Name, s.Exported || s.Kind == KindInterface
					switch s.Kind {
					case KindClass, KindInterface:
						sc.kind = 'c'
					case KindEnum:
						sc.kind = 'e'
					default:
						sc.kind = 'f'
					}
				}
				p.stack = append(p.stack, sc)
			case '}':
				if top != nil {
					p.f.end(top.sym, t.line)
					p.stack = p.stack[:len(p.stack)-1]
				}
			case ';':
				if top != nil && top.kind == 'e' {
					top.kind = 'c' // enum constants end at the first ';'
				}
			}
			continue
		}
		if t.kind != tName {
			continue
		}
		if top == nil {
			switch {
			case p.name(i, "package") || p.name(i, "import"):
				j := i + 1
				if p.name(j, "static") {
					j++
				}
				k := j
				for k < len(p.toks) && !p.op(k, ";") {
					p.noRef[k] = true
					k++
				}
				if k > j && k < len(p.toks) {
					name := strings.ReplaceAll(string(p.src[p.toks[j].s:p.toks[k-1].e]), " ", "")
					if p.name(i, "package") {
						p.f.Package = name
					} else {
						p.f.Imports = append(p.f.Imports, name)
					}
				}
				i = k
				continue
			}
		}
		if top != nil && top.kind != 'c' && top.kind != 'e' {
			// Local and anonymous classes inside bodies.
			if (p.name(i, "class") || p.name(i, "record") || p.name(i, "interface") || p.name(i, "enum")) && p.isName(i+1) && !p.op(i-1, ".") {
				p.typeDecl(i, i, top)
			}
			continue
		}
		at := i
		if p.op(i-1, "@") {
			at = i - 1 // an annotation opens the declaration
		}
		if !p.memberStart(at) {
			continue
		}
		if j := p.member(at, top); j > i {
			i = j - 1
		}
	}
}

// memberStart reports whether token i begins a declaration in a type body or at the
// top level: after '{', ';', '}' or an annotation.
func (p *javaParser) memberStart(i int) bool {
	if p.startsItem(i) {
		return true
	}
	prev := p.toks[i-1]
	if p.punct(i-1) == ')' {
		return prev.eline < p.toks[i].line // after an annotation's arguments
	}
	return prev.kind == tName && p.op(i-2, "@") || prev.kind == tName && p.op(i-3, "@") && p.op(i-2, ".")
}

// member reads a declaration at i in a type body (or at the top level) and returns
// the index to go on from.
func (p *javaParser) member(i int, top *jsScope) int {
	start := i
	parent, exported := "", false
	if top != nil {
		parent = top.name
		exported = top.exported && parent != "" && p.symKind(top.sym) == KindInterface
	}
	if top != nil && top.kind == 'e' && (p.op(i-1, "{") || p.op(i-1, ",") || p.op(i-1, ")") || p.isName(i-1)) {
		if p.op(i+1, ",") || p.op(i+1, ";") || p.op(i+1, "(") || p.op(i+1, "{") || p.op(i+1, "}") {
			end := i
			if p.op(i+1, "(") {
				end = p.close(i+1) - 1
			}
			p.add(Symbol{Kind: KindField, Name: p.toks[i].text(p.src), Parent: parent, Exported: top.exported}, i, i, end, p.toks[end].eline)
			return end + 1
		}
	}
	j := i
	for j < len(p.toks) {
		switch {
		case p.op(j, "@") && p.isName(j+1) && !p.name(j+1, "interface"):
			j += 2
			for p.op(j, ".") && p.isName(j+1) {
				j += 2
			}
			if p.op(j, "(") {
				j = p.close(j)
			}
			continue
		case p.isName(j) && javaModifiers[p.toks[j].text(p.src)] || p.op(j, "-") && p.name(j-1, "non"):
			if p.name(j, "public") {
				exported = true
			}
			j++
			continue
		}
		break
	}
	if p.op(j, "@") && p.name(j+1, "interface") {
		j++
	}
	if p.name(j, "class") || p.name(j, "interface") || p.name(j, "enum") || p.name(j, "record") {
		return p.typeDecl(start, j, top)
	}
	if top == nil {
		return i + 1
	}
	if p.op(j, "<") {
		j = p.close(j)
	}
	// A type, then the name; or the name alone for a constructor.
	nameTok := -1
	if p.isName(j) && p.op(j+1, "(") {
		nameTok = j
	} else if p.isName(j) {
		k := j + 1
		for {
			switch {
			case p.op(k, ".") && p.isName(k+1):
				k += 2
				continue
			case p.op(k, "<"):
				k = p.close(k)
				continue
			case p.op(k, "[") && p.op(k+1, "]"):
				k += 2
				continue
			case p.op(k, "..."):
				k++
				continue
			}
			break
		}
		if p.isName(k) {
			nameTok = k
		}
	}
	if nameTok < 0 || p.name(nameTok, "new") {
		return i + 1
	}
	s := Symbol{Name: p.toks[nameTok].text(p.src), Parent: parent, Exported: exported}
	if p.op(nameTok+1, "(") {
		s.Kind = KindMethod
		end := p.headerEnd(nameTok + 1)
		if p.op(end, "{") {
			p.add(s, start, nameTok, end-1, -1)
			return end
		}
		p.add(s, start, nameTok, end-1, p.toks[end].eline)
		return end + 1
	}
	if p.op(nameTok+1, "=") || p.op(nameTok+1, ";") || p.op(nameTok+1, ",") || p.op(nameTok+1, "[") {
		s.Kind = KindField
		end := p.headerEnd(nameTok + 1)
		for p.op(end, "{") { // an array initialiser
			end = p.headerEnd(p.close(end))
		}
		sigEnd := end
		for sigEnd > nameTok && p.toks[sigEnd].line > p.toks[nameTok].line {
			sigEnd--
		}
		if p.op(sigEnd, ";") {
			sigEnd--
		}
		p.add(s, start, nameTok, sigEnd, p.toks[end].eline)
		return end
	}
	return i + 1
}

func (p *javaParser) symKind(sym int) Kind {
	if sym < 0 || sym >= len(p.f.Symbols) {
		return ""
	}
	return p.f.Symbols[sym].Kind
}

// typeDecl reads a class, interface, enum or record whose keyword is at kw.
func (p *javaParser) typeDecl(start, kw int, top *jsScope) int {
	if !p.isName(kw + 1) {
		return kw + 1
	}
	s := Symbol{Name: p.toks[kw+1].text(p.src), Kind: KindClass}
	for k := start; k < kw; k++ {
		if p.name(k, "public") {
			s.Exported = true
		}
	}
	if top != nil {
		s.Parent = top.name
		if p.symKind(top.sym) == KindInterface {
			s.Exported = top.exported
		}
	}
	switch p.toks[kw].text(p.src) {
	case "interface":
		s.Kind = KindInterface
	case "enum":
		s.Kind = KindEnum
	}
	end := p.headerEnd(kw + 2)
	if !p.op(end, "{") {
		return end
	}
	p.add(s, start, kw+1, end-1, -1)
	return end
}

// collectRefs adds calls (f(, x.f(, new T(), member names and capitalised type names.
func (p *javaParser) collectRefs() {
	for i, t := range p.toks {
		if t.kind != tName || p.noRef[i] {
			continue
		}
		name := t.text(p.src)
		if javaNotCalls[name] || javaModifiers[name] {
			continue
		}
		call := p.op(i+1, "(") || p.name(i-1, "new")
		q := ""
		if p.op(i-1, ".") && p.isName(i-2) {
			q = p.toks[i-2].text(p.src)
		}
		switch {
		case call:
			p.f.Refs = append(p.f.Refs, Ref{Name: name, Qual: q, Line: t.line, Call: true})
		case p.op(i-1, "."):
			p.f.Refs = append(p.f.Refs, Ref{Name: name, Qual: q, Line: t.line})
		case name[0] >= 'A' && name[0] <= 'Z' && !p.op(i+1, "."):
			p.f.Refs = append(p.f.Refs, Ref{Name: name, Line: t.line})
		}
	}
}
