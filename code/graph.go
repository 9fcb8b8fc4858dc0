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
	edges []edge  // calls only
	out   []int32 // edges by caller: those of definition i are out[outAt[i]:outAt[i+1]]
	outAt []int32
	in    []int32 // edges by callee, likewise
	inAt  []int32
	indeg []int32 // by definition: references of any kind from other definitions or files
}

// calls returns the edges from (out) or to (in) definition id.
func (g *graph) calls(id int32, in bool) []int32 {
	if id < 0 {
		return nil
	}
	if in {
		return g.in[g.inAt[id]:g.inAt[id+1]]
	}
	return g.out[g.outAt[id]:g.outAt[id+1]]
}

// index groups the edges by caller and by callee (a counting sort).
func (g *graph) index(n int) {
	g.outAt = make([]int32, n+1)
	g.inAt = make([]int32, n+1)
	for _, e := range g.edges {
		if e.from >= 0 {
			g.outAt[e.from+1]++
		}
		g.inAt[e.to+1]++
	}
	for i := 1; i <= n; i++ {
		g.outAt[i] += g.outAt[i-1]
		g.inAt[i] += g.inAt[i-1]
	}
	g.out = make([]int32, g.outAt[n])
	g.in = make([]int32, g.inAt[n])
	o := append([]int32(nil), g.outAt[:n]...)
	in := append([]int32(nil), g.inAt[:n]...)
	for i, e := range g.edges {
		if e.from >= 0 {
			g.out[o[e.from]] = int32(i)
			o[e.from]++
		}
		g.in[in[e.to]] = int32(i)
		in[e.to]++
	}
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
	g := &graph{indeg: make([]int32, len(d.syms))}
	u := d.buildUnits()
	for _, f := range d.files {
		if f.file() == nil || len(f.refs()) == 0 {
			continue
		}
		fim := d.fileImports(u, f)
		encl := d.enclosing(f)
		type key struct{ name, qual string }
		memo := map[key][]int32{}
		for ri := range len(f.refs()) / 3 {
			r := unpackRef(d.names, f.refs(), ri)
			from := encl[ri]
			k := key{r.name, r.qual}
			to, ok := memo[k]
			if !ok {
				to = d.resolveRef(u, f, fim, r)
				memo[k] = to
			}
			for _, to := range to {
				if to == from {
					continue
				}
				g.indeg[to]++
				if !r.call {
					continue
				}
				g.edges = append(g.edges, edge{from: from, to: to, f: f, line: int32(r.line)})
			}
		}
	}
	g.index(len(d.syms))
	return g
}

