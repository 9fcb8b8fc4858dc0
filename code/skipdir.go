package code

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// skipDirs are directories never indexed, ignored or not: version control
// data, dependencies installed into the tree, and caches.
var skipDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".jj": true,
	"node_modules": true, "vendor": true, "__pycache__": true,
	".venv": true, ".tox": true, ".mypy_cache": true, ".pytest_cache": true,
}

// SkipDir reports whether a directory of this name is never indexed,
// wherever it is and whatever .gitignore says: the index's walk and a
// watcher of the tree leave it out alike.
func SkipDir(name string) bool { return skipDirs[name] }

// DirFilter tells which directories of a project the index leaves out:
// those SkipDir names and those its .gitignore files (and
// .git/info/exclude) ignore. Each .gitignore is read once, so a watcher
// may ask about every directory of a large tree; NewDirFilter again after
// a .gitignore changes. It is safe for concurrent use.
type DirFilter struct {
	root string
	mu   sync.Mutex
	pats map[string][]gitignore.Pattern // slash dir ("" = root) -> patterns in effect inside it
}

// NewDirFilter returns the filter of the project at root.
func NewDirFilter(root string) *DirFilter {
	return &DirFilter{root: root, pats: map[string][]gitignore.Pattern{}}
}

// Skip reports whether the directory rel (a slash path relative to the
// root, not ".") is left out of the index, by its name or by an ignore
// rule on the way to it.
func (f *DirFilter) Skip(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if skipDirs[p] {
			return true
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range parts {
		ps := f.patterns(parts[:i])
		if len(ps) > 0 && gitignore.NewMatcher(ps).Match(parts[:i+1], true) {
			return true
		}
	}
	return false
}

// patterns returns the ignore patterns in effect inside the directory
// dir: its parents' and its own .gitignore's.
func (f *DirFilter) patterns(dir []string) []gitignore.Pattern {
	key := strings.Join(dir, "/")
	if ps, ok := f.pats[key]; ok {
		return ps
	}
	var ps []gitignore.Pattern
	if len(dir) == 0 {
		ps = readIgnore(filepath.Join(f.root, ".git", "info", "exclude"), nil)
	} else {
		ps = f.patterns(dir[:len(dir)-1])
	}
	if more := readIgnore(filepath.Join(f.root, filepath.FromSlash(key), ".gitignore"), dir); len(more) > 0 {
		ps = append(ps[:len(ps):len(ps)], more...)
	}
	f.pats[key] = ps
	return ps
}
