package parse

import (
	"path"
	"strings"
	"unicode/utf8"
)

const tLifetime = 'l'

// rsRawStringEnd returns the index after a raw string whose 'r' is at src[i]
// (r"…", r#"…"#, any number of '#'), or -1 when there is none.
func rsRawStringEnd(src []byte, i int) int {
	j := i + 1
	hashes := 0
	for j < len(src) && src[j] == '#' {
		hashes++
		j++
	}
	if j >= len(src) || src[j] != '"' {
		return -1
	}
	for j++; j < len(src); j++ {
		if src[j] != '"' {
			continue
		}
		k := j + 1
		n := 0
		for k < len(src) && n < hashes && src[k] == '#' {
			k++
			n++
		}
		if n == hashes {
			return k
		}
	}
	return len(src)
}

// rsStringEnd returns the index after the "…" string opening at src[i]; Rust strings
// may span lines.
func rsStringEnd(src []byte, i int) int { return quotedEnd(src, i, true, true) }

// rsBlockCommentEnd returns the index after the block comment at src[i]; Rust block
// comments nest.
func rsBlockCommentEnd(src []byte, i int) int {
	depth := 0
	for i < len(src) {
		if i+1 < len(src) && src[i] == '/' && src[i+1] == '*' {
			depth++
			i += 2
			continue
		}
		if i+1 < len(src) && src[i] == '*' && src[i+1] == '/' {
			depth--
			i += 2
			if depth == 0 {
				return i
			}
			continue
		}
		i++
	}
	return len(src)
}

// rsQuoteEnd tells a character literal from a lifetime at the quote src[i]: it
// returns the index after the literal and whether it is a character.
func rsQuoteEnd(src []byte, i int) (int, bool) {
	if i+1 < len(src) && src[i+1] == '\\' {
		for j := i + 2; j < len(src) && j < i+16; j++ {
			if src[j] == '\'' {
				return j + 1, true
			}
			if src[j] == '\n' {
				return j, true
			}
		}
		return min(i+2, len(src)), true
	}
	if i+1 < len(src) {
		_, n := utf8.DecodeRune(src[i+1:])
		if i+1+n < len(src) && src[i+1+n] == '\'' {
			return i + 2 + n, true
		}
	}
	j := i + 1
	for j < len(src) && isIdentByte(src[j]) {
		j++
	}
	return j, false
}

// rsLex splits Rust source into tokens and comments. "::", "->" and "=>" are single
// tokens; lifetimes are tLifetime tokens.
func rsLex(src []byte) (toks []tok, cs []comment) {
	l := newLexer(src)
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case l.space(i):
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			i = l.addComment(i, skipComment(src, i))
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i = l.addComment(i, rsBlockCommentEnd(src, i))
		case c == '"':
			i = l.emit(tString, i, rsStringEnd(src, i))
		case c == '\'':
			j, char := rsQuoteEnd(src, i)
			if char {
				i = l.emit(tString, i, j)
			} else {
				i = l.emit(tLifetime, i, j)
			}
		case isIdentStart(c):
			// String prefixes: b"…", c"…", r"…", r#"…"#, br"…", cr#"…"#, b'…'.
			if c == 'b' || c == 'c' || c == 'r' {
				k := i
				if (c == 'b' || c == 'c') && k+1 < len(src) && src[k+1] == 'r' {
					k++
				}
				if src[k] == 'r' {
					if j := rsRawStringEnd(src, k); j >= 0 {
						i = l.emit(tString, i, j)
						continue
					}
				} else if k+1 < len(src) && src[k+1] == '"' {
					i = l.emit(tString, i, rsStringEnd(src, k+1))
					continue
				} else if c == 'b' && k+1 < len(src) && src[k+1] == '\'' {
					j, _ := rsQuoteEnd(src, k+1)
					i = l.emit(tString, i, j)
					continue
				}
			}
			if c == 'r' && i+2 < len(src) && src[i+1] == '#' && isIdentStart(src[i+2]) {
				i += 2 // raw identifier r#name
			}
			i = l.emitLine(tName, i, identEnd(src, i+1))
		case isDigit(c):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '.' && j+1 < len(src) && isDigit(src[j+1])) {
				j++
			}
			i = l.emitLine(tNumber, i, j)
		default:
			n := 1
			if i+1 < len(src) {
				switch d := src[i+1]; {
				case c == ':' && d == ':', c == '-' && d == '>', c == '=' && d == '>':
					n = 2
				}
			}
			i = l.emitLine(tOp, i, i+n)
		}
	}
	return l.toks, l.cs
}

