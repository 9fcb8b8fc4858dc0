package code

import (
	"bufio"
	"bytes"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// derived holds the lookup tables built from a state on first need and
// dropped when the state changes.
type derived struct {
	files  []*fileRec         // the indexed files, in path order
	syms   []symRef           // every definition, file by file in path order
	byName map[string][]int32 // Name -> syms
	first  map[string]int32   // path -> index of its first definition in syms
	mods   map[string]string  // directory holding a go.mod -> its module path
	info   map[*fileRec]*finfo
	names  []string // the string table as the state's references use it
	dead   int      // definitions in syms of files since replaced or removed

	// Overlays of the three maps above, which a patch never changes: a key
	// here wins over the map (a first of -1, an info of nil: gone).
	oName  map[string][]int32
	oFirst map[string]int32
	oInfo  map[*fileRec]*finfo

	graphOnce sync.Once
	g         *graph
}

// symRef names one definition: the file and the index in its Symbols.
type symRef struct {
	f  *fileRec
	fi *finfo
	i  int32
}

// finfo is what resolving names needs of a file, computed once.
type finfo struct {
	dir, base string   // its directory, and the directory's name
	mod       string   // its module (see module)
	modKey    string   // its path without extension
	pkg       string   // the parser's Package
	suffixes  []string // proper '/'-suffixes of dir and modKey: "b/c" of "a/b/c"
}

func (r symRef) sym() *pSymbol { return &r.f.file().Symbols[r.i] }

// derive returns the lookup tables of the current state, building them if
// needed, and the state they describe.
func (ix *Index) derive() (*derived, *state) {
	ix.mu.RLock()
	st := ix.st
	ix.mu.RUnlock()
	ix.derMu.Lock()
	defer ix.derMu.Unlock()
	if ix.der != nil && ix.derSt == st {
		return ix.der, st
	}
	if ix.der != nil {
		if d := ix.der.patch(ix.root, ix.derSt, st); d != nil {
			ix.der, ix.derSt = d, st
			return d, st
		}
	}
	d := &derived{byName: map[string][]int32{}, first: map[string]int32{}, mods: map[string]string{}, info: map[*fileRec]*finfo{}}
	d.names = st.names.all()
	for _, f := range st.Files {
		if f.Skip == "" && path.Base(f.Path) == "go.mod" {
			if m := goModule(filepath.Join(ix.root, filepath.FromSlash(f.Path))); m != "" {
				d.mods[path.Dir(f.Path)] = m
			}
		}
	}
	for _, f := range st.Files {
		if f.Skip != "" {
			continue
		}
		d.files = append(d.files, f)
		fi := d.newInfo(f)
		d.info[f] = fi
		if f.file() == nil || len(f.file().Symbols) == 0 {
			continue
		}
		d.first[f.Path] = int32(len(d.syms))
		for i := range f.file().Symbols {
			id := int32(len(d.syms))
			d.syms = append(d.syms, symRef{f, fi, int32(i)})
			n := f.file().Symbols[i].Name
			d.byName[n] = append(d.byName[n], id)
		}
	}
	ix.der, ix.derSt = d, st
	return d, st
}

// maxPatch is the most files an update may change for the lookup tables
// to be patched rather than rebuilt.
const maxPatch = 256

// patch returns the tables of st made from d, the tables of old, when
// few files differ; nil when rebuilding is as cheap or a go.mod changed.
// d is not changed: its maps are copied, its slices only appended to
// beyond their length by copies.
func (d *derived) patch(root string, old, st *state) *derived {
	var gone, added []*fileRec
	i, j := 0, 0
	for i < len(old.Files) || j < len(st.Files) {
		switch {
		case j == len(st.Files) || (i < len(old.Files) && old.Files[i].Path < st.Files[j].Path):
			gone = append(gone, old.Files[i])
			i++
		case i == len(old.Files) || st.Files[j].Path < old.Files[i].Path:
			added = append(added, st.Files[j])
			j++
		default:
			if old.Files[i] != st.Files[j] {
				gone = append(gone, old.Files[i])
				added = append(added, st.Files[j])
			}
			i++
			j++
		}
		if len(added)+len(gone) > 2*maxPatch {
			return nil
		}
	}
	for _, f := range append(gone[:len(gone):len(gone)], added...) {
		if path.Base(f.Path) == "go.mod" {
			return nil
		}
	}
	n := &derived{
		syms: d.syms[:len(d.syms):len(d.syms)], byName: d.byName, first: d.first, mods: d.mods, info: d.info,
		names: st.names.all(), dead: d.dead,
		oName: maps.Clone(d.oName), oFirst: maps.Clone(d.oFirst), oInfo: maps.Clone(d.oInfo),
	}
	if n.oName == nil {
		n.oName, n.oFirst, n.oInfo = map[string][]int32{}, map[string]int32{}, map[*fileRec]*finfo{}
	}
	touched := map[string]bool{}
	for _, f := range gone {
		if n.infoOf(f) == nil {
			continue // a skipped file
		}
		n.oInfo[f] = nil
		if _, ok := n.firstOf(f.Path); ok && f.file() != nil {
			n.oFirst[f.Path] = -1
			n.dead += len(f.file().Symbols)
			for _, s := range f.file().Symbols {
				touched[s.Name] = true
			}
		}
	}
	for name := range touched {
		keep := []int32{}
		for _, id := range n.named(name) {
			if n.live(id) {
				keep = append(keep, id)
			}
		}
		n.oName[name] = keep
	}
	for _, f := range added {
		if f.Skip != "" {
			continue
		}
		fi := n.newInfo(f)
		n.oInfo[f] = fi
		if f.file() == nil || len(f.file().Symbols) == 0 {
			continue
		}
		n.oFirst[f.Path] = int32(len(n.syms))
		for i := range f.file().Symbols {
			id := int32(len(n.syms))
			n.syms = append(n.syms, symRef{f, fi, int32(i)})
			l := n.named(f.file().Symbols[i].Name)
			n.oName[f.file().Symbols[i].Name] = append(l[:len(l):len(l)], id)
		}
	}
	if len(n.oName)+len(n.oInfo) > maxOverlay {
		return nil
	}
	if n.dead > 4096 && n.dead > len(n.syms)/4 {
		return nil
	}
	n.files = make([]*fileRec, 0, len(d.files)+len(added))
	for _, f := range st.Files {
		if f.Skip == "" {
			n.files = append(n.files, f)
		}
	}
	return n
}

// maxOverlay bounds the overlays of patched tables: past it they are
// rebuilt.
const maxOverlay = 20000

// live reports whether definition id belongs to a file of the state.
func (d *derived) live(id int32) bool { return d.infoOf(d.syms[id].f) != nil }

// named returns the definitions called name.
func (d *derived) named(name string) []int32 {
	if v, ok := d.oName[name]; ok {
		return v
	}
	return d.byName[name]
}

// firstOf returns the id of the first definition of the file at p.
func (d *derived) firstOf(p string) (int32, bool) {
	if v, ok := d.oFirst[p]; ok {
		return v, v >= 0
	}
	v, ok := d.first[p]
	return v, ok
}

// infoOf returns what resolving names needs of f; nil when f is not one
// of the state's indexed files.
func (d *derived) infoOf(f *fileRec) *finfo {
	if v, ok := d.oInfo[f]; ok {
		return v
	}
	return d.info[f]
}

// goModule reads the module path a go.mod declares.
func goModule(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module"); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// fileSyms returns the ids of f's definitions.
func (d *derived) fileSyms(f *fileRec) []int32 {
	start, ok := d.firstOf(f.Path)
	if !ok {
		return nil
	}
	ids := make([]int32, len(f.file().Symbols))
	for i := range ids {
		ids[i] = start + int32(i)
	}
	return ids
}

// innermost returns the id of the innermost definition of f whose span
// holds line, or -1.
func (d *derived) innermost(f *fileRec, line int) int32 {
	best := int32(-1)
	bestLen := int(^uint(0) >> 1)
	for _, id := range d.fileSyms(f) {
		s := d.syms[id].sym()
		if s.Line <= line && line <= max(s.EndLine, s.Line) {
			if n := max(s.EndLine, s.Line) - s.Line; n < bestLen || (n == bestLen && s.Line >= d.syms[best].sym().Line) {
				best, bestLen = id, n
			}
		}
	}
	return best
}

func (d *derived) newInfo(f *fileRec) *finfo {
	fi := &finfo{dir: path.Dir(f.Path), modKey: strings.TrimSuffix(f.Path, path.Ext(f.Path)), mod: d.moduleOf(f)}
	fi.base = path.Base(fi.dir)
	if f.file() != nil {
		fi.pkg = f.file().Package
	}
	for _, t := range []string{fi.dir, fi.modKey} {
		for i := 0; i < len(t); i++ {
			if t[i] == '/' {
				fi.suffixes = append(fi.suffixes, t[i+1:])
			}
		}
	}
	return fi
}

// module returns the module a file belongs to (see moduleOf).
func (d *derived) module(f *fileRec) string {
	if fi := d.infoOf(f); fi != nil {
		return fi.mod
	}
	return d.moduleOf(f)
}

// moduleOf returns the module a file belongs to, as its language names
// modules: a Go package's import path, a Python dotted module, a
// JavaScript or TypeScript file without its extension, a Rust mod path,
// else the file's directory.
func (d *derived) moduleOf(f *fileRec) string {
	dir := path.Dir(f.Path)
	switch f.Lang {
	case "go":
		for m := dir; ; m = path.Dir(m) {
			if mp, ok := d.mods[m]; ok {
				rel := strings.TrimPrefix(strings.TrimPrefix(dir, m), "/")
				if m == "." {
					rel = strings.TrimPrefix(dir, ".")
				}
				return strings.TrimSuffix(mp+"/"+rel, "/")
			}
			if m == "." || m == "/" {
				break
			}
		}
		return dir
	case "python", "rust":
		if f.file() != nil && f.file().Package != "" {
			return f.file().Package
		}
		if f.Lang == "python" {
			return strings.ReplaceAll(strings.TrimSuffix(f.Path, path.Ext(f.Path)), "/", ".")
		}
	case "javascript", "typescript", "tsx":
		return strings.TrimSuffix(f.Path, path.Ext(f.Path))
	}
	return dir
}

// kindRank orders kinds for choosing among definitions of one name: types
// and functions before methods, before variables and fields.
func kindRank(k pKind) int {
	switch k {
	case "func", "class", "struct", "interface", "type", "enum", "trait", "module", "macro":
		return 0
	case "method", "impl":
		return 1
	case "const", "var":
		return 2
	}
	return 3
}

func isTestPath(p string) bool {
	b := path.Base(p)
	return strings.HasSuffix(b, "_test.go") || strings.HasPrefix(b, "test_") || strings.Contains(b, ".test.") || strings.Contains(b, ".spec.") || strings.Contains("/"+p, "/testdata/")
}

// sortByRelevance orders definitions of a name: non-test files,
// exported, by kind, shallow paths, then path and line.
func (d *derived) sortByRelevance(ids []int32) {
	sort.SliceStable(ids, func(a, b int) bool {
		x, y := d.syms[ids[a]], d.syms[ids[b]]
		if tx, ty := isTestPath(x.f.Path), isTestPath(y.f.Path); tx != ty {
			return !tx
		}
		sx, sy := x.sym(), y.sym()
		if sx.Exported != sy.Exported {
			return sx.Exported
		}
		if kx, ky := kindRank(sx.Kind), kindRank(sy.Kind); kx != ky {
			return kx < ky
		}
		if dx, dy := strings.Count(x.f.Path, "/"), strings.Count(y.f.Path, "/"); dx != dy {
			return dx < dy
		}
		if x.f.Path != y.f.Path {
			return x.f.Path < y.f.Path
		}
		return sx.Line < sy.Line
	})
}
