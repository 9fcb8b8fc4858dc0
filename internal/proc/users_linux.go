package proc

import (
	"os"
	"path/filepath"
	"strings"
)

// GitAt reports whether a process of this host has the file at path open,
// or is a git command working in one of dirs (its working directory is
// inside one of them: git moves to the top of the work tree, and while
// `git commit` waits for its editor or a hook it holds .git/index.lock
// without keeping it open). known is false when /proc cannot tell.
// Processes of other users, whose file descriptors cannot be read, are not
// seen: the store is private to its user.
func GitAt(path string, dirs ...string) (using, known bool) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	target := resolved(path)
	var within []string
	for _, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if abs, err := filepath.Abs(d); err == nil {
			within = append(within, abs)
		}
	}
	for _, p := range procs {
		pid := p.Name()
		if pid == "" || pid[0] < '0' || pid[0] > '9' {
			continue
		}
		base := "/proc/" + pid
		if comm, err := os.ReadFile(base + "/comm"); err == nil && isGit(strings.TrimSpace(string(comm))) {
			if cwd, err := os.Readlink(base + "/cwd"); err == nil && inside(cwd, within) {
				return true, true
			}
		}
		fds, err := os.ReadDir(base + "/fd")
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(base + "/fd/" + fd.Name()); err == nil && l == target {
				return true, true
			}
		}
	}
	return false, true
}

// isGit tells git and its helpers (git-remote-https …) by their names.
func isGit(comm string) bool { return comm == "git" || strings.HasPrefix(comm, "git-") }

// resolved is path with its symbolic links resolved, as /proc shows it.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(r, filepath.Base(abs))
	}
	return abs
}

func inside(dir string, roots []string) bool {
	for _, r := range roots {
		if dir == r || strings.HasPrefix(dir, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