// rsModule is the module path of a file: "src/net/tcp.rs" is "net::tcp", "src/a/mod.rs"
// is "a", and src/lib.rs or src/main.rs is the crate root "".
func rsModule(p string) string {
	p = path.Clean(strings.ReplaceAll(p, "\\", "/"))
	if i := strings.LastIndex(p, "src/"); i >= 0 && (i == 0 || p[i-1] == '/') {
		p = p[i+4:]
	} else {
		p = path.Base(p)
	}
	p = strings.TrimSuffix(p, ".rs")
	switch {
	case p == "lib" || p == "main":
		return ""
	case strings.HasSuffix(p, "/mod"):
		p = strings.TrimSuffix(p, "/mod")
	}
	return strings.ReplaceAll(p, "/", "::")
}

func rsDocText(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "///") && !strings.HasPrefix(s, "////"):
		return strings.TrimPrefix(s[3:], " "), true
	case strings.HasPrefix(s, "/**") && s != "/**/":
		return jsDocText(s)
	}
	return "", false
}

// rsInnerDocText strips the markers of an inner doc comment (//! or /*! */), which
// documents the module it is in.
func rsInnerDocText(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "//!"):
		return strings.TrimPrefix(s[3:], " "), true
	case strings.HasPrefix(s, "/*!"):
		return jsDocText("/**" + s[3:])
	}
	return "", false
}

type rsScope struct {
	kind byte // 'c' impl or trait, 's' struct, 'e' enum, 'n' module, 'f' function, 'b' other
	sym  int
	name string
	pub  bool
}

func newRustParser(p string, src []byte) *rsParser {
	toks, cs := rsLex(src)
	return &rsParser{scanned: newScanned(src, toks, cs), f: &File{Package: rsModule(p)}, bodyOf: map[int]int{}, isDef: map[int]bool{}}
}

type rsParser struct {
	work int // tokens looked at by the look-ahead helpers (TestScannersLinear)
	scanned
	f      *File
	stack  []rsScope
	bodyOf map[int]int
	isDef  map[int]bool
}

func parseRust(p string, src []byte, refs bool) *File {
	r := newRustParser(p, src)
	r.run()
	if refs {
		r.collectRefs()
	}
	return r.f
}

// itemEnd scans an item header from i: it returns the index of the '{' opening the
// body, or of the ';' ending the item, at bracket depth 0 ('<' counts as a bracket).
func (r *rsParser) itemEnd(i int, angles bool) int {
	depth := 0
	for ; i < len(r.toks); i++ {
		r.work++
		switch r.punct(i) {
		case '(', '[':
			depth++
		case '<':
			if angles {
				depth++
			}
		case ')', ']':
			depth--
		case '>':
			if angles && depth > 0 {
				depth--
			}
		case '{':
			if depth <= 0 {
				return i
			}
			depth++
		case '}':
			if depth <= 0 {
				return i
			}
			depth--
		case ';':
			if depth <= 0 {
				return i
			}
		}
	}
	return len(r.toks) - 1
}

