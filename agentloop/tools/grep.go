package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/miramem/mira/internal/text"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// grepMaxFile is the largest file grep searches; larger ones are skipped
// and counted.
const grepMaxFile = 32 << 20

// grepMaxContext bounds the context lines around a match.
const grepMaxContext = 20

// grepTool is the grep tool.
type grepTool struct{ e *env }

func (t grepTool) schema() *jsonschema.Definition {
	return object(map[string]jsonschema.Definition{
		"pattern":          {Type: jsonschema.String, Description: "A regular expression (Go RE2 syntax: no look-around or back-references), matched against each line."},
		"path":             {Type: jsonschema.String, Description: "A file or directory to search, or artifact://ID. Default: the project root."},
		"glob":             {Type: jsonschema.String, Description: "Search only files matching this glob: *.go matches file names anywhere, a pattern with a slash (src/**/*.ts) matches paths from the searched directory."},
		"output_mode":      {Type: jsonschema.String, Enum: []string{"files_with_matches", "content", "count"}, Description: "files_with_matches (the default) lists the files; content shows the matching lines as path:line:text; count gives the number of matching lines per file."},
		"case_insensitive": {Type: jsonschema.Boolean, Description: "Ignore case. Default false."},
		"context":          {Type: jsonschema.Integer, Description: fmt.Sprintf("Lines of context before and after each match in content mode (0 to %d). Default 0.", grepMaxContext)},
		"limit": {Type: jsonschema.Integer, Description: fmt.Sprintf("The most matching lines (content mode) or files (other modes) to return. Default %d, at most %d.",
			t.e.limits.GrepResults, t.e.limits.GrepMaxResults)},
	}, "pattern")
}

// Definition implements Tool.
func (t grepTool) Definition() openai.Tool {
	return schemaTool("grep", "Search file contents with a regular expression. Files are searched in path order; .git, binary files and files over 32 MiB are skipped. Use this rather than grep or rg in bash.", t.schema())
}

type grepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Glob            string `json:"glob"`
	OutputMode      string `json:"output_mode"`
	CaseInsensitive bool   `json:"case_insensitive"`
	Context         int    `json:"context"`
	Limit           int    `json:"limit"`
}

// Run implements Tool.
func (t grepTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a grepArgs
	if err := decodeArgs(args, t.schema(), &a); err != nil {
		return errorf("%v", err), nil
	}
	a.OutputMode = cmp.Or(a.OutputMode, "files_with_matches")
	if a.Context < 0 || a.Context > grepMaxContext {
		return errorf("context must be between 0 and %d", grepMaxContext), nil
	}
	if a.Limit < 0 {
		return errorf("limit must be positive"), nil
	}
	limit, note := cmp.Or(a.Limit, t.e.limits.GrepResults), ""
	if limit > t.e.limits.GrepMaxResults {
		limit = t.e.limits.GrepMaxResults
		note = fmt.Sprintf("[limit %d is more than the maximum; %d was used.]\n", a.Limit, limit)
	}
	expr := a.Pattern
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return errorf("invalid regular expression: %v (the syntax is Go's RE2: no look-around or back-references)", err), nil
	}
	// Whole files are tested first with a multi-line version of the
	// expression, which matches wherever some line does, so that only
	// files with a match are split into lines. \A and \z mean something
	// else across a whole file, so such expressions skip the test.
	var pre *regexp.Regexp
	if !strings.Contains(a.Pattern, `\A`) && !strings.Contains(a.Pattern, `\z`) {
		pre, _ = regexp.Compile("(?m)" + expr)
	}
	var filter [][]string
	if a.Glob != "" {
		pats, err := expandBraces(a.Glob)
		if err != nil {
			return errorf("%v", err), nil
		}
		for _, p := range pats {
			segs := strings.Split(strings.TrimPrefix(p, "./"), "/")
			for _, s := range segs {
				if _, err := path.Match(s, ""); err != nil && s != "**" {
					return errorf("glob %q is malformed at %q: %v", a.Glob, s, err), nil
				}
			}
			filter = append(filter, segs)
		}
	}
	tg, err := t.e.ws.resolve(cmp.Or(a.Path, "."), true)
	if err != nil {
		return errorf("%v", err), nil
	}
	fi, err := os.Stat(tg.abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errorf("%s does not exist", tg.show), nil
		}
		return errorf("cannot search %s: %v", tg.show, err), nil
	}

	s := &grepSearch{t: t, a: a, re: re, pre: pre, limit: limit}
	if !fi.IsDir() {
		s.file(tg.abs, tg.show)
	} else {
		err = filepath.WalkDir(tg.abs, func(p string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if s.full {
				return fs.SkipAll
			}
			if err != nil {
				if d != nil && d.IsDir() && p != tg.abs {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if d.Name() == ".git" {
					return fs.SkipDir
				}
				return nil
			}
			if filter != nil && !globFilter(filter, tg.abs, p) {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				// A link is followed only to a file the tools may read.
				real, err := realPath(p)
				if err != nil || !t.e.ws.inside(real) {
					return nil
				}
				if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
					return nil
				}
			} else if !d.Type().IsRegular() {
				return nil
			}
			s.file(p, t.e.ws.show(p))
			return nil
		})
		if err != nil && !errors.Is(err, fs.SkipAll) {
			if ctx.Err() != nil {
				return errorf("grep was interrupted"), ctx.Err()
			}
			return errorf("cannot search %s: %v", tg.show, err), nil
		}
	}
	return s.result(note, tg.show), nil
}

