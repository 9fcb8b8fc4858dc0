package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// workspace confines the file tools to the project root and the paths the
// user allowed.
type workspace struct {
	root    string // absolute, symbolic links resolved
	allowed []string
	arts    *Artifacts
	// guardGit keeps the file tools out of git directories; gitDirs are
	// the project's, found when the tools were made.
	guardGit bool
	gitDirs  []string
	// protected are paths no tool changes (Config.Protect), resolved.
	protected []string
}

// guard sets what the file tools must not change: git's files unless
// allowGit, and the protected paths.
func (w *workspace) guard(allowGit bool, protect []string) error {
	w.guardGit = !allowGit
	if w.guardGit {
		w.gitDirs = projectGitDirs(w.root)
	}
	for _, p := range protect {
		r, err := realPath(p)
		if err != nil {
			return fmt.Errorf("protected path %s: %w", p, err)
		}
		w.protected = append(w.protected, r)
	}
	return nil
}

func newWorkspace(root string, allow []string, arts *Artifacts) (*workspace, error) {
	if root == "" {
		return nil, errors.New("tools: no project root")
	}
	r, err := realPath(root)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	if fi, err := os.Stat(r); err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("project root %s is not a directory", root)
	}
	w := &workspace{root: r, arts: arts}
	for _, a := range allow {
		p, err := realPath(a)
		if err != nil {
			return nil, fmt.Errorf("allowed path %s: %w", a, err)
		}
		w.allowed = append(w.allowed, p)
	}
	return w, nil
}

// target is a path a tool call named, resolved.
type target struct {
	abs  string // absolute, symbolic links resolved
	show string // as the model should see it: relative to the root when inside
	// artifact is the artifact id when the path was artifact://ID.
	artifact string
}

// resolve turns the path a model gave into a target, refusing paths outside
// the root and the allowed paths. Artifacts are accepted when readOnly is
// set.
func (w *workspace) resolve(p string, readOnly bool) (target, error) {
	if strings.TrimSpace(p) == "" {
		return target{}, errors.New("the path is empty")
	}
	if id, ok := parseArtifactRef(p); ok {
		if !readOnly {
			return target{}, fmt.Errorf("%s is a stored artifact and cannot be changed; write to a file in the project instead", p)
		}
		if w.arts == nil {
			return target{}, fmt.Errorf("cannot read %s: this session stores no artifacts", p)
		}
		abs, err := w.arts.Path(id)
		if err != nil {
			return target{}, err
		}
		return target{abs: abs, show: artifactScheme + id, artifact: id}, nil
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(w.root, abs)
	}
	real, err := realPath(abs)
	if err != nil {
		return target{}, fmt.Errorf("cannot resolve %s: %w", p, err)
	}
	if !w.inside(real) {
		return target{}, fmt.Errorf("%s is outside the project root %s; the file tools may only use paths under it, or paths the user allowed", p, w.root)
	}
	tg := target{abs: real, show: w.show(real)}
	if !readOnly {
		for _, d := range w.protected {
			if within(real, d) {
				return target{}, fmt.Errorf("%s is in the memory store, which the file tools do not change; store a memory with the remember tool", tg.show)
			}
		}
		if w.guardGit && w.inGitDir(real) {
			return target{}, gitRefusal(tg.show)
		}
	}
	return tg, nil
}

// inside reports whether the resolved path p is under the root or an
// allowed path.
func (w *workspace) inside(p string) bool {
	if within(p, w.root) {
		return true
	}
	for _, a := range w.allowed {
		if within(p, a) {
			return true
		}
	}
	return false
}

// show returns p as the model should see it: relative to the root when
// under it, else absolute.
func (w *workspace) show(p string) string {
	if p == w.root {
		return "."
	}
	if within(p, w.root) {
		if rel, err := filepath.Rel(w.root, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return p
}

// within reports whether p is dir or under it; both are clean and absolute.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// realPath returns p made absolute and clean with the symbolic links of
// its longest existing prefix resolved; the part that does not exist yet is
// appended as it is. A path that will be created is thereby checked where
// it will really be.
func realPath(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	cur := p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			slices.Reverse(rest)
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}

// describe names a shown path in a sentence.
func describe(show string) string {
	if show == "." {
		return "the project root"
	}
	return show
}
