package parse

import (
	"bytes"
	"strings"
)

var rbKeywords = map[string]bool{
	"BEGIN": true, "END": true, "alias": true, "and": true, "begin": true, "break": true, "case": true,
	"class": true, "def": true, "defined?": true, "do": true, "else": true, "elsif": true, "end": true,
	"ensure": true, "false": true, "for": true, "if": true, "in": true, "module": true, "next": true,
	"nil": true, "not": true, "or": true, "redo": true, "rescue": true, "retry": true, "return": true,
	"self": true, "super": true, "then": true, "true": true, "undef": true, "unless": true,
	"until": true, "when": true, "while": true, "yield": true, "__FILE__": true, "__LINE__": true,
	"__method__": true, "private": true, "public": true, "protected": true, "require": true,
	"require_relative": true, "attr_reader": true, "attr_writer": true, "attr_accessor": true,
	"include": true, "extend": true, "prepend": true, "module_function": true, "lambda": true, "proc": true,
}

// rbValueEnd reports whether a token ends a value, after which / is division
// and a space-less [ or ( belongs to it.
func rbValueEnd(src []byte, t tok) bool {
	switch t.kind {
	case tName:
		w := string(src[t.s:t.e])
		return !rbKeywords[w] || w == "self" || w == "end" || w == "nil" || w == "true" || w == "false"
	case tString, tNumber:
		return true
	case tOp:
		c := src[t.s]
		return c == ')' || c == ']' || c == '}'
	}
	return false
}