// enclosing returns, for each reference of f, the innermost definition
// holding its line (-1 for none), by one sweep over both in line order.
func (d *derived) enclosing(f *fileRec) []int32 {
	nr := len(f.refs()) / 3
	line := func(i int) int { return int(f.refs()[3*i+2] >> 1) }
	out := make([]int32, nr)
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
	order := make([]int, nr)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return line(order[a]) < line(order[b]) })
	var stack []int32
	next := 0
	for _, ri := range order {
		line := line(ri)
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

// units index definitions by directory and by module file, so that a
// reference resolves by a few map lookups rather than a scan of every
// definition of its name.
type units struct {
	byName   map[string][]int32  // name + "\x00" + unit -> definitions
	set      map[string]bool     // every unit: directories and paths without extension
	bySuffix map[string][]string // '/'-suffix (or the whole) -> units ending so
	pkgs     map[string]string   // unit -> the parser's Package of a file in it
	imports  map[string][]string // import key -> units it names (memo)
}

func (d *derived) buildUnits() *units {
	u := &units{byName: map[string][]int32{}, set: map[string]bool{}, bySuffix: map[string][]string{},
		pkgs: map[string]string{}, imports: map[string][]string{}}
	for _, f := range d.files {
		fi := d.infoOf(f)
		for _, t := range []string{fi.dir, fi.modKey} {
			if t == "." || u.set[t] {
				continue
			}
			u.set[t] = true
			if fi.pkg != "" {
				u.pkgs[t] = fi.pkg
			}
			u.bySuffix[t] = append(u.bySuffix[t], t)
			for i := 0; i < len(t); i++ {
				if t[i] == '/' {
					u.bySuffix[t[i+1:]] = append(u.bySuffix[t[i+1:]], t)
				}
			}
		}
	}
	for id, r := range d.syms {
		if !d.live(int32(id)) {
			continue
		}
		n := r.sym().Name
		u.byName[n+"\x00"+r.fi.dir] = append(u.byName[n+"\x00"+r.fi.dir], int32(id))
		u.byName[n+"\x00"+r.fi.modKey] = append(u.byName[n+"\x00"+r.fi.modKey], int32(id))
	}
	return u
}

// importUnits returns the units an import key names: those it ends with,
// and those that end with it.
func (u *units) importUnits(k string) []string {
	if ts, ok := u.imports[k]; ok {
		return ts
	}
	ts := append([]string(nil), u.bySuffix[k]...)
	for i := 0; i < len(k); i++ {
		if k[i] == '/' && u.set[k[i+1:]] && k[i+1:] != k {
			ts = append(ts, k[i+1:])
		}
	}
	u.imports[k] = ts
	return ts
}

// fileImports is what resolving one file's references needs of its
// imports.
type fileImports struct {
	units []string        // the units it imports
	bases map[string]bool // the last element of each import: the names it may qualify with
}

func (d *derived) fileImports(u *units, f *fileRec) fileImports {
	fim := fileImports{bases: map[string]bool{}}
	seen := map[string]bool{}
	for _, k := range importKeys(f) {
		fim.bases[path.Base(k)] = true
		for _, t := range u.importUnits(k) {
			if !seen[t] {
				seen[t] = true
				fim.units = append(fim.units, t)
			}
		}
	}
	return fim
}

// importKeys turns f's imports into slash paths a definition's directory
// or module can be matched against.
func importKeys(f *fileRec) []string {
	var keys []string
	for _, imp := range f.file().Imports {
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
		if k != "" && k != "." {
			keys = append(keys, k)
		}
	}
	return keys
}

// resolveRef returns the definitions a reference in f names: those in the
// same file, else the same directory, else an imported package or module,
// else anywhere (when few). A qualifier naming an imported package narrows
// to that package; any other qualifier (a receiver) narrows to methods.
func (d *derived) resolveRef(u *units, f *fileRec, fim fileImports, r ref) []int32 {
	all := d.named(r.name)
	if len(all) == 0 {
		return nil
	}
	keep := func(id int32) bool { return true }
	if r.qual != "" {
		var pkg []int32
		for _, t := range fim.units {
			if path.Base(t) != r.qual && u.pkgs[t] != r.qual && !strings.HasSuffix(u.pkgs[t], "."+r.qual) {
				continue
			}
			for _, id := range u.byName[r.name+"\x00"+t] {
				if d.syms[id].sym().Parent == "" {
					pkg = append(pkg, id)
				}
			}
		}
		if len(pkg) > 0 {
			return dedup(pkg)
		}
		if fim.bases[r.qual] {
			return nil // a package the index does not hold
		}
		keep = func(id int32) bool { return d.syms[id].sym().Parent != "" }
	}
	fi := d.infoOf(f)
	var same, dir []int32
	for _, id := range u.byName[r.name+"\x00"+fi.dir] {
		c := d.syms[id]
		switch {
		case !keep(id):
		case c.f == f:
			same = append(same, id)
		case c.f.Lang == f.Lang:
			dir = append(dir, id)
		}
	}
	if len(same) > 0 {
		return same
	}
	if len(dir) > 0 {
		return dir
	}
	var imp []int32
	for _, t := range fim.units {
		for _, id := range u.byName[r.name+"\x00"+t] {
			if keep(id) {
				imp = append(imp, id)
			}
		}
	}
	if len(imp) > 0 {
		return dedup(imp)
	}
	var any []int32
	for _, id := range all {
		if keep(id) {
			if any = append(any, id); len(any) > maxAnywhere {
				return nil
			}
		}
	}
	return any
}

// dedup sorts ids and drops repeats.
func dedup(ids []int32) []int32 {
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	out := ids[:0]
	for i, id := range ids {
		if i == 0 || id != ids[i-1] {
			out = append(out, id)
		}
	}
	return out
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
			for _, ei := range g.calls(id, up) {
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
