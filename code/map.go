package code

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// mapPerModule is the most definitions a module lists in the map.
const mapPerModule = 8

// Map returns the project's module tree — each directory that holds
// source files of a language the index parses, with its number of files —
// and under each its most central definitions (most referenced
// from elsewhere) with the first line of their doc, fitted under budget
// tokens as count measures them (nil count: 4 bytes a token; budget < 1:
// no limit). Directories come first when the budget is tight, the most
// central definitions of the project next; the text lists them in path
// order, so that the same index gives the same map. Directories of
// documents, data or assets only, and testdata directories with all under
// them (as the go tool leaves them out), are not in the map; their files
// are still searched.
func (ix *Index) Map(budget int, count func(string) int) Map {
	if count == nil {
		count = approxTokens
	}
	d, _ := ix.derive()
	g := d.graph()

	type mod struct {
		path  string
		files int
		syms  []int32
	}
	byDir := map[string]*mod{}
	code := map[string]bool{}
	for _, f := range d.files {
		dir := path.Dir(f.Path)
		if inMap(f) {
			code[dir] = true
		}
		m := byDir[dir]
		if m == nil {
			m = &mod{path: dir}
			byDir[dir] = m
		}
		m.files++
	}
	for dir := range byDir {
		if !code[dir] {
			delete(byDir, dir)
		}
	}
	central := make([]int32, 0, len(d.syms))
	for id, r := range d.syms {
		if g.indeg[id] > 0 && d.live(int32(id)) && !isTestPath(r.f.Path) && kindRank(r.sym().Kind) < 3 {
			central = append(central, int32(id))
		}
	}
	sort.SliceStable(central, func(a, b int) bool {
		x, y := central[a], central[b]
		if g.indeg[x] != g.indeg[y] {
			return g.indeg[x] > g.indeg[y]
		}
		rx, ry := d.syms[x], d.syms[y]
		if rx.f.Path != ry.f.Path {
			return rx.f.Path < ry.f.Path
		}
		return rx.sym().Line < ry.sym().Line
	})
	dirs := make([]*mod, 0, len(byDir))
	for _, m := range byDir {
		dirs = append(dirs, m)
	}

	used := 0
	fits := func(s string) bool {
		n := count(s)
		if budget > 0 && used+n > budget {
			return false
		}
		used += n
		return true
	}
	// Directories, the biggest first when not all fit.
	sort.Slice(dirs, func(a, b int) bool {
		if dirs[a].files != dirs[b].files {
			return dirs[a].files > dirs[b].files
		}
		return dirs[a].path < dirs[b].path
	})
	shown := map[string]*mod{}
	for _, m := range dirs {
		if !fits(modLine(m.path, m.files)) {
			continue
		}
		shown[m.path] = m
	}
	for _, id := range central {
		r := d.syms[id]
		m := shown[path.Dir(r.f.Path)]
		if m == nil || len(m.syms) >= mapPerModule {
			continue
		}
		if !fits(symLine(r)) {
			if budget > 0 && budget-used < 8 {
				break
			}
			continue
		}
		m.syms = append(m.syms, id)
	}

	var out Map
	keys := make([]string, 0, len(shown))
	for k := range shown {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		m := shown[k]
		b.WriteString(modLine(m.path, m.files))
		mo := Module{Path: m.path, Files: m.files}
		sort.SliceStable(m.syms, func(a, c int) bool {
			x, y := d.syms[m.syms[a]], d.syms[m.syms[c]]
			if x.f.Path != y.f.Path {
				return x.f.Path < y.f.Path
			}
			return x.sym().Line < y.sym().Line
		})
		for _, id := range m.syms {
			b.WriteString(symLine(d.syms[id]))
			mo.Symbols = append(mo.Symbols, ix.card(d, id, false, false))
		}
		out.Modules = append(out.Modules, mo)
	}
	out.Text = b.String()
	out.Tokens = count(out.Text)
	// Counting line by line may differ from counting the whole: trim the
	// least central lines until the whole fits.
	for budget > 0 && out.Tokens > budget && len(out.Modules) > 0 {
		out = trimMap(out, count)
	}
	return out
}

// inMap reports whether a file puts its directory in the map: source
// code of a language the index parses, outside testdata.
func inMap(f *fileRec) bool {
	return f.Lang != "" && !strings.Contains("/"+f.Path, "/testdata/")
}

// trimMap drops the last definition of the map's biggest module, or its
// last module when none has any.
func trimMap(m Map, count func(string) int) Map {
	best := -1
	for i, mo := range m.Modules {
		if len(mo.Symbols) > 0 && (best < 0 || len(mo.Symbols) > len(m.Modules[best].Symbols)) {
			best = i
		}
	}
	if best >= 0 {
		mo := &m.Modules[best]
		mo.Symbols = mo.Symbols[:len(mo.Symbols)-1]
	} else {
		m.Modules = m.Modules[:len(m.Modules)-1]
	}
	var b strings.Builder
	for _, mo := range m.Modules {
		b.WriteString(modLine(mo.Path, mo.Files))
		for _, c := range mo.Symbols {
			b.WriteString(cardLine(c.Signature, c.Kind, c.Name, c.Parent, c.Doc))
		}
	}
	m.Text = b.String()
	m.Tokens = count(m.Text)
	return m
}

func modLine(dir string, files int) string {
	if dir == "." {
		dir = ""
	}
	unit := "files"
	if files == 1 {
		unit = "file"
	}
	return fmt.Sprintf("%s/ (%d %s)\n", dir, files, unit)
}

func symLine(r symRef) string {
	s := r.sym()
	return cardLine(s.Signature, string(s.Kind), s.Name, s.Parent, s.Doc)
}

func cardLine(sig, kind, name, parent, doc string) string {
	if sig == "" {
		sig = kind + " " + name
		if parent != "" {
			sig = kind + " " + parent + "." + name
		}
	}
	l := "  " + sig
	if d := firstLine(doc); d != "" {
		l += "  // " + d
	}
	return l + "\n"
}

// firstLine returns the first line of a doc comment, at most 100 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 100 {
		s = s[:100]
		for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
			s = s[:len(s)-1]
		}
		if len(s) > 0 && s[len(s)-1] >= 0xC0 {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}

// approxTokens counts tokens as 4 bytes each, rounding up.
func approxTokens(s string) int { return (len(s) + 3) / 4 }
