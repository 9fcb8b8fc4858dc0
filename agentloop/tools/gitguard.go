package tools

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/internal/atomicfile"
)

// Git runs commands named in files of the repository's git directory: the
// configuration (core.fsmonitor, core.hooksPath, core.sshCommand, filter
// drivers, include.path…) and the hooks. A command the agent writes there
// runs at the user's next git status or git commit, outside any sandbox.
// So, unless the user allows it (Config.AllowGitConfig), the file tools
// change nothing in a git directory, and bash's commands keep git's
// configuration and hooks as they found them: see gitGuard.

// isGitDirName reports whether a path element names a git directory (or
// the file that points to one): .git, in any case, as a file system that
// ignores case would take it.
func isGitDirName(name string) bool { return strings.EqualFold(name, ".git") }

// gitRefusal explains to the model why a file tool does not write path.
func gitRefusal(show string) error {
	return fmt.Errorf("%s is in a git directory; the file tools do not change git's files, whose configuration and hooks run commands outside the sandbox at the user's next git command. Use git in bash for changes to the repository (commits, branches); the user can allow changes to git's own files with mira-agent --allow-git-config", show)
}

// inGitDir reports whether the resolved path p lies in a git directory: a
// path element named .git below the root or the allowed path holding it,
// or one of the project's git directories found outside (a linked
// worktree's, its common directory).
func (w *workspace) inGitDir(p string) bool {
	for _, d := range w.gitDirs {
		if within(p, d) {
			return true
		}
	}
	base := w.root
	if !within(p, base) {
		base = ""
		for _, a := range w.allowed {
			if within(p, a) {
				base = a
				break
			}
		}
	}
	if base == "" {
		return false
	}
	if isGitDirName(filepath.Base(base)) {
		return true
	}
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return true
	}
	return slices.ContainsFunc(strings.Split(rel, string(filepath.Separator)), isGitDirName)
}

// projectGitDirs returns the git directories of the repository whose
// working tree is root: root/.git, or the directory a .git file names and
// its common directory; and within each, the git directories of
// submodules (modules/…) and the private directories of linked worktrees
// (worktrees/…). None when root has no .git.
func projectGitDirs(root string) []string {
	dot := filepath.Join(root, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return nil
	}
	var dirs []string
	add := func(d string) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	switch {
	case fi.IsDir():
		add(dot)
	case fi.Mode().IsRegular():
		if g, ok := readGitPointer(dot, "gitdir:"); ok {
			if !filepath.IsAbs(g) {
				g = filepath.Join(root, g)
			}
			add(g)
		}
	}
	for i := 0; i < len(dirs); i++ { // dirs grows as common directories are found
		d := dirs[i]
		if c, ok := readGitPointer(filepath.Join(d, "commondir"), ""); ok {
			if !filepath.IsAbs(c) {
				c = filepath.Join(d, c)
			}
			add(c)
		}
	}
	for _, d := range slices.Clone(dirs) {
		for _, sub := range nestedGitDirs(d) {
			add(sub)
		}
	}
	return dirs
}

// submoduleLinks returns the .git files of the submodules checked out
// from the git directories dirs: each submodule's git directory names its
// working tree in core.worktree, and the .git file there points back. A
// command that pointed one elsewhere would have the user's next git
// status, which looks into submodules, read another configuration.
func submoduleLinks(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		wt := coreWorktree(filepath.Join(d, "config"))
		if wt == "" {
			continue
		}
		if !filepath.IsAbs(wt) {
			wt = filepath.Join(d, wt)
		}
		link := filepath.Join(wt, ".git")
		if fi, err := os.Lstat(link); err == nil && fi.Mode().IsRegular() {
			out = append(out, link)
		}
	}
	return out
}