// rbLex splits Ruby source into tokens, with a tNewline at the end of each
// line outside brackets, and collects the # comments. Strings, symbols,
// %-literals, regular expressions and heredocs become one tString token;
// =begin … =end blocks and everything after __END__ are left out.
func rbLex(src []byte) (toks []tok, cs []comment) {
	line, depth := 1, 0
	toks = make([]tok, 0, len(src)/5)
	var heredocs []rbHeredoc // pending: their bodies start at the next line
	lineStart := true
	spaceBefore := false
	for i := 0; i < len(src); {
		c := src[i]
		if lineStart && c == '=' && bytes.HasPrefix(src[i:], []byte("=begin")) && (i+6 == len(src) || !isIdentByte(src[i+6])) {
			j := i
			for {
				nl := bytes.IndexByte(src[j:], '\n')
				if nl < 0 {
					j = len(src)
					break
				}
				j += nl + 1
				if bytes.HasPrefix(src[j:], []byte("=end")) {
					break
				}
			}
			line += countLines(src, i, j)
			i = j
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		}
		if lineStart && bytes.HasPrefix(src[i:], []byte("__END__")) && (i+7 == len(src) || src[i+7] == '\n' || src[i+7] == '\r') {
			break
		}
		lineStart = false
		switch {
		case c == '\n':
			if depth == 0 && len(toks) > 0 && toks[len(toks)-1].kind != tNewline {
				toks = append(toks, tok{kind: tNewline, s: i, e: i, line: line, eline: line})
			}
			line++
			i++
			lineStart = true
			spaceBefore = true
			if len(heredocs) > 0 {
				j := i
				for _, h := range heredocs {
					j = rbHeredocEnd(src, j, h)
				}
				heredocs = heredocs[:0]
				line += countLines(src, i, j)
				i = j
			}
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
			spaceBefore = true
			continue
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			line++
			i += 2
			spaceBefore = true
			continue
		case c == '#':
			j := i
			for j < len(src) && src[j] != '\n' {
				j++
			}
			cs = append(cs, comment{line: line, eline: line, text: string(src[i:j])})
			i = j
			continue
		}
		prevValue := len(toks) > 0 && rbValueEnd(src, toks[len(toks)-1])
		// After def (or def self.) an operator is a method's name: def /(o).
		nt := len(toks)
		prevDef := nt > 0 && toks[nt-1].kind == tName && toks[nt-1].is(src, "def") ||
			nt > 2 && toks[nt-1].is(src, ".") && toks[nt-3].kind == tName && toks[nt-3].is(src, "def")
		s := i
		kind := byte(tOp)
		switch {
		case prevDef && !isIdentStart(c) && c != '"' && c != '\'' && c != '(':
			i++ // one byte of the operator; the parser joins the rest
		case c == '"' || c == '\'' || c == '`':
			i = rbStringEnd(src, i, c, c)
			kind = tString
		case c == ':' && i+1 < len(src) && (src[i+1] == '"' || src[i+1] == '\''):
			i = rbStringEnd(src, i+1, src[i+1], src[i+1])
			kind = tString
		case c == ':' && i+1 < len(src) && isIdentStart(src[i+1]) && !(i > 0 && src[i-1] == ':'):
			j := i + 1
			for j < len(src) && isIdentByte(src[j]) {
				j++
			}
			if j < len(src) && (src[j] == '?' || src[j] == '!' || src[j] == '=') && !(j+1 < len(src) && (src[j+1] == '=' || src[j+1] == '>' || src[j+1] == '~')) {
				j++
			}
			i = j
			kind = tString // a symbol
		case c == ':' && rbOpSymbolEnd(src, i) > 0:
			i = rbOpSymbolEnd(src, i)
			kind = tString
		case c == '<' && i+2 < len(src) && src[i+1] == '<' && (!prevValue || spaceBefore && src[i+2] != ' ') && rbHeredocStart(src, i) > 0:
			h, j := rbHeredocAt(src, i)
			heredocs = append(heredocs, h)
			i = j
			kind = tString
		case c == '%' && i+1 < len(src) && (!prevValue || spaceBefore && src[i+1] != ' ' && src[i+1] != '=') && rbPercentStart(src, i) > 0:
			i = rbPercentEnd(src, i)
			kind = tString
		case c == '/' && (!prevValue || spaceBefore && i+1 < len(src) && src[i+1] != ' ' && src[i+1] != '='):
			i = rbStringEnd(src, i, '/', '/')
			for i < len(src) && (src[i] >= 'a' && src[i] <= 'z') {
				i++
			}
			kind = tString
		case c == '?' && i+2 < len(src) && !prevValue && src[i+1] != ' ' && !isIdentByte(src[i+2]):
			i += 2 // a character literal: ?a
			kind = tString
		case isIdentStart(c) || c == '@' || c == '$' && i+1 < len(src):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || j == i+1 && (src[j] == '@' || c == '$')) {
				j++
			}
			if j < len(src) && (src[j] == '?' || src[j] == '!') && !(j+1 < len(src) && src[j+1] == '=') {
				j++
			}
			i = j
			kind = tName
		case isDigit(c):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '.' && j+1 < len(src) && isDigit(src[j+1])) {
				j++
			}
			i = j
			kind = tNumber
		default:
			n := 1
			if c == ':' && i+1 < len(src) && src[i+1] == ':' {
				n = 2
			}
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			}
			i += n
		}
		n := countLines(src, s, i)
		toks = append(toks, tok{kind: kind, s: s, e: i, line: line, eline: line + n})
		line += n
		spaceBefore = false
	}
	if len(toks) > 0 && toks[len(toks)-1].kind != tNewline {
		toks = append(toks, tok{kind: tNewline, s: len(src), e: len(src), line: line, eline: line})
	}
	return toks, cs
}

// rbStringEnd returns the index after a literal opening at src[i] and
// closing with shut (nesting open … shut when they differ), skipping
// escapes and #{…} interpolations.
func rbStringEnd(src []byte, i int, open, shut byte) int {
	depth := 0
	for i++; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case c == '#' && i+1 < len(src) && src[i+1] == '{' && open != '\'':
			// An interpolation: up to its brace, strings inside skipped.
			b := 0
			for i++; i < len(src); i++ {
				d := src[i]
				if d == '{' {
					b++
				} else if d == '}' {
					b--
					if b == 0 {
						break
					}
				} else if d == '"' || d == '\'' {
					i = rbStringEnd(src, i, d, d) - 1
				}
			}
		case c == shut && depth == 0:
			return i + 1
		case c == shut:
			depth--
		case c == open && open != shut:
			depth++
		}
	}
	return len(src)
}

