package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// globTool is the glob tool.
type globTool struct{ e *env }

var globSchema = object(map[string]jsonschema.Definition{
	"pattern": {Type: jsonschema.String, Description: "The pattern, such as **/*.go, src/**/*.{ts,tsx} or cmd/*/main.go. * and ? match within one path segment, ** any number of segments."},
	"path":    {Type: jsonschema.String, Description: "The directory the pattern is relative to. Default: the project root."},
}, "pattern")

// Definition implements Tool.
func (globTool) Definition() openai.Tool {
	return schemaTool("glob", "List the files whose paths match a glob pattern, most recently modified first. .git is skipped.", globSchema)
}

// Run implements Tool.
func (t globTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := decodeArgs(args, globSchema, &a); err != nil {
		return errorf("%v", err), nil
	}
	if strings.TrimSpace(a.Pattern) == "" {
		return errorf("pattern is empty"), nil
	}
	dir := cmp.Or(a.Path, ".")
	if _, ok := parseArtifactRef(dir); ok {
		return errorf("glob lists project files; read artifacts with read_file"), nil
	}
	pats, err := expandBraces(a.Pattern)
	if err != nil {
		return errorf("%v", err), nil
	}
	// Each pattern is walked from its longest literal directory prefix,
	// which is also where the confinement check applies: "../x/*" is
	// refused there, and "src/**" walks only src.
	type walk struct {
		base string
		pats [][]string
	}
	var walks []walk
	for _, p := range pats {
		// Joined by hand: path.Join would clean "**/.." away before
		// splitPattern can refuse it.
		full := filepath.ToSlash(p)
		if !path.IsAbs(full) && dir != "." {
			full = strings.TrimSuffix(filepath.ToSlash(dir), "/") + "/" + full
		}
		base, segs, err := splitPattern(full)
		if err != nil {
			return errorf("%v", err), nil
		}
		tg, err := t.e.ws.resolve(filepath.FromSlash(base), true)
		if err != nil {
			return errorf("%v", err), nil
		}
		i := slices.IndexFunc(walks, func(w walk) bool { return w.base == tg.abs })
		if i < 0 {
			walks = append(walks, walk{base: tg.abs})
			i = len(walks) - 1
		}
		walks[i].pats = append(walks[i].pats, segs)
	}

	type hit struct {
		show string
		mod  time.Time
	}
	seen := map[string]bool{}
	var hits []hit
	for _, w := range walks {
		err := filepath.WalkDir(w.base, func(p string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				if d != nil && d.IsDir() && p != w.base {
					return fs.SkipDir // unreadable directory: go on without it
				}
				return nil
			}
			rel, _ := filepath.Rel(w.base, p)
			if rel == "." {
				return nil
			}
			segs := strings.Split(filepath.ToSlash(rel), "/")
			if d.IsDir() {
				if d.Name() == ".git" || !slices.ContainsFunc(w.pats, func(pat []string) bool { return couldMatch(pat, segs) }) {
					return fs.SkipDir
				}
				return nil
			}
			if seen[p] || !slices.ContainsFunc(w.pats, func(pat []string) bool { return matchSegments(pat, segs) }) {
				return nil
			}
			seen[p] = true
			var mod time.Time
			if fi, err := d.Info(); err == nil {
				mod = fi.ModTime()
			}
			hits = append(hits, hit{show: t.e.ws.show(p), mod: mod})
			return nil
		})
		if errors.Is(err, fs.ErrNotExist) {
			continue // a directory that does not exist holds no matches
		}
		if err != nil {
			if ctx.Err() != nil {
				return errorf("glob was interrupted"), ctx.Err()
			}
			return errorf("cannot list files: %v", err), nil
		}
	}
	if len(hits) == 0 {
		for _, p := range pats {
			if hasMeta(p) {
				continue
			}
			if tg, err := t.e.ws.resolve(filepath.Join(dir, p), true); err == nil {
				if fi, err := os.Stat(tg.abs); err == nil && fi.IsDir() {
					return errorf("%s is a directory; to list the files in it use the pattern %s/**", p, strings.TrimSuffix(p, "/")), nil
				}
			}
		}
		return Result{Content: fmt.Sprintf("No files match %q in %s.", a.Pattern, describe(filepath.ToSlash(filepath.Clean(dir))))}, nil
	}
	slices.SortFunc(hits, func(x, y hit) int {
		return cmp.Or(y.mod.Compare(x.mod), strings.Compare(x.show, y.show))
	})
	var b strings.Builder
	for i, h := range hits {
		if i == t.e.limits.GlobResults {
			fmt.Fprintf(&b, "[%d more files not listed; narrow the pattern or the path.]\n", len(hits)-i)
			break
		}
		b.WriteString(h.show + "\n")
	}
	return Result{Content: strings.TrimSuffix(b.String(), "\n")}, nil
}

// hasMeta reports whether a path segment holds glob syntax.
func hasMeta(seg string) bool {
	return strings.ContainsAny(seg, `*?[\`)
}

// splitPattern splits a slash-separated pattern into its literal directory
// prefix and the segments left to match, checking the segments' syntax.
func splitPattern(p string) (base string, segs []string, err error) {
	all := strings.Split(p, "/")
	i := 0
	for i < len(all)-1 && !hasMeta(all[i]) {
		i++
	}
	base = strings.Join(all[:i], "/")
	if base == "" && strings.HasPrefix(p, "/") {
		base = "/"
	}
	if base == "" {
		base = "."
	}
	for _, s := range all[i:] {
		switch {
		case s == "" || s == ".":
			continue
		case s == "..":
			return "", nil, fmt.Errorf("pattern %q has .. after a wildcard; put the directory in path instead", p)
		case s != "**":
			if _, err := path.Match(s, ""); err != nil {
				return "", nil, fmt.Errorf("pattern %q is malformed at %q: %v", p, s, err)
			}
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return "", nil, fmt.Errorf("pattern %q names a directory, not files; add /* or /**", p)
	}
	return base, segs, nil
}

// matchSegments reports whether the path segments name match the pattern
// segments pat, where "**" matches any number of segments.
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// couldMatch reports whether files under the directory dir (as segments)
// could match pat, so that directories that cannot are not walked.
func couldMatch(pat, dir []string) bool {
	for len(dir) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[0], dir[0]); !ok {
			return false
		}
		pat, dir = pat[1:], dir[1:]
	}
	return len(pat) > 0
}

// maxExpansions bounds brace expansion.
const maxExpansions = 256

// expandBraces expands {a,b} alternatives, nested ones included:
// "src/**/*.{ts,tsx}" gives "src/**/*.ts" and "src/**/*.tsx". A brace
// without its closing partner is taken literally.
func expandBraces(p string) ([]string, error) {
	open := strings.IndexByte(p, '{')
	if open < 0 {
		return []string{p}, nil
	}
	depth, closing := 0, -1
	var commas []int
	for i := open; i < len(p) && closing < 0; i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				closing = i
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if closing < 0 {
		return []string{p}, nil
	}
	var out []string
	start := open + 1
	for _, end := range append(commas, closing) {
		more, err := expandBraces(p[:open] + p[start:end] + p[closing+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
		if len(out) > maxExpansions {
			return nil, fmt.Errorf("pattern %q expands to more than %d patterns", p, maxExpansions)
		}
		start = end + 1
	}
	return out, nil
}
