package code

import (
	"path"
	"sort"
	"strings"
)

// graph is the reference graph: each reference a parser found, from the
// innermost definition holding it (-1: the file's top level) to the
// definitions its name resolves to.
type graph struct {
	edges []edge
	out   map[int32][]int32 // from -> edges (calls only)
	in    map[int32][]int32 // to -> edges (calls only)
	indeg []int32           // by definition: references of any kind from other definitions or files
}

type edge struct {
	from, to int32
	f        *fileRec
	line     int32
}

// maxAnywhere is how many definitions of a name found only elsewhere in
// the project (not in the file, its package or its imports) a reference
// may resolve to: a common name with more is too ambiguous to link.
const maxAnywhere = 3

// graph returns the reference graph, building it on first need.
func (d *derived) graph() *graph {
	d.graphOnce.Do(func() { d.g = d.buildGraph() })
	return d.g
}

func (d *derived) buildGraph() *graph {
	g := &graph{out: map[int32][]int32{}, in: map[int32][]int32{}, indeg: make([]int32, len(d.syms))}
	for _, f := range d.files {
		if f.File == nil || len(f.File.Refs) == 0 {
			continue
		}
		imps := importKeys(f)
		encl := d.enclosing(f)
		for ri, r := range f.File.Refs {
			from := encl[ri]
			for _, to := range d.resolveRef(f, imps, r) {
				if to == from {
					continue
				}
				g.indeg[to]++
				if !r.Call {
					continue
				}
				e := int32(len(g.edges))
				g.edges = append(g.edges, edge{from: from, to: to, f: f, line: int32(r.Line)})
				g.out[from] = append(g.out[from], e)
				g.in[to] = append(g.in[to], e)
			}
		}
	}
	return g
}

// enclosing returns, for each reference of f, the innermost definition
// holding its line (-1 for none), by one sweep over both in line order.
func (d *derived) enclosing(f *fileRec) []int32 {
	out := make([]int32, len(f.File.Refs))
	ids := d.fileSyms(f)
	if len(ids) == 0 {
		for i := range out {
			out[i] = -1
		}
		return out
	}
	sort.SliceStable(ids, func(a, b int) bool {
		x, y := d.syms[ids[a]].sym(), d.syms[ids[b]].sym()
		if x.Line != y.Line {
			return x.Line < y.Line
		}
		return x.EndLine > y.EndLine
	})
	order := make([]int, len(f.File.Refs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return f.File.Refs[order[a]].Line < f.File.Refs[order[b]].Line })
	var stack []int32
	next := 0
	for _, ri := range order {
		line := f.File.Refs[ri].Line
		for next < len(ids) && d.syms[ids[next]].sym().Line <= line {
			// Close the definitions that end before this one starts.
			for len(stack) > 0 && max(d.syms[stack[len(stack)-1]].sym().EndLine, d.syms[stack[len(stack)-1]].sym().Line) < d.syms[ids[next]].sym().Line {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, ids[next])
			next++
		}
		for len(stack) > 0 && max(d.syms[stack[len(stack)-1]].sym().EndLine, d.syms[stack[len(stack)-1]].sym().Line) < line {
			stack = stack[:len(stack)-1]
		}
		out[ri] = -1
		if len(stack) > 0 {
			out[ri] = stack[len(stack)-1]
		}
	}
	return out
}