// rbPercentStart returns the length of a %-literal's opening (%w[ is 3), or
// 0 when src[i:] does not open one.
func rbPercentStart(src []byte, i int) int {
	j := i + 1
	if j < len(src) && strings.IndexByte("qQwWiIrsx", src[j]) >= 0 {
		j++
	}
	if j < len(src) && strings.IndexByte("([{<|!/^", src[j]) >= 0 {
		return j - i + 1
	}
	return 0
}

func rbPercentEnd(src []byte, i int) int {
	n := rbPercentStart(src, i)
	j := i + n - 1
	open := src[j]
	shut := open
	switch open {
	case '(':
		shut = ')'
	case '[':
		shut = ']'
	case '{':
		shut = '}'
	case '<':
		shut = '>'
	}
	end := rbStringEnd(src, j, open, shut)
	if src[i+1] == 'r' {
		for end < len(src) && src[end] >= 'a' && src[end] <= 'z' {
			end++
		}
	}
	return end
}

type rbHeredoc struct {
	term   string
	indent bool // <<- or <<~: the terminator may be indented
}

// rbHeredocStart returns the length of a heredoc opening <<ID, <<-ID,
// <<~ID, <<"ID" or <<'ID' at i, or 0.
func rbHeredocStart(src []byte, i int) int {
	j := i + 2
	if j < len(src) && (src[j] == '-' || src[j] == '~') {
		j++
	}
	if j < len(src) && (src[j] == '"' || src[j] == '\'' || src[j] == '`') {
		q := src[j]
		ln := src[j+1:]
		if nl := bytes.IndexByte(ln, '\n'); nl >= 0 {
			ln = ln[:nl]
		}
		k := bytes.IndexByte(ln, q)
		if k <= 0 {
			return 0
		}
		return j + 1 + k + 1 - i
	}
	k := j
	for k < len(src) && isIdentByte(src[k]) {
		k++
	}
	if k == j || !(src[j] == '_' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= 'a' && src[j] <= 'z') {
		return 0
	}
	return k - i
}

func rbHeredocAt(src []byte, i int) (rbHeredoc, int) {
	n := rbHeredocStart(src, i)
	j := i + 2
	h := rbHeredoc{}
	if src[j] == '-' || src[j] == '~' {
		h.indent = true
		j++
	}
	h.term = strings.Trim(string(src[j:i+n]), "\"'`")
	return h, i + n
}

// rbHeredocEnd returns the index after the terminator line of the heredoc
// whose body starts at i.
func rbHeredocEnd(src []byte, i int, h rbHeredoc) int {
	for i < len(src) {
		nl := bytes.IndexByte(src[i:], '\n')
		e := len(src)
		if nl >= 0 {
			e = i + nl
		}
		l := bytes.TrimRight(src[i:e], "\r")
		if h.indent {
			l = bytes.TrimLeft(l, " \t")
		}
		if string(l) == h.term {
			if e < len(src) {
				return e + 1
			}
			return e
		}
		if nl < 0 {
			return len(src)
		}
		i = e + 1
	}
	return len(src)
}

func rbCommentText(s string) (string, bool) {
	if !strings.HasPrefix(s, "#") || strings.HasPrefix(s, "#!") {
		return "", false
	}
	s = strings.TrimPrefix(s, "#")
	return strings.TrimRight(strings.TrimPrefix(s, " "), " \t\r"), true
}

// rbScope is an open block: a definition's (sym >= 0) or any other that
// its end closes.
type rbScope struct {
	sym     int
	name    string // for class, module and class << self: the Parent of what is inside
	def     bool   // a method body: nothing inside is a member
	private bool   // after a bare private or protected
}

func parseRuby(src []byte, refs bool) *File {
	f, _ := rubyWork(src, refs)
	return f
}

