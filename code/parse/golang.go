package parse

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// goMode skips object resolution: the extractor never looks at ast.Object, and
// resolution costs about a tenth of the parse (BenchmarkParseGoroot).
const goMode = parser.ParseComments | parser.SkipObjectResolution

func parseGo(path string, src []byte, refs bool) *File {
	return parseGoSkim(path, src, refs, true)
}

// parseGoSkim parses with function bodies blanked when skim is set, or whole.
func parseGoSkim(path string, src []byte, refs, skim bool) *File {
	sk := goSkim{src: src, doRef: refs}
	psrc := src
	if skim {
		psrc = sk.run()
	}
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, path, psrc, goMode)
	if err != nil && sk.out != nil {
		// Blanking went wrong or the file is broken: parse it whole, refs from the AST.
		fset = token.NewFileSet()
		af, _ = parser.ParseFile(fset, path, src, goMode)
		sk.refs = nil
	}
	f := &File{}
	if af == nil {
		return f
	}
	g := goExtractor{f: f, src: src, tf: fset.File(af.Package)}
	if g.tf == nil {
		return f
	}
	if af.Name != nil {
		f.Package = af.Name.Name
	}
	for _, is := range af.Imports {
		if is.Path == nil {
			continue
		}
		if p, err := strconv.Unquote(is.Path.Value); err == nil {
			f.Imports = append(f.Imports, p)
		}
	}
	for _, d := range af.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			g.funcDecl(d)
		case *ast.GenDecl:
			g.genDecl(d)
		}
	}
	if refs {
		g.refs(af)
		if len(sk.refs) > 0 {
			f.Refs = append(f.Refs, sk.refs...)
			slices.SortStableFunc(f.Refs, func(a, b Ref) int { return a.Line - b.Line })
		}
	}
	return f
}

type goExtractor struct {
	f   *File
	src []byte
	tf  *token.File
}

// line is the line of p, clamped to the file: the parser gives positions past the
// end to declarations cut off by the end of the file.
func (g *goExtractor) line(p token.Pos) int {
	base := g.tf.Base()
	switch {
	case !p.IsValid() || int(p) < base:
		return 1
	case int(p) > base+g.tf.Size():
		return g.tf.LineCount()
	}
	return g.tf.Line(p)
}

func (g *goExtractor) add(s Symbol) {
	if s.Line < 1 {
		s.Line = 1
	}
	if s.EndLine < s.Line {
		s.EndLine = s.Line
	}
	g.f.Symbols = append(g.f.Symbols, s)
}

// text is the source between two positions, "" when either is out of the file.
func (g *goExtractor) text(from, to token.Pos) string {
	base := g.tf.Base()
	i, j := int(from)-base, int(to)-base
	if !from.IsValid() || !to.IsValid() || i < 0 || j > len(g.src) || i > j {
		return ""
	}
	return string(g.src[i:j])
}

func docText(cg *ast.CommentGroup) string {
	if cg == nil {
		return ""
	}
	return strings.TrimSpace(cg.Text())
}

func (g *goExtractor) funcDecl(d *ast.FuncDecl) {
	if d.Name == nil || d.Type == nil || d.Name.Name == "_" {
		return
	}
	s := Symbol{
		Kind:     KindFunc,
		Name:     d.Name.Name,
		Line:     g.line(d.Pos()),
		EndLine:  g.line(d.End()),
		Doc:      docText(d.Doc),
		Exported: ast.IsExported(d.Name.Name),
	}
	if d.Recv != nil && len(d.Recv.List) > 0 {
		s.Kind = KindMethod
		s.Parent = recvName(d.Recv.List[0].Type)
	}
	end := d.End()
	if d.Body != nil {
		end = d.Body.Lbrace
	}
	s.Signature = oneLine(g.text(d.Type.Func, end))
	if d.Type.Func == token.NoPos {
		s.Signature = oneLine(g.text(d.Pos(), end))
	}
	g.add(s)
}