// coreWorktree reads core.worktree from a git configuration file, or "".
func coreWorktree(config string) string {
	b, err := os.ReadFile(config)
	if err != nil || len(b) > maxGuardedFile {
		return ""
	}
	core := false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			core = strings.EqualFold(strings.TrimSpace(strings.Trim(line, "[]")), "core")
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && core && strings.EqualFold(strings.TrimSpace(k), "worktree") {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return ""
}

// readGitPointer reads a one-line file of git's (a .git file, commondir),
// without the prefix.
func readGitPointer(path, prefix string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4096 {
		return "", false
	}
	s, ok := strings.CutPrefix(strings.TrimSpace(string(b)), prefix)
	s = strings.TrimSpace(s)
	return s, ok && s != ""
}

// maxNestedGitDirs bounds the submodule and worktree directories looked at.
const maxNestedGitDirs = 200

// nestedGitDirs returns the submodule git directories under d/modules (at
// any depth: a submodule's name may hold slashes, and submodules have
// their own) and the linked worktrees' directories under d/worktrees.
func nestedGitDirs(d string) []string {
	var out []string
	if ents, err := os.ReadDir(filepath.Join(d, "worktrees")); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, filepath.Join(d, "worktrees", e.Name()))
			}
		}
	}
	filepath.WalkDir(filepath.Join(d, "modules"), func(p string, e fs.DirEntry, err error) error {
		if err != nil || len(out) >= maxNestedGitDirs {
			return filepath.SkipDir
		}
		if !e.IsDir() {
			return nil
		}
		switch e.Name() {
		case "objects", "refs", "logs", "hooks", "info", "lfs":
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(p, "HEAD")); err == nil {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// guardedNames are the entries of a git directory that bash's commands
// may not change: the configuration, the hooks, and commondir, which
// would make git read another directory's configuration.
var guardedNames = []string{"config", "config.worktree", "commondir", "hooks"}

// gitGuard keeps the project's git configuration and hooks from bash's
// commands. Before a command it records them (snapshot); after it, it
// puts back whatever the command changed (restore). Where the kernel
// lets the command run in a mount namespace of its own, the command
// cannot change them in the first place (mounts), and the check after it
// catches only what no mount can hold: a file created where there was
// none.
type gitGuard struct {
	root string
	// dot is root/.git as found before the command, when there was one.
	dot  *fileState
	dirs []string
	// links are the submodules' .git files (submoduleLinks).
	links   []string
	entries map[string]fileState
}

// fileState is one path as a snapshot found it.
type fileState struct {
	kind    fs.FileMode // 0 for a regular file, fs.ModeDir, fs.ModeSymlink; ^0 when absent
	perm    fs.FileMode
	content []byte
	target  string
	dev     uint64
	ino     uint64
}

const absent = ^fs.FileMode(0)

// maxGuardedFile bounds what a snapshot keeps of one file; larger ones
// are compared by identity and size only.
const maxGuardedFile = 1 << 20

func statePath(p string) fileState {
	fi, err := os.Lstat(p)
	if err != nil {
		return fileState{kind: absent}
	}
	s := fileState{kind: fi.Mode().Type(), perm: fi.Mode().Perm()}
	s.dev, s.ino = fileID(fi)
	switch {
	case s.kind == fs.ModeSymlink:
		s.target, _ = os.Readlink(p)
	case s.kind == 0 && fi.Size() <= maxGuardedFile:
		s.content, _ = os.ReadFile(p)
	}
	return s
}

func (a fileState) same(b fileState) bool {
	return a.kind == b.kind && a.perm == b.perm && bytes.Equal(a.content, b.content) && a.target == b.target &&
		(a.kind != fs.ModeDir || (a.dev == b.dev && a.ino == b.ino))
}

// newGitGuard records the project's git configuration and hooks as they
// are now.
func newGitGuard(root string) *gitGuard {
	g := &gitGuard{root: root, entries: map[string]fileState{}}
	if s := statePath(filepath.Join(root, ".git")); s.kind != absent {
		g.dot = &s
	}
	g.dirs = projectGitDirs(root)
	g.links = submoduleLinks(g.dirs)
	for _, p := range g.paths() {
		g.entries[p] = statePath(p)
	}
	return g
}

// paths lists the guarded paths as they are now: every guarded entry of
// the git directories and everything under their hooks.
func (g *gitGuard) paths() []string {
	ps := slices.Clone(g.links)
	for _, d := range g.dirs {
		for _, n := range guardedNames {
			ps = append(ps, filepath.Join(d, n))
		}
		hooks := filepath.Join(d, "hooks")
		filepath.WalkDir(hooks, func(p string, e fs.DirEntry, err error) error {
			if err == nil && p != hooks {
				ps = append(ps, p)
			}
			return nil
		})
	}
	return ps
}

// gitMounts returns what the namespace of a confined command holds in place:
// the git directories, mounted on themselves so that they cannot be
// renamed or removed, and their configuration and hooks, read-only. A
// missing hooks directory is created first, so that none can be made.
func gitMounts(dirs []string) (bind, readOnly []string) {
	for _, d := range dirs {
		bind = append(bind, d)
		hooks := filepath.Join(d, "hooks")
		if _, err := os.Lstat(hooks); errors.Is(err, fs.ErrNotExist) {
			os.Mkdir(hooks, 0o755)
		}
		for _, n := range guardedNames {
			if _, err := os.Lstat(filepath.Join(d, n)); err == nil {
				readOnly = append(readOnly, filepath.Join(d, n))
			}
		}
	}
	readOnly = append(readOnly, submoduleLinks(dirs)...)
	return bind, readOnly
}

// restore puts back what a command changed of the recorded configuration
// and hooks, and sets aside a git directory that appeared at the root
// with a configuration or hooks that run commands. It returns what it did,
// for the model, or "" when nothing had changed.
func (g *gitGuard) restore() string {
	var done []string
	dot := filepath.Join(g.root, ".git")
	now := statePath(dot)
	switch {
	case g.dot == nil && now.kind != absent:
		// A repository the command made: kept if git would run
		// nothing from it.
		if why := unsafeNewGit(g.root); why != "" {
			aside := setAside(dot)
			done = append(done, fmt.Sprintf("the new .git was moved to %s: %s", filepath.Base(aside), why))
		}
		return report(done)
	case g.dot != nil && (now.kind != g.dot.kind || now.dev != g.dot.dev || now.ino != g.dot.ino ||
		(now.kind == 0 && !bytes.Equal(now.content, g.dot.content))):
		done = append(done, g.restoreDot(now))
	}
	done = append(done, g.refuseGitlinks()...)
	for _, p := range g.paths() {
		if _, ok := g.entries[p]; !ok {
			if err := os.RemoveAll(p); err == nil {
				done = append(done, "removed "+g.show(p))
			}
		}
	}
	// In order, so that a directory is back before its files.
	for _, p := range slices.Sorted(maps.Keys(g.entries)) {
		was := g.entries[p]
		if statePath(p).same(was) {
			continue
		}
		if err := putBack(p, was); err != nil {
			done = append(done, fmt.Sprintf("could not restore %s: %v", g.show(p), err))
			continue
		}
		if was.kind == absent {
			done = append(done, "removed "+g.show(p))
		} else {
			done = append(done, "restored "+g.show(p))
		}
	}
	return report(done)
}

// refuseGitlinks sets aside the git directory of every submodule in the
// index that is none of those recorded before the command and whose
// configuration or hooks run commands: git status looks into each
// submodule with git, which would run them. A nested repository with a
// commit that git add takes in is such a submodule.
func (g *gitGuard) refuseGitlinks() []string {
	if g.dot == nil || g.dot.kind != fs.ModeDir {
		return nil
	}
	cmd := exec.Command("git", "-c", "core.fsmonitor=false", "ls-files", "--stage", "-z")
	cmd.Dir = g.root
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	var done []string
	for rec := range bytes.SplitSeq(out, []byte{0}) {
		// "160000 <object> <stage>\t<path>"
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok || !bytes.HasPrefix(meta, []byte("160000 ")) {
			continue
		}
		wt := filepath.Join(g.root, filepath.FromSlash(string(path)))
		link := filepath.Join(wt, ".git")
		if slices.Contains(g.links, link) {
			continue
		}
		fi, err := os.Lstat(link)
		if err != nil {
			continue
		}
		dir := link
		if !fi.IsDir() {
			p, ok := readGitPointer(link, "gitdir:")
			if !ok {
				continue
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(wt, p)
			}
			dir = p
		}
		if r, err := filepath.EvalSymlinks(dir); err == nil && slices.Contains(g.dirs, r) {
			continue
		}
		if why := unsafeGitDir(dir); why != "" {
			aside := setAside(link)
			done = append(done, fmt.Sprintf("the submodule %s's .git was moved to %s: %s", path, g.show(aside), why))
		}
	}
	return done
}

// restoreDot puts the project's .git back after a command renamed or
// replaced it: the original is looked for among the root's entries by
// its identity, and what took its place is set aside.
func (g *gitGuard) restoreDot(now fileState) string {
	dot := filepath.Join(g.root, ".git")
	if g.dot.kind != fs.ModeDir {
		// A .git file (a linked worktree) or link: put back.
		if now.kind != absent {
			setAside(dot)
		}
		if err := putBack(dot, *g.dot); err != nil {
			return fmt.Sprintf("could not restore .git: %v", err)
		}
		return "restored .git"
	}
	var orig string
	ents, _ := os.ReadDir(g.root)
	for _, e := range ents {
		p := filepath.Join(g.root, e.Name())
		if s := statePath(p); s.kind == fs.ModeDir && s.dev == g.dot.dev && s.ino == g.dot.ino {
			orig = p
			break
		}
	}
	msg := ""
	if now.kind != absent {
		msg = "the new .git was moved to " + filepath.Base(setAside(dot)) + "; "
	}
	if orig == "" {
		return msg + "the original .git was moved where it cannot be found: put it back by hand"
	}
	if err := os.Rename(orig, dot); err != nil {
		return msg + fmt.Sprintf("could not move %s back to .git: %v", filepath.Base(orig), err)
	}
	return msg + "moved " + filepath.Base(orig) + " back to .git"
}

func (g *gitGuard) show(p string) string {
	if rel, err := filepath.Rel(g.root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

func report(done []string) string {
	if len(done) == 0 {
		return ""
	}
	if len(done) > 6 {
		done = append(done[:5], fmt.Sprintf("%d more", len(done)-5))
	}
	return "[The command changed git's configuration, hooks or directory, which run commands outside the sandbox at the user's next git command; that was undone: " +
		strings.Join(done, "; ") + ". Do not try again: ask the user, who can allow it with mira-agent --allow-git-config.]\n"
}

// putBack writes the recorded state of p back in place of what is there.
func putBack(p string, was fileState) error {
	if s := statePath(p); s.kind != absent && (s.kind != was.kind || was.kind != fs.ModeDir) {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	switch was.kind {
	case absent:
		return nil
	case fs.ModeDir:
		if err := os.MkdirAll(p, was.perm); err != nil {
			return err
		}
		return os.Chmod(p, was.perm)
	case fs.ModeSymlink:
		return os.Symlink(was.target, p)
	case 0:
		if err := atomicfile.Write(p, was.content, was.perm, true); err != nil {
			return err
		}
		return os.Chmod(p, was.perm)
	}
	return fmt.Errorf("cannot restore a file of type %v", was.kind)
}

// setAside renames p to a name git does not look at, and returns it.
func setAside(p string) string {
	aside := fmt.Sprintf("%s.refused-%s", p, time.Now().UTC().Format("20060102T150405.000000000"))
	if err := os.Rename(p, aside); err != nil {
		os.RemoveAll(p)
	}
	return aside
}

// safeConfigKeys are the settings a repository git init made may hold
// without running anything: git's own and where it fetches from.
var safeConfigKeys = []string{
	"core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
	"core.ignorecase", "core.precomposeunicode", "core.symlinks", "core.autocrlf", "core.eol",
	"extensions.objectformat", "extensions.refstorage", "init.defaultbranch",
	"user.name", "user.email",
}

// unsafeNewGit says why the git directory the command made at root may
// run something at the user's next git command, or "".
func unsafeNewGit(root string) string {
	dot := filepath.Join(root, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return ""
	}
	if !fi.IsDir() {
		return ".git is not a directory"
	}
	return unsafeGitDir(dot)
}

// unsafeGitDir says why the git directory dot, which the command may have
// made, may run something at the user's next git command, or "".
func unsafeGitDir(dot string) string {
	for _, n := range []string{"commondir", "config.worktree"} {
		if _, err := os.Lstat(filepath.Join(dot, n)); err == nil {
			return "it has a " + n
		}
	}
	if ents, err := os.ReadDir(filepath.Join(dot, "hooks")); err == nil {
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".sample") {
				return "it has the hook " + e.Name()
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dot, "modules")); err == nil {
		return "it has submodules"
	}
	f, err := os.Open(filepath.Join(dot, "config"))
	if err != nil {
		return ""
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "its configuration cannot be read"
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			if rest := strings.TrimSpace(line[end+1:]); rest != "" {
				line = rest
			} else {
				continue
			}
		}
		name, _, _ := strings.Cut(line, "=")
		key := section + "." + strings.ToLower(strings.TrimSpace(name))
		base := key[strings.LastIndexByte(key, '.')+1:]
		switch {
		case strings.HasPrefix(section, "remote ") && (base == "url" || base == "fetch" || base == "pushurl"),
			strings.HasPrefix(section, "branch ") && (base == "remote" || base == "merge"):
			continue
		}
		if !slices.Contains(safeConfigKeys, key) {
			return "its configuration sets " + key
		}
	}
	return ""
}