// rubyWork parses Ruby and counts the tokens its look-ahead read
// (TestScannersLinear).
func rubyWork(src []byte, refs bool) (f *File, work int) {
	f = &File{}
	toks, cs := rbLex(src)
	byEnd := make(map[int]int, len(cs))
	for i, c := range cs {
		byEnd[c.eline] = i
	}
	is := func(i int, s string) bool {
		return i >= 0 && i < len(toks) && toks[i].kind != tString && toks[i].is(src, s)
	}
	name := func(i int) bool { return i >= 0 && i < len(toks) && toks[i].kind == tName }
	var stack []rbScope
	top := func() *rbScope {
		if len(stack) == 0 {
			return nil
		}
		return &stack[len(stack)-1]
	}
	parent := func() (string, bool, bool) {
		for k := len(stack) - 1; k >= 0; k-- {
			if stack[k].def {
				return stack[k].name, true, stack[k].private
			}
			if stack[k].name != "" {
				return stack[k].name, false, stack[k].private
			}
		}
		return "", false, false
	}
	noRef := map[int]bool{}
	add := func(s Symbol, at, nameTok, sigEnd int) int {
		s.Line = toks[at].line
		s.EndLine = max(toks[sigEnd].eline, s.Line)
		s.Signature = oneLine(src[toks[at].s:toks[sigEnd].e])
		s.Doc = commentDoc(cs, byEnd, s.Line, rbCommentText)
		noRef[nameTok] = true
		f.Symbols = append(f.Symbols, s)
		return len(f.Symbols) - 1
	}
	// ends[i] is the last token of the statement holding toks[i], for signatures.
	ends := make([]int32, len(toks))
	for i, e := len(toks)-1, len(toks)-1; i >= 0; i-- {
		if toks[i].kind == tNewline || is(i, ";") {
			e = i - 1
		}
		ends[i] = int32(max(e, i))
	}
	stmtStart := true
	loopHead := false // a while, until or for whose do is not a block
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		start := stmtStart
		stmtStart = t.kind == tNewline || is(i, ";")
		if t.kind == tNewline {
			loopHead = false
			continue
		}
		if t.kind != tName {
			continue
		}
		w := t.text(src)
		if i > 0 && (is(i-1, ".") || is(i-1, "::") || is(i-1, "&.")) {
			continue // a method named like a keyword: x.class, y.end
		}
		if i+1 < len(toks) && is(i+1, ":") && toks[i+1].s == t.e {
			continue // a hash key: if:, end:
		}
		eol := int(ends[i])
		prevOpens := i == 0 || start || toks[i-1].kind == tOp && !rbValueEnd(src, toks[i-1]) ||
			name(i-1) && (is(i-1, "then") || is(i-1, "else") || is(i-1, "do") || is(i-1, "and") || is(i-1, "or") || is(i-1, "not") || is(i-1, "begin"))
		switch w {
		case "class", "module":
			if is(i+1, "<<") {
				// class << self: what is inside belongs to the enclosing class.
				p, _, _ := parent()
				stack = append(stack, rbScope{sym: -1, name: p})
				continue
			}
			if !start && !prevOpens {
				continue
			}
			j := i + 1
			var segs []int
			for name(j) {
				segs = append(segs, j)
				if !is(j+1, "::") {
					break
				}
				j += 2
			}
			if len(segs) == 0 {
				stack = append(stack, rbScope{sym: -1})
				continue
			}
			p, _, _ := parent()
			if len(segs) > 1 {
				p = toks[segs[len(segs)-2]].text(src)
			}
			k := KindClass
			if w == "module" {
				k = KindModule
			}
			nt := segs[len(segs)-1]
			sym := add(Symbol{Kind: k, Name: toks[nt].text(src), Parent: p, Exported: true}, i, nt, eol)
			stack = append(stack, rbScope{sym: sym, name: toks[nt].text(src)})
			i = eol
			stmtStart = true
		case "def":
			j := i + 1
			if (name(j) || is(j, "self")) && is(j+1, ".") {
				j += 2
			}
			if j >= len(toks) || toks[j].kind == tNewline {
				continue
			}
			// The name: an identifier, setter (name=), or operator.
			nt := j
			nameStr := toks[j].text(src)
			if toks[j].kind == tOp {
				k := j
				for k+1 < len(toks) && (toks[k+1].kind == tOp || toks[k+1].is(src, "@")) && !is(k+1, "(") && toks[k+1].s == toks[k].e && k < j+3 {
					k++
				}
				if is(k+1, "(") && is(k, "[") {
					k++
				}
				nameStr = string(src[toks[j].s:toks[k].e])
				j = k
			} else if is(j+1, "=") && toks[j+1].s == toks[j].e && (is(j+2, "(") || toks[j+2].kind != tOp) {
				nameStr += "="
				j++
			}
			// Endless: def f(x) = expr.
			k := j + 1
			if is(k, "(") {
				d := 0
				for lim := k + lookAhead; k < len(toks) && k < lim; k++ {
					work++
					if is(k, "(") {
						d++
					} else if is(k, ")") {
						d--
						if d == 0 {
							break
						}
					}
				}
				k++
			}
			endless := is(k, "=")
			p, inDef, priv := parent()
			kind := KindFunc
			if p != "" && !inDef {
				kind = KindMethod
			}
			if inDef {
				p = ""
			}
			exported := !priv && !(i > 0 && (is(i-1, "private") || is(i-1, "protected")))
			sigEnd := min(max(k-1, nt), eol)
			sym := add(Symbol{Kind: kind, Name: nameStr, Parent: p, Exported: exported}, i, nt, sigEnd)
			if endless {
				f.Symbols[sym].Signature = oneLine(src[toks[i].s:toks[max(k-1, nt)].e])
				f.Symbols[sym].EndLine = toks[eol].eline
			} else {
				stack = append(stack, rbScope{sym: sym, name: nameStr, def: true})
			}
			i = max(k-1, nt)
		case "if", "unless", "while", "until":
			if prevOpens {
				stack = append(stack, rbScope{sym: -1})
				if w == "while" || w == "until" {
					loopHead = true
				}
			}
		case "for":
			if prevOpens {
				stack = append(stack, rbScope{sym: -1})
				loopHead = true
			}
		case "case", "begin":
			if prevOpens || w == "begin" {
				stack = append(stack, rbScope{sym: -1})
			}
		case "do":
			if loopHead {
				loopHead = false
			} else {
				stack = append(stack, rbScope{sym: -1})
			}
		case "end":
			if sc := top(); sc != nil {
				if sc.sym >= 0 {
					f.Symbols[sc.sym].EndLine = max(t.eline, f.Symbols[sc.sym].Line)
				}
				stack = stack[:len(stack)-1]
			}
		case "private", "protected", "public":
			if sc := top(); sc != nil && !sc.def && start && (i+1 >= len(toks) || toks[i+1].kind == tNewline || is(i+1, ";")) {
				sc.private = w != "public"
			}
		case "attr_reader", "attr_writer", "attr_accessor", "attr":
			p, inDef, priv := parent()
			if inDef || !start {
				continue
			}
			for j := i + 1; j <= eol; j++ {
				if toks[j].kind == tString && toks[j].e-toks[j].s > 1 && src[toks[j].s] == ':' {
					n := strings.Trim(string(src[toks[j].s+1:toks[j].e]), "\"'")
					if n == "" {
						continue
					}
					add(Symbol{Kind: KindField, Name: n, Parent: p, Exported: !priv}, i, j, eol)
				}
			}
		case "alias", "alias_method":
			p, inDef, priv := parent()
			if inDef || !start || i+1 > eol {
				continue
			}
			j := i + 1
			n := strings.TrimLeft(strings.Trim(toks[j].text(src), "\"'"), ":")
			n = strings.Trim(n, "\"'")
			if n != "" && n != "," {
				kind := KindFunc
				if p != "" {
					kind = KindMethod
				}
				add(Symbol{Kind: kind, Name: n, Parent: p, Exported: !priv}, i, j, eol)
			}
		case "require", "require_relative", "load":
			if start && i+1 <= eol && toks[i+1].kind == tString {
				s := toks[i+1].text(src)
				if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') {
					f.Imports = append(f.Imports, s[1:len(s)-1])
				}
			}
		default:
			// A constant: NAME = value at a class, module or the top level.
			if start && w[0] >= 'A' && w[0] <= 'Z' && rbAssign(src, toks, i+1) {
				p, inDef, priv := parent()
				if !inDef {
					add(Symbol{Kind: KindConst, Name: w, Parent: p, Exported: !priv}, i, i, eol)
				}
			}
		}
	}
	// Blocks left open end with the file.
	last := 1
	if len(toks) > 0 {
		last = toks[len(toks)-1].eline
	}
	for _, sc := range stack {
		if sc.sym >= 0 {
			f.Symbols[sc.sym].EndLine = max(last, f.Symbols[sc.sym].Line)
		}
	}
	if refs {
		rbRefs(f, src, toks, noRef)
	}
	return f, work + len(toks)
}