// recvName is the receiver's type name without pointer or type parameters.
func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

func (g *goExtractor) genDecl(d *ast.GenDecl) {
	grouped := d.Lparen.IsValid()
	for _, spec := range d.Specs {
		from, to := spec.Pos(), spec.End()
		if !grouped {
			from, to = d.Pos(), d.End()
		}
		switch sp := spec.(type) {
		case *ast.TypeSpec:
			doc := sp.Doc
			if doc == nil && !grouped {
				doc = d.Doc
			}
			g.typeSpec(sp, g.line(from), g.line(to), docText(doc))
		case *ast.ValueSpec:
			doc := sp.Doc
			if doc == nil && !grouped {
				doc = d.Doc
			}
			if doc == nil {
				doc = sp.Comment
			}
			kind := KindVar
			if d.Tok == token.CONST {
				kind = KindConst
			}
			sig := g.text(sp.Pos(), sp.End())
			if i := strings.IndexByte(sig, '\n'); i >= 0 {
				sig = sig[:i]
			}
			sig = oneLine(d.Tok.String() + " " + sig)
			for _, n := range sp.Names {
				if n == nil || n.Name == "_" {
					continue
				}
				g.add(Symbol{
					Kind:      kind,
					Name:      n.Name,
					Line:      g.line(from),
					EndLine:   g.line(to),
					Signature: sig,
					Doc:       docText(doc),
					Exported:  ast.IsExported(n.Name),
				})
			}
		}
	}
}

func (g *goExtractor) typeSpec(sp *ast.TypeSpec, line, end int, doc string) {
	if sp.Name == nil {
		return
	}
	name := sp.Name.Name
	s := Symbol{Kind: KindType, Name: name, Line: line, EndLine: end, Doc: doc, Exported: ast.IsExported(name)}
	head := "type " + g.text(sp.Name.Pos(), sp.Name.End())
	if sp.TypeParams != nil {
		head = "type " + g.text(sp.Name.Pos(), sp.TypeParams.End())
	}
	switch t := sp.Type.(type) {
	case *ast.StructType:
		s.Kind = KindStruct
		s.Signature = oneLine(head + " struct")
		g.add(s)
		g.fields(name, t.Fields, false)
	case *ast.InterfaceType:
		s.Kind = KindInterface
		s.Signature = oneLine(head + " interface")
		g.add(s)
		g.fields(name, t.Methods, true)
	default:
		sig := g.text(sp.Pos(), sp.End())
		if i := strings.IndexByte(sig, '\n'); i >= 0 {
			sig = sig[:i]
		}
		s.Signature = oneLine("type " + sig)
		g.add(s)
	}
}

// fields adds the named fields of a struct, or the methods of an interface.
func (g *goExtractor) fields(parent string, fl *ast.FieldList, iface bool) {
	if fl == nil {
		return
	}
	for _, fd := range fl.List {
		if fd == nil || fd.Type == nil {
			continue
		}
		doc := fd.Doc
		if doc == nil {
			doc = fd.Comment
		}
		s := Symbol{Kind: KindField, Parent: parent, Line: g.line(fd.Pos()), EndLine: g.line(fd.End()), Doc: docText(doc)}
		if iface {
			if _, ok := fd.Type.(*ast.FuncType); !ok || len(fd.Names) == 0 {
				continue // embedded interface or type union
			}
			s.Kind = KindMethod
		}
		sig := g.text(fd.Pos(), fd.Type.End())
		if i := strings.IndexByte(sig, '\n'); i >= 0 && !iface {
			sig = sig[:i]
		}
		s.Signature = oneLine(sig)
		if len(fd.Names) == 0 { // embedded field: named after its type
			s.Name = recvName(fd.Type)
			if se, ok := unstar(fd.Type).(*ast.SelectorExpr); ok && se.Sel != nil {
				s.Name = se.Sel.Name
			}
			if s.Name == "" {
				continue
			}
			s.Exported = ast.IsExported(s.Name)
			g.add(s)
			continue
		}
		for _, n := range fd.Names {
			if n == nil || n.Name == "_" {
				continue
			}
			s.Name = n.Name
			s.Exported = ast.IsExported(n.Name)
			g.add(s)
		}
	}
}