// importKeys turns f's imports into slash paths a definition's directory
// or module can be matched against.
func importKeys(f *fileRec) []string {
	var keys []string
	for _, imp := range f.File.Imports {
		k := strings.Trim(imp, `"'`)
		switch f.Lang {
		case "python":
			k = strings.ReplaceAll(strings.TrimLeft(k, "."), ".", "/")
		case "rust":
			k = strings.ReplaceAll(strings.TrimPrefix(strings.TrimPrefix(k, "crate::"), "self::"), "::", "/")
		case "javascript", "typescript", "tsx":
			if strings.HasPrefix(k, ".") {
				k = path.Join(path.Dir(f.Path), k)
			}
		}
		if k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// imported reports whether the definition's file is what one of keys
// names: its directory (a package) or the file without extension (a
// module).
func imported(keys []string, f *fileRec) bool {
	dir := path.Dir(f.Path)
	mod := strings.TrimSuffix(f.Path, path.Ext(f.Path))
	for _, k := range keys {
		for _, t := range []string{dir, mod} {
			if t == "." {
				continue
			}
			if k == t || strings.HasSuffix(k, "/"+t) || strings.HasSuffix(t, "/"+k) {
				return true
			}
		}
	}
	return false
}

// resolveRef returns the definitions a reference in f names: those in the
// same file, else the same directory, else an imported package or module,
// else anywhere (when few). A qualifier narrows: a package's name to that
// package, a receiver to methods.
func (d *derived) resolveRef(f *fileRec, imps []string, r pRef) []int32 {
	cands := d.byName[r.Name]
	if len(cands) == 0 {
		return nil
	}
	if r.Qual != "" {
		var pkg, meth []int32
		for _, id := range cands {
			c := d.syms[id]
			s := c.sym()
			if s.Parent == r.Qual {
				meth = append(meth, id)
			} else if s.Parent == "" && c.f != f && inPackage(d, c.f, r.Qual) {
				pkg = append(pkg, id)
			} else if s.Parent != "" {
				meth = append(meth, id)
			}
		}
		if len(pkg) > 0 {
			cands = pkg
		} else {
			cands = meth
		}
	}
	dir := path.Dir(f.Path)
	var same, pkg, imp []int32
	for _, id := range cands {
		c := d.syms[id]
		switch {
		case c.f == f:
			same = append(same, id)
		case path.Dir(c.f.Path) == dir && c.f.Lang == f.Lang:
			pkg = append(pkg, id)
		case imported(imps, c.f):
			imp = append(imp, id)
		}
	}
	for _, t := range [][]int32{same, pkg, imp} {
		if len(t) > 0 {
			return t
		}
	}
	if len(cands) <= maxAnywhere {
		return cands
	}
	return nil
}

// Callers returns the call sites of sym (resolved as Card resolves it; all
// the definitions a plain name matches), and of their callers up to depth
// levels, breadth first. depth < 1 counts as 1.
func (ix *Index) Callers(sym string, depth int) []Edge {
	return ix.walkCalls(sym, depth, true)
}

// Callees returns the calls made by sym, and by what they call up to depth
// levels, breadth first. depth < 1 counts as 1.
func (ix *Index) Callees(sym string, depth int) []Edge {
	return ix.walkCalls(sym, depth, false)
}

func (ix *Index) walkCalls(sym string, depth int, up bool) []Edge {
	d, _ := ix.derive()
	start, err := ix.resolve(d, sym)
	if err != nil {
		return nil
	}
	if _, _, ok := strings.Cut(sym, "#"); ok || strings.Contains(sym, ":") {
		start = start[:1]
	}
	g := d.graph()
	depth = max(depth, 1)
	seen := map[int32]bool{}
	for _, id := range start {
		seen[id] = true
	}
	cards := map[int32]Card{}
	cardOf := func(id int32, f *fileRec) Card {
		if id < 0 {
			return Card{Kind: "file", Name: path.Base(f.Path), Path: f.Path, Lang: f.Lang, Module: d.module(f)}
		}
		c, ok := cards[id]
		if !ok {
			c = ix.card(d, id, false, false)
			cards[id] = c
		}
		return c
	}
	var out []Edge
	frontier := start
	for level := 1; level <= depth && len(frontier) > 0; level++ {
		var next []int32
		for _, id := range frontier {
			es := g.out[id]
			if up {
				es = g.in[id]
			}
			for _, ei := range es {
				e := g.edges[ei]
				out = append(out, Edge{From: cardOf(e.from, e.f), To: cardOf(e.to, e.f), Path: e.f.Path, Line: int(e.line), Depth: level})
				other := e.to
				if up {
					other = e.from
				}
				if other >= 0 && !seen[other] {
					seen[other] = true
					next = append(next, other)
				}
			}
		}
		frontier = next
	}
	return out
}