// rbAssign reports whether toks[i] is an assignment's =, not ==, =~ or =>.
func rbAssign(src []byte, toks []tok, i int) bool {
	if i >= len(toks) || toks[i].kind != tOp || !toks[i].is(src, "=") {
		return false
	}
	if i+1 < len(toks) && toks[i+1].kind == tOp && toks[i+1].s == toks[i].e {
		switch src[toks[i+1].s] {
		case '=', '~', '>':
			return false
		}
	}
	return true
}

// rbOpSymbols are the operator method names a symbol may spell (:<<).
var rbOpSymbols = []string{"[]=", "[]", "<=>", "===", "==", "=~", "!~", "<<", ">>", "<=", ">=", "+@", "-@", "**", "!=", "+", "-", "*", "/", "%", "<", ">", "!", "~", "^", "&", "|"}

// rbOpSymbolEnd returns the index after an operator symbol whose colon is
// at i (:<<, :[]), or 0.
func rbOpSymbolEnd(src []byte, i int) int {
	if i > 0 && src[i-1] != ' ' && src[i-1] != '\t' && src[i-1] != '(' && src[i-1] != ',' && src[i-1] != '[' {
		return 0
	}
	for _, op := range rbOpSymbols {
		if bytes.HasPrefix(src[i+1:], []byte(op)) {
			e := i + 1 + len(op)
			if e < len(src) && (isIdentByte(src[e]) || src[e] == '(' || src[e] == '"' || src[e] == '\'') {
				return 0
			}
			return e
		}
	}
	return 0
}

