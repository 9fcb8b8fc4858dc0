package code

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// gitHead reads the commit HEAD points to in the repository holding root
// straight from its files, so that an update can tell the history did not
// move without running git. It gives "" whenever it is unsure (an unusual
// layout, no commit yet): the history is then read the usual way. repo is
// false when no directory from root up holds a .git: there is no history.
func gitHead(root string) (head string, repo bool) {
	h := headOf(root)
	if h == "\x00" {
		return "", false
	}
	return h, true
}

func headOf(root string) string {
	gitDir := ""
	for d := root; ; {
		p := filepath.Join(d, ".git")
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				gitDir = p
			} else if b, err := os.ReadFile(p); err == nil {
				// A worktree or submodule: "gitdir: <path>".
				g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
				if !ok {
					return ""
				}
				if !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				gitDir = g
			}
			break
		}
		up := filepath.Dir(d)
		if up == d {
			return "\x00"
		}
		d = up
	}
	if gitDir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		return hashOrEmpty(head)
	}
	common := gitDir
	if c, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	for _, dir := range []string{gitDir, common} {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(ref))); err == nil {
			return hashOrEmpty(strings.TrimSpace(string(b)))
		}
	}
	b, err = os.ReadFile(filepath.Join(common, "packed-refs"))
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if h, name, ok := strings.Cut(sc.Text(), " "); ok && name == ref {
			return hashOrEmpty(h)
		}
	}
	return ""
}

func hashOrEmpty(s string) string {
	if len(s) != 40 && len(s) != 64 {
		return ""
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return ""
		}
	}
	return s
}