// attrStart is the first line of the attributes and modifiers before token i.
func (r *rsParser) attrStart(i int) int {
	line := r.toks[i].line
	for j := i - 1; j >= 0 && r.op(j, "]"); {
		depth := 0
		k := j
		for ; k >= 0; k-- {
			if r.op(k, "]") {
				depth++
			} else if r.op(k, "[") {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if k < 1 || !r.op(k-1, "#") && !(r.op(k-1, "!") && r.op(k-2, "#")) {
			break
		}
		if r.op(k-1, "!") {
			k--
		}
		line = r.toks[k-1].line
		j = k - 2
	}
	return line
}

func (r *rsParser) add(s Symbol, start, nameTok, sigEnd, end int) int {
	if s.Name == "" || start >= len(r.toks) {
		return -1
	}
	st := r.toks[start]
	s.Line = st.line
	sigEnd = min(max(sigEnd, start), len(r.toks)-1)
	body := -1
	if r.op(sigEnd+1, "{") && end < 0 {
		body = sigEnd + 1
		s.EndLine = s.Line
	} else {
		s.EndLine = max(end, s.Line)
	}
	sig := r.src[st.s:r.toks[sigEnd].e]
	s.Signature = oneLine(sig)
	s.Doc = r.doc(r.attrStart(start), rsDocText)
	if nameTok >= 0 {
		r.isDef[nameTok] = true
	}
	r.f.Symbols = append(r.f.Symbols, s)
	if body >= 0 {
		r.bodyOf[body] = len(r.f.Symbols) - 1
	}
	return len(r.f.Symbols) - 1
}

var rsItemModifiers = map[string]bool{
	"pub": true, "const": true, "async": true, "unsafe": true, "extern": true, "default": true,
	"crate": true, "self": true, "super": true, "in": true,
}

func (r *rsParser) run() {
	for i := 0; i < len(r.toks); i++ {
		t := r.toks[i]
		top := last(r.stack)
		if c := r.punct(i); c != 0 {
			switch c {
			case '{':
				r.open(i)
			case '}':
				if top != nil {
					r.f.end(top.sym, t.line)
					r.stack = r.stack[:len(r.stack)-1]
				}
			}
			continue
		}
		if t.kind != tName {
			continue
		}
		if top != nil && (top.kind == 's' || top.kind == 'e') {
			r.member(i, top)
			continue
		}
		if r.name(i, "use") && r.itemPos(i) {
			j := i + 1
			for j < len(r.toks) && !r.op(j, ";") && !r.op(j, "}") {
				if r.op(j, "{") {
					j = r.close(j)
					continue
				}
				j++
			}
			if j > i+1 && j <= len(r.toks) {
				r.f.Imports = append(r.f.Imports, oneLine(string(r.src[r.toks[i+1].s:r.toks[j-1].e])))
			}
			continue
		}
		r.item(i, top)
	}
}

// itemPos reports whether token i, after its modifiers, starts an item: it follows
// a brace, a ';', an attribute or nothing.
func (r *rsParser) itemPos(i int) bool {
	j := i - 1
	for j >= 0 {
		switch {
		case r.isName(j) && rsItemModifiers[r.toks[j].text(r.src)] || r.toks[j].kind == tString && r.name(j-1, "extern"):
			j--
		case r.op(j, ")"): // pub(crate), pub(super), pub(in path)
			k := j - 1
			for k >= 0 && k > j-12 && !r.op(k, "(") {
				k--
			}
			if !r.op(k, "(") || !r.name(k-1, "pub") {
				return false
			}
			j = k - 1
		default:
			return j < 0 || r.op(j, "{") || r.op(j, "}") || r.op(j, ";") || r.op(j, "]")
		}
	}
	return true
}

// open pushes the scope of the '{' at i.
func (r *rsParser) open(i int) {
	sc := rsScope{kind: 'b', sym: -1}
	if sym, ok := r.bodyOf[i]; ok {
		s := r.f.Symbols[sym]
		sc.sym, sc.name, sc.pub = sym, s.Name, s.Exported
		switch s.Kind {
		case KindImpl, KindTrait:
			sc.kind = 'c'
		case KindStruct:
			sc.kind = 's'
		case KindEnum:
			sc.kind = 'e'
		case KindModule:
			sc.kind = 'n'
			if s.Doc == "" && i+1 < len(r.toks) {
				r.f.Symbols[sym].Doc = r.doc(r.toks[i+1].line, rsInnerDocText)
			}
		case KindFunc, KindMethod:
			sc.kind = 'f'
		}
	}
	r.stack = append(r.stack, sc)
}

// member reads a struct field or an enum variant at i.
func (r *rsParser) member(i int, sc *rsScope) {
	if !(r.op(i-1, "{") || r.op(i-1, ",") || r.op(i-1, "]") || r.op(i-1, ")") && r.name(i-2, "crate") || r.name(i-1, "pub")) {
		return
	}
	if r.name(i, "pub") {
		return
	}
	start := i
	pub := false
	for j := i - 1; j >= 0 && (r.name(j, "pub") || r.op(j, ")") || r.op(j, "(") || r.name(j, "crate") || r.name(j, "super") || r.name(j, "in")); j-- {
		if r.name(j, "pub") {
			start, pub = j, !r.op(j+1, "(")
			break
		}
	}
	s := Symbol{Kind: KindField, Name: r.toks[i].text(r.src), Parent: sc.name}
	switch {
	case sc.kind == 's' && r.op(i+1, ":"):
		s.Exported = pub && sc.pub
	case sc.kind == 'e' && (r.op(i+1, ",") || r.op(i+1, "}") || r.op(i+1, "(") || r.op(i+1, "{") || r.op(i+1, "=")):
		s.Exported = sc.pub
	default:
		return
	}
	end := r.memberEnd(i + 1)
	sigEnd := end
	for sigEnd > i && r.toks[sigEnd].line > r.toks[i].line {
		sigEnd--
	}
	if r.op(sigEnd, ",") || r.op(sigEnd, "}") {
		sigEnd--
	}
	r.add(s, start, i, sigEnd, r.toks[max(end-1, i)].eline)
}

// memberEnd is the index of the ',' or '}' ending the member that goes on at i.
func (r *rsParser) memberEnd(i int) int {
	depth := 0
	for ; i < len(r.toks); i++ {
		r.work++
		switch r.punct(i) {
		case '(', '[', '{', '<':
			depth++
		case ')', ']', '>':
			depth--
		case '}':
			if depth <= 0 {
				return i
			}
			depth--
		case ',':
			if depth <= 0 {
				return i
			}
		}
	}
	return len(r.toks) - 1
}

// item reads an item that may start at the keyword at i.
func (r *rsParser) item(i int, top *rsScope) {
	src := r.src
	kw := r.toks[i].text(src)
	switch kw {
	case "fn", "struct", "enum", "trait", "impl", "mod", "const", "static", "type", "union", "macro_rules":
	default:
		return
	}
	if kw == "union" && !r.isName(i+1) || kw == "macro_rules" && !r.op(i+1, "!") || !r.itemPos(i) {
		return
	}
	if kw == "const" && (r.name(i+1, "fn") || r.name(i+1, "unsafe") || r.name(i+1, "async") || r.name(i+1, "extern") || r.op(i+1, "{")) {
		return
	}
	start, pub := i, false
	for j := i - 1; j >= 0; j-- {
		switch {
		case r.isName(j) && rsItemModifiers[r.toks[j].text(src)] || r.toks[j].kind == tString && r.name(j-1, "extern"):
			start = j
			pub = pub || r.name(j, "pub") && !r.op(j+1, "(")
			continue
		case r.op(j, ")"): // a restricted pub(…) is not exported
			k := j - 1
			for k >= 0 && k > j-12 && !r.op(k, "(") {
				k--
			}
			if r.op(k, "(") && r.name(k-1, "pub") {
				start, j = k-1, k-1
				continue
			}
		}
		break
	}
	s := Symbol{Exported: pub}
	inImpl := top != nil && top.kind == 'c'
	if top != nil && top.sym >= 0 {
		s.Parent = top.name
		if p := r.f.Symbols[top.sym]; inImpl && (p.Kind == KindTrait || strings.Contains(p.Signature, " for ")) {
			s.Exported = true // trait items are as visible as the trait
		}
	}
	nameTok := i + 1
	switch kw {
	case "fn":
		s.Kind = KindFunc
		if inImpl {
			s.Kind = KindMethod
		}
	case "struct", "union":
		s.Kind = KindStruct
	case "enum":
		s.Kind = KindEnum
	case "trait":
		s.Kind = KindTrait
	case "mod":
		s.Kind = KindModule
	case "const":
		s.Kind = KindConst
	case "static":
		s.Kind = KindVar
		if r.name(nameTok, "mut") {
			nameTok++
		}
	case "type":
		s.Kind = KindType
	case "macro_rules":
		s.Kind = KindMacro
		nameTok = i + 2
	case "impl":
		s.Kind = KindImpl
		s.Name, nameTok = r.implType(i + 1)
	}
	if kw != "impl" {
		if !r.isName(nameTok) {
			return
		}
		s.Name = r.toks[nameTok].text(src)
	}
	if s.Name == "" {
		return
	}
	switch kw {
	case "const", "static", "type":
		end := r.itemEnd(nameTok, false)
		sigEnd := end
		for sigEnd > nameTok && r.toks[sigEnd].line > r.toks[nameTok].line {
			sigEnd--
		}
		if r.op(sigEnd, ";") {
			sigEnd--
		}
		r.add(s, start, nameTok, sigEnd, r.toks[end].eline)
	case "macro_rules":
		j := nameTok + 1
		if j < len(r.toks) && (r.op(j, "(") || r.op(j, "[")) {
			k := r.close(j)
			r.add(s, start, nameTok, nameTok, r.toks[max(k-1, j)].eline)
			return
		}
		r.add(s, start, nameTok, nameTok, -1)
	default:
		end := r.itemEnd(nameTok, true)
		if r.op(end, "{") {
			r.add(s, start, nameTok, end-1, -1)
			return
		}
		r.add(s, start, nameTok, end-1, r.toks[end].eline)
	}
}

// close returns the index after the bracket matching the one at i.
func (r *rsParser) close(i int) int {
	depth := 0
	for ; i < len(r.toks); i++ {
		r.work++
		switch r.punct(i) {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth <= 0 {
				return i + 1
			}
		}
	}
	return len(r.toks)
}

// implType is the name of the type an impl is for: "Foo" in impl<T> Trait for
// Foo<T>, with its token.
func (r *rsParser) implType(i int) (string, int) {
	depth := 0
	last, lastTok := "", -1
	for ; i < len(r.toks); i++ {
		r.work++
		t := r.toks[i]
		switch {
		case t.kind == tOp && t.is(r.src, "<"):
			depth++
		case t.kind == tOp && t.is(r.src, ">"):
			depth--
		case t.kind == tOp && (t.is(r.src, "{") || t.is(r.src, ";")):
			return last, lastTok
		case t.kind == tName && depth == 0:
			switch w := t.text(r.src); w {
			case "for":
				last, lastTok = "", -1
			case "where":
				return last, lastTok
			case "dyn", "unsafe", "const", "mut":
			default:
				last, lastTok = w, i
			}
		}
	}
	return last, lastTok
}

// collectRefs adds calls (f(, x.f(, path::f(, f!( ), field uses and capitalised
// type uses.
func (r *rsParser) collectRefs() {
	src, toks := r.src, r.toks
	for i, t := range toks {
		if t.kind != tName || r.isDef[i] {
			continue
		}
		name := t.text(src)
		switch name {
		case "fn", "if", "while", "match", "for", "return", "let", "mut", "as", "in", "loop",
			"impl", "struct", "enum", "trait", "mod", "use", "pub", "where", "unsafe", "move",
			"ref", "else", "break", "continue", "crate", "self", "Self", "super", "dyn", "const",
			"static", "type", "async", "await", "extern":
			continue
		}
		call := r.op(i+1, "(") || r.op(i+1, "::") && r.op(i+2, "<")
		macro := r.op(i+1, "!") && (r.op(i+2, "(") || r.op(i+2, "[") || r.op(i+2, "{"))
		q := ""
		if (r.op(i-1, ".") || r.op(i-1, "::")) && r.isName(i-2) {
			q = toks[i-2].text(src)
		}
		switch {
		case macro && !r.name(i, "macro_rules"):
			r.f.Refs = append(r.f.Refs, Ref{Name: name, Line: t.line, Call: true})
		case call:
			r.f.Refs = append(r.f.Refs, Ref{Name: name, Qual: q, Line: t.line, Call: true})
		case r.op(i-1, "."):
			r.f.Refs = append(r.f.Refs, Ref{Name: name, Qual: q, Line: t.line})
		case name[0] >= 'A' && name[0] <= 'Z' && !r.op(i+1, "::"):
			r.f.Refs = append(r.f.Refs, Ref{Name: name, Qual: q, Line: t.line})
		}
	}
}
