package code

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"strings"
	"sync"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
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
// those SkipDir names and those git ignores (its .gitignore files,
// info/exclude and core.excludesFile: see baseIgnores). Each .gitignore is read once, so a watcher
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
		ps = baseIgnores(f.root)
	} else {
		ps = f.patterns(dir[:len(dir)-1])
	}
	if more := readIgnore(filepath.Join(f.root, filepath.FromSlash(key), ".gitignore"), dir); len(more) > 0 {
		ps = append(ps[:len(ps):len(ps)], more...)
	}
	f.pats[key] = ps
	return ps
}

// baseIgnores returns the ignore patterns git applies under root besides
// root's own .gitignore files, lowest precedence first: the file
// core.excludesFile names (by default $XDG_CONFIG_HOME/git/ignore), the
// repository's info/exclude (in the main repository's directory for a
// linked work tree), and, when root lies below the top of its work tree,
// the .gitignore files of the directories above it, anchored at the top.
// Patterns that would ignore root itself are dropped: the project was
// asked for by name. Outside a repository there are none.
func baseIgnores(root string) []gitignore.Pattern {
	top, _, common := GitDirs(root)
	if top == "" {
		return nil
	}
	var prefix []string
	if rel, err := filepath.Rel(top, root); err == nil && rel != "." {
		prefix = strings.Split(filepath.ToSlash(rel), "/")
	}
	var ps []gitignore.Pattern
	if f := excludesFile(top, common); f != "" {
		ps = readPatterns(f, nil, true)
	}
	ps = append(ps, readPatterns(filepath.Join(common, "info", "exclude"), nil, true)...)
	for i := range prefix {
		ps = append(ps, readIgnore(filepath.Join(top, filepath.FromSlash(strings.Join(prefix[:i], "/")), ".gitignore"), prefix[:i])...)
	}
	if len(prefix) == 0 || len(ps) == 0 {
		return ps
	}
	if gitignore.NewMatcher(ps).Match(prefix, true) {
		return nil
	}
	for i, p := range ps {
		ps[i] = under{prefix, p}
	}
	return ps
}

// under matches a pattern of the work tree's top against paths relative
// to a directory below it.
type under struct {
	prefix []string
	p      gitignore.Pattern
}

func (u under) Match(path []string, isDir bool) gitignore.MatchResult {
	full := make([]string, 0, len(u.prefix)+len(path))
	return u.p.Match(append(append(full, u.prefix...), path...), isDir)
}

// GitDirs finds the work tree holding dir: its top directory, its git
// directory and the directory of the repository it belongs to (for a
// linked work tree or a submodule, whose .git is a file, the git
// directory is its own and the common one the main one's). "" when there
// is none.
func GitDirs(dir string) (top, gitDir, common string) {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				return d, p, p
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return "", "", ""
			}
			g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
			if !ok {
				return "", "", ""
			}
			g = strings.TrimSpace(g)
			if !filepath.IsAbs(g) {
				g = filepath.Join(d, g)
			}
			common = g
			if b, err := os.ReadFile(filepath.Join(g, "commondir")); err == nil {
				common = strings.TrimSpace(string(b))
				if !filepath.IsAbs(common) {
					common = filepath.Join(g, common)
				}
			}
			return d, g, filepath.Clean(common)
		}
		up := filepath.Dir(d)
		if up == d {
			return "", "", ""
		}
		d = up
	}
}

// excludesFile is the path core.excludesFile gives, as git reads it: the
// system, global and repository configuration files in turn, the last
// setting winning; unset, $XDG_CONFIG_HOME/git/ignore (~/.config/git/ignore
// without XDG_CONFIG_HOME). A leading ~/ is the home directory; a relative
// path is taken from the top of the work tree. Include directives are not
// followed.
func excludesFile(top, common string) string {
	home := os.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var files []string
	if !gitBool(os.Getenv("GIT_CONFIG_NOSYSTEM")) {
		files = append(files, cmp.Or(os.Getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig"))
	}
	if g, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		files = append(files, g)
	} else {
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	files = append(files, filepath.Join(common, "config"))
	val, set := "", false
	for _, f := range files {
		if v, ok := configValue(f, "core", "excludesfile"); ok {
			val, set = v, true
		}
	}
	switch {
	case !set:
		if xdg == "" {
			return ""
		}
		return filepath.Join(xdg, "git", "ignore")
	case val == "":
		return ""
	case val == "~" || strings.HasPrefix(val, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, val[1:])
	case strings.HasPrefix(val, "~"):
		return "" // ~user: another user's home, not looked up
	case !filepath.IsAbs(val):
		return filepath.Join(top, val)
	}
	return val
}

// configValue reads one key of a git configuration file; ok is false when
// the file cannot be read or does not set it.
func configValue(file, section, key string) (string, bool) {
	if file == "" {
		return "", false
	}
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		return "", false // not a device or a pipe: /dev/null is fine unread
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", false
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return "", false
	}
	if !cfg.HasSection(section) {
		return "", false
	}
	s := cfg.Section(section)
	if !s.HasOption(key) {
		return "", false
	}
	return s.Option(key), true
}

// gitBool reads a git boolean as git does for its environment: true, yes,
// on or a non-zero number.
func gitBool(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "false", "no", "off", "0":
		return false
	}
	return true
}