func unstar(e ast.Expr) ast.Expr {
	if s, ok := e.(*ast.StarExpr); ok {
		return s.X
	}
	return e
}

// lastIdent is the last identifier of a qualifier expression: "c" for c, "Cmd" for
// x.Cmd, "m" for m[i] or m(), "" when there is none.
func lastIdent(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.Ident:
			return t.Name
		case *ast.SelectorExpr:
			if t.Sel == nil {
				return ""
			}
			return t.Sel.Name
		case *ast.ParenExpr:
			e = t.X
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.CallExpr:
			e = t.Fun
		case *ast.TypeAssertExpr:
			e = t.X
		default:
			return ""
		}
	}
}

var goPredeclared = map[string]bool{
	"any": true, "bool": true, "byte": true, "comparable": true, "complex64": true,
	"complex128": true, "error": true, "float32": true, "float64": true, "int": true,
	"int8": true, "int16": true, "int32": true, "int64": true, "rune": true,
	"string": true, "uint": true, "uint8": true, "uint16": true, "uint32": true,
	"uint64": true, "uintptr": true,
}

// typeIdents adds a reference for each named type in a type expression, stopping at
// nested field lists, which the walk reaches on its own. Qualified names are left to
// the selector case of the walk.
func (g *goExtractor) typeIdents(e ast.Expr) {
	for e != nil {
		switch t := e.(type) {
		case *ast.Ident:
			if !goPredeclared[t.Name] && t.Name != "_" {
				g.f.Refs = append(g.f.Refs, Ref{Name: t.Name, Line: g.line(t.Pos())})
			}
			return
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.ArrayType:
			e = t.Elt
		case *ast.Ellipsis:
			e = t.Elt
		case *ast.ChanType:
			e = t.Value
		case *ast.MapType:
			g.typeIdents(t.Key)
			e = t.Value
		case *ast.IndexExpr:
			g.typeIdents(t.X)
			e = t.Index
		case *ast.IndexListExpr:
			g.typeIdents(t.X)
			for _, x := range t.Indices {
				g.typeIdents(x)
			}
			return
		default:
			return
		}
	}
}

func (g *goExtractor) refs(af *ast.File) {
	var callSel *ast.SelectorExpr // the selector of the call being visited, already recorded
	ast.Inspect(af, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			fun := n.Fun
			for {
				switch t := fun.(type) {
				case *ast.ParenExpr:
					fun = t.X
					continue
				case *ast.IndexExpr:
					fun = t.X
					continue
				case *ast.IndexListExpr:
					fun = t.X
					continue
				}
				break
			}
			switch t := fun.(type) {
			case *ast.Ident:
				g.f.Refs = append(g.f.Refs, Ref{Name: t.Name, Line: g.line(t.Pos()), Call: true})
			case *ast.SelectorExpr:
				if t.Sel != nil {
					g.f.Refs = append(g.f.Refs, Ref{Name: t.Sel.Name, Qual: lastIdent(t.X), Line: g.line(t.Sel.Pos()), Call: true})
					callSel = t
				}
			}
		case *ast.SelectorExpr:
			if n == callSel {
				callSel = nil
				return true
			}
			if n.Sel != nil {
				g.f.Refs = append(g.f.Refs, Ref{Name: n.Sel.Name, Qual: lastIdent(n.X), Line: g.line(n.Sel.Pos())})
			}
		case *ast.Field:
			g.typeIdents(n.Type)
		case *ast.CompositeLit:
			g.typeIdents(n.Type)
		case *ast.ValueSpec:
			g.typeIdents(n.Type)
		case *ast.TypeSpec:
			g.typeIdents(n.Type)
		case *ast.TypeAssertExpr:
			g.typeIdents(n.Type)
		}
		return true
	})
}