// rbRefs adds calls (f(, x.f, A::f, command calls like puts "x") and
// constants.
func rbRefs(f *File, src []byte, toks []tok, noRef map[int]bool) {
	is := func(i int, s string) bool {
		return i >= 0 && i < len(toks) && toks[i].kind == tOp && toks[i].is(src, s)
	}
	for i, t := range toks {
		if t.kind != tName || noRef[i] {
			continue
		}
		w := t.text(src)
		if w[0] == '@' || w[0] == '$' {
			continue
		}
		member := is(i-1, ".") || is(i-1, "&.") || is(i-1, "::")
		if rbKeywords[w] && !member {
			continue
		}
		q := ""
		if member && i > 1 && toks[i-2].kind == tName {
			q = toks[i-2].text(src)
		}
		next := tok{kind: tNewline}
		if i+1 < len(toks) {
			next = toks[i+1]
		}
		paren := is(i+1, "(") && next.s == t.e
		upper := w[0] >= 'A' && w[0] <= 'Z'
		switch {
		case upper && !paren:
			if !rbAssign(src, toks, i+1) {
				f.Refs = append(f.Refs, Ref{Name: w, Qual: q, Line: t.line})
			}
		case member:
			f.Refs = append(f.Refs, Ref{Name: w, Qual: q, Line: t.line, Call: !rbAssign(src, toks, i+1)})
		case paren:
			f.Refs = append(f.Refs, Ref{Name: w, Line: t.line, Call: true})
		case next.kind != tNewline && next.s > t.e && (next.kind == tString || next.kind == tNumber ||
			next.kind == tName && !rbKeywords[next.text(src)] && src[next.s] != '@'):
			// A command call: puts "x", raise Error.
			if !(i > 0 && toks[i-1].kind == tName && !rbKeywords[toks[i-1].text(src)]) {
				f.Refs = append(f.Refs, Ref{Name: w, Line: t.line, Call: true})
			}
		}
	}
}
