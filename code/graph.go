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
	// Most calls resolve to one definition or none: room for one edge a
	// call spares growing the edges by doubling, tens of megabytes copied.
	calls := 0
	for _, f := range d.files {
		refs := f.refs()
		for i := 2; i < len(refs); i += 3 {
			calls += int(refs[i] & 1)
		}
	}
	g.edges = make([]edge, 0, calls)
	// The references name strings by their number in the state's table:
	// resolved once per file for each name and qualifier met.
	refName := make([]int32, len(d.names)) // 0 unknown, -1 no definition, else the name's number in u
	memo := map[uint64][]int32{}
	for _, f := range d.files {
		refs := f.refs()
		if f.file() == nil || len(refs) == 0 {
			continue
		}
		fim := d.fileImports(u, f)
		encl := d.enclosing(f)
		here := u.id[d.infoOf(f).dir]
		clear(memo)
		for ri := range len(refs) / 3 {
			nid, qid, lc := refs[3*ri], refs[3*ri+1], refs[3*ri+2]
			n := refName[nid]
			if n == 0 {
				n = -1
				if v, ok := u.names[d.names[nid]]; ok {
					n = v
				}
				refName[nid] = n
			}
			if n < 0 {
				continue // no definition is so named
			}
			from := encl[ri]
			k := uint64(nid)<<32 | uint64(qid)
			to, ok := memo[k]
			if !ok {
				to = d.resolveRef(u, f, fim, here, d.names[nid], n, d.names[qid])
				memo[k] = to
			}
			for _, to := range to {
				if to == from {
					continue
				}
				g.indeg[to]++
				if lc&1 == 0 {
					continue
				}
				g.edges = append(g.edges, edge{from: from, to: to, f: f, line: int32(lc >> 1)})
			}
		}
	}
	if cap(g.edges) > len(g.edges)+len(g.edges)/4 {
		g.edges = append([]edge(nil), g.edges...) // kept for the index's life: no room to spare
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
// definition of its name. Units, and the names of the definitions, are
// numbered: the lookups made for each reference are of numbers, not of
// strings.
type units struct {
	id       map[string]int32   // unit (directories and paths without extension, "." too) -> number
	base     []string           // by unit: its last element
	pkg      []string           // by unit: the parser's Package of a file in it
	importer []bool             // by unit: one an import may name ("." is not)
	names    map[string]int32   // the live definitions' names -> number, from 1
	byName   map[uint64][]int32 // name number << 32 | unit -> definitions
	bySuffix map[string][]int32 // '/'-suffix (or the whole) -> units ending so
	imports  map[string][]int32 // import key -> units it names (memo)
}

func (u *units) unit(t, pkg string) int32 {
	if n, ok := u.id[t]; ok {
		return n
	}
	n := int32(len(u.base))
	u.id[t] = n
	u.base = append(u.base, path.Base(t))
	u.pkg = append(u.pkg, pkg)
	u.importer = append(u.importer, t != ".")
	if t == "." {
		return n
	}
	u.bySuffix[t] = append(u.bySuffix[t], n)
	for i := 0; i < len(t); i++ {
		if t[i] == '/' {
			u.bySuffix[t[i+1:]] = append(u.bySuffix[t[i+1:]], n)
		}
	}
	return n
}

func (d *derived) buildUnits() *units {
	u := &units{id: map[string]int32{}, names: map[string]int32{}, byName: map[uint64][]int32{},
		bySuffix: map[string][]int32{}, imports: map[string][]int32{}}
	// by file info: its directory's and its module file's units
	type pair struct{ dir, mod int32 }
	of := map[*finfo]pair{}
	for _, f := range d.files {
		fi := d.infoOf(f)
		of[fi] = pair{u.unit(fi.dir, fi.pkg), u.unit(fi.modKey, fi.pkg)}
	}
	for id, r := range d.syms {
		if !d.live(int32(id)) {
			continue
		}
		name := r.sym().Name
		n, ok := u.names[name]
		if !ok {
			n = int32(len(u.names) + 1)
			u.names[name] = n
		}
		p, ok := of[r.fi]
		if !ok {
			p = pair{u.unit(r.fi.dir, r.fi.pkg), u.unit(r.fi.modKey, r.fi.pkg)}
			of[r.fi] = p
		}
		for _, t := range [2]int32{p.dir, p.mod} {
			k := uint64(n)<<32 | uint64(t)
			u.byName[k] = append(u.byName[k], int32(id))
		}
	}
	return u
}

// named returns the definitions called by name number n in unit t.
func (u *units) named(n, t int32) []int32 {
	if n <= 0 || t < 0 {
		return nil
	}
	return u.byName[uint64(n)<<32|uint64(t)]
}

// importUnits returns the units an import key names: those it ends with,
// and those that end with it.
func (u *units) importUnits(k string) []int32 {
	if ts, ok := u.imports[k]; ok {
		return ts
	}
	ts := append([]int32(nil), u.bySuffix[k]...)
	for i := 0; i < len(k); i++ {
		if k[i] == '/' && k[i+1:] != k {
			if t, ok := u.id[k[i+1:]]; ok && u.importer[t] {
				ts = append(ts, t)
			}
		}
	}
	u.imports[k] = ts
	return ts
}

// fileImports is what resolving one file's references needs of its
// imports.
type fileImports struct {
	units []int32         // the units it imports
	bases map[string]bool // the last element of each import: the names it may qualify with
}

func (d *derived) fileImports(u *units, f *fileRec) fileImports {
	fim := fileImports{bases: map[string]bool{}}
	seen := map[int32]bool{}
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
// here is the unit of f's directory, n the number of name in u.
func (d *derived) resolveRef(u *units, f *fileRec, fim fileImports, here int32, name string, n int32, qual string) []int32 {
	all := d.named(name)
	if len(all) == 0 {
		return nil
	}
	keep := func(id int32) bool { return true }
	if qual != "" {
		var pkg []int32
		for _, t := range fim.units {
			if p := u.pkg[t]; u.base[t] != qual && p != qual && !(len(p) > len(qual) && p[len(p)-len(qual)-1] == '.' && strings.HasSuffix(p, qual)) {
				continue
			}
			for _, id := range u.named(n, t) {
				if d.syms[id].sym().Parent == "" {
					pkg = append(pkg, id)
				}
			}
		}
		if len(pkg) > 0 {
			return dedup(pkg)
		}
		if fim.bases[qual] {
			return nil // a package the index does not hold
		}
		keep = func(id int32) bool { return d.syms[id].sym().Parent != "" }
	}
	var same, dir []int32
	for _, id := range u.named(n, here) {
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
		for _, id := range u.named(n, t) {
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