// grepSearch gathers the output of one grep call.
type grepSearch struct {
	t       grepTool
	a       grepArgs
	re, pre *regexp.Regexp
	limit   int

	b       strings.Builder
	files   int  // files with matches
	matches int  // matching lines
	full    bool // the limit was reached
	big     int  // files skipped for their size
	lastSep bool // content mode: something was written, so groups need "--"
}

// file searches one file and adds what it finds to the output.
func (s *grepSearch) file(abs, show string) {
	fi, err := os.Stat(abs)
	if err != nil {
		return
	}
	if fi.Size() > grepMaxFile {
		s.big++
		return
	}
	data, err := os.ReadFile(abs)
	if err != nil || isBinary(data) {
		return
	}
	if s.pre != nil && !s.pre.Match(data) {
		return
	}
	text := string(data)
	lines := splitLines(text)
	var hits []int
	for i, l := range lines {
		if s.re.MatchString(strings.TrimSuffix(l, "\r")) {
			hits = append(hits, i)
		}
	}
	if len(hits) == 0 {
		return
	}
	s.files++
	switch s.a.OutputMode {
	case "files_with_matches":
		s.matches += len(hits)
		s.b.WriteString(show + "\n")
		s.full = s.files >= s.limit
	case "count":
		s.matches += len(hits)
		fmt.Fprintf(&s.b, "%s:%d\n", show, len(hits))
		s.full = s.files >= s.limit
	default:
		if left := s.limit - s.matches; len(hits) >= left {
			hits, s.full = hits[:left], true
		}
		s.matches += len(hits)
		// Redaction keeps line breaks, so the redacted text has the same
		// lines; redacting the whole file finds key blocks whole.
		s.content(show, splitLines(Redact(text)), hits)
	}
}

// content writes the matching lines with their context, grep style:
// path:N:text for a match, path-N-text for context, "--" between groups.
func (s *grepSearch) content(show string, lines []string, hits []int) {
	c := s.a.Context
	isHit := make(map[int]bool, len(hits))
	for _, h := range hits {
		isHit[h] = true
	}
	for i := 0; i < len(hits); {
		from, to := max(0, hits[i]-c), min(len(lines)-1, hits[i]+c)
		j := i + 1
		for j < len(hits) && hits[j]-c <= to+1 {
			to = min(len(lines)-1, hits[j]+c)
			j++
		}
		if c > 0 && s.lastSep {
			s.b.WriteString("--\n")
		}
		for n := from; n <= to; n++ {
			sep := "-"
			if isHit[n] {
				sep = ":"
			}
			fmt.Fprintf(&s.b, "%s%s%d%s%s\n", show, sep, n+1, sep, clipLine(strings.TrimSuffix(lines[n], "\r"), s.t.e.limits.LineBytes))
		}
		s.lastSep = true
		i = j
	}
}

// result puts the output together with its notes.
func (s *grepSearch) result(note, where string) Result {
	var b strings.Builder
	b.WriteString(note)
	if s.files == 0 {
		fmt.Fprintf(&b, "No matches for %q in %s.", s.a.Pattern, describe(where))
	} else {
		b.WriteString(s.b.String())
		if s.a.OutputMode == "count" {
			fmt.Fprintf(&b, "[%s in %s]\n", plural(s.matches, "matching line"), plural(s.files, "file"))
		}
		if s.full {
			what := "files"
			if s.a.OutputMode == "content" {
				what = "matching lines"
			}
			fmt.Fprintf(&b, "[Stopped at the limit of %d %s; there may be more. Narrow the search with path or glob, or raise limit (at most %d).]\n",
				s.limit, what, s.t.e.limits.GrepMaxResults)
		}
	}
	if s.big > 0 {
		fmt.Fprintf(&b, "\n[%s over %s not searched.]", plural(s.big, "file"), text.Size(int64(grepMaxFile)))
	}
	return Result{Content: strings.TrimSpace(b.String())}
}

// globFilter reports whether the file p under the searched directory base
// passes grep's glob filter: a pattern without a slash is matched against
// the file's name, one with a slash against its path from base.
func globFilter(filter [][]string, base, p string) bool {
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return false
	}
	segs := strings.Split(filepath.ToSlash(rel), "/")
	for _, pat := range filter {
		if len(pat) == 1 && pat[0] != "**" {
			if ok, _ := path.Match(pat[0], segs[len(segs)-1]); ok {
				return true
			}
		} else if matchSegments(pat, segs) {
			return true
		}
	}
	return false
}
