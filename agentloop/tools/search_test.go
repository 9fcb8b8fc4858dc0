package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// searchFixture is a small project whose files have distinct ages: the
// later a file is listed, the newer it is.
func searchFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	files := []struct{ path, content string }{
		{"README.md", "# Demo\nSee main.go.\n"},
		{"go.mod", "module demo\n"},
		{"main.go", "package main\n\nfunc main() {\n\tRun()\n}\n"},
		{"cmd/tool/main.go", "package main\n\n// Run runs.\nfunc main() {}\n"},
		{"internal/run/run.go", "package run\n\nfunc Run() {\n\tprintln(\"run\")\n}\n\nfunc helper() {}\n"},
		{"internal/run/run_test.go", "package run\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) { Run() }\n"},
		{"web/app.ts", "export function run() {}\n"},
		{"web/app.tsx", "export const App = () => run();\n"},
		{".git/config", "[core]\nRun = true\n"},
		{"assets/logo.png", "\x89PNG\r\n\x1a\n\x00\x00Run"},
	}
	base := time.Now().Add(-time.Hour)
	for i, fl := range files {
		p := f.write(t, fl.path, fl.content)
		mt := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestGlob(t *testing.T) {
	f := searchFixture(t)
	tests := []struct {
		name string
		args obj
		want []string
	}{
		{"star at the root", obj{"pattern": "*.go"}, []string{"main.go"}},
		{"double star, newest first", obj{"pattern": "**/*.go"}, []string{"internal/run/run_test.go", "internal/run/run.go", "cmd/tool/main.go", "main.go"}},
		{"double star in the middle", obj{"pattern": "internal/**/*_test.go"}, []string{"internal/run/run_test.go"}},
		{"star directory", obj{"pattern": "cmd/*/main.go"}, []string{"cmd/tool/main.go"}},
		{"braces", obj{"pattern": "web/*.{ts,tsx}"}, []string{"web/app.tsx", "web/app.ts"}},
		{"braces over two directories", obj{"pattern": "{web/*.ts,internal/run/*_test.go}"}, []string{"web/app.ts", "internal/run/run_test.go"}},
		{"path argument", obj{"pattern": "*.go", "path": "internal/run"}, []string{"internal/run/run_test.go", "internal/run/run.go"}},
		{"absolute pattern inside", obj{"pattern": filepath.Join(f.root, "cmd") + "/**/*.go"}, []string{"cmd/tool/main.go"}},
		{"literal file", obj{"pattern": "go.mod"}, []string{"go.mod"}},
		{"git skipped", obj{"pattern": "**/config"}, nil},
		{"everything", obj{"pattern": "**"}, []string{"assets/logo.png", "web/app.tsx", "web/app.ts", "internal/run/run_test.go", "internal/run/run.go", "cmd/tool/main.go", "main.go", "go.mod", "README.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t, "glob", tt.args)
			if res.IsError {
				t.Fatalf("glob(%v): %s", tt.args, res.Content)
			}
			var got []string
			if !strings.HasPrefix(res.Content, "No files match") {
				got = strings.Split(res.Content, "\n")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("glob(%v) diff (-want +got):\n%s", tt.args, diff)
			}
		})
	}
	for _, bad := range []obj{
		{"pattern": ""},
		{"pattern": "src/[a-"},
		{"pattern": "**/../x"},
		{"pattern": "internal/run"},
		{"pattern": "*", "path": "artifact://01X"},
	} {
		if res := f.call(t, "glob", bad); !res.IsError {
			t.Errorf("glob(%v) = %q, want an error", bad, res.Content)
		}
	}
}

func TestGlobLimit(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Limits.GlobResults = 3 })
	for i := range 5 {
		f.write(t, fmt.Sprintf("f%d.txt", i), "")
	}
	res := f.call(t, "glob", obj{"pattern": "*.txt"})
	if lines := strings.Split(res.Content, "\n"); len(lines) != 4 || lines[3] != "[2 more files not listed; narrow the pattern or the path.]" {
		t.Errorf("glob with limit 3 = %q", res.Content)
	}
	// Exactly as many files as the limit are all listed, with no note.
	res = f.call(t, "glob", obj{"pattern": "f{0,1,2}.txt"})
	if lines := strings.Split(res.Content, "\n"); len(lines) != 3 || strings.Contains(res.Content, "more files") {
		t.Errorf("glob of 3 files with limit 3 = %q", res.Content)
	}
}

func TestExpandBraces(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a", []string{"a"}},
		{"*.{go,md}", []string{"*.go", "*.md"}},
		{"{a,b}/{c,d}", []string{"a/c", "a/d", "b/c", "b/d"}},
		{"x{a,{b,c}}", []string{"xa", "xb", "xc"}},
		{"unclosed{a,b", []string{"unclosed{a,b"}},
	}
	for _, tt := range tests {
		got, err := expandBraces(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("expandBraces(%q) diff (-want +got):\n%s", tt.in, diff)
		}
	}
	if _, err := expandBraces(strings.Repeat("{a,b,c,d}", 5)); err == nil {
		t.Error("expandBraces of 4^5 alternatives succeeded")
	}
	// Exactly maxExpansions patterns are allowed.
	if got, err := expandBraces(strings.Repeat("{a,b}", 8)); err != nil || len(got) != maxExpansions {
		t.Errorf("expandBraces of 2^8 alternatives: %d patterns, %v", len(got), err)
	}
}

func TestGrep(t *testing.T) {
	f := searchFixture(t)
	tests := []struct {
		name    string
		args    obj
		want    string
		isError bool
	}{
		{"files by default, in path order", obj{"pattern": `Run\(`},
			"internal/run/run.go\ninternal/run/run_test.go\nmain.go", false},
		{"content with line numbers", obj{"pattern": `Run\(\)`, "output_mode": "content"},
			"internal/run/run.go:3:func Run() {\ninternal/run/run_test.go:5:func TestRun(t *testing.T) { Run() }\nmain.go:4:\tRun()", false},
		{"count", obj{"pattern": `\bfunc\b`, "output_mode": "count"},
			"cmd/tool/main.go:1\ninternal/run/run.go:2\ninternal/run/run_test.go:1\nmain.go:1\n[5 matching lines in 4 files]", false},
		{"case insensitive", obj{"pattern": "^# demo", "case_insensitive": true}, "README.md", false},
		{"case sensitive", obj{"pattern": "^# demo"}, `No matches for "^# demo" in the project root.`, false},
		{"glob on names", obj{"pattern": "run", "glob": "*.{ts,tsx}"}, "web/app.ts\nweb/app.tsx", false},
		{"glob on paths", obj{"pattern": "func", "glob": "internal/**/*_test.go"}, "internal/run/run_test.go", false},
		{"one file", obj{"pattern": "func", "path": "internal/run/run.go", "output_mode": "content"},
			"internal/run/run.go:3:func Run() {\ninternal/run/run.go:7:func helper() {}", false},
		{"context lines", obj{"pattern": "println", "path": "internal/run", "output_mode": "content", "context": 1},
			"internal/run/run.go-3-func Run() {\ninternal/run/run.go:4:\tprintln(\"run\")\ninternal/run/run.go-5-}", false},
		{"context groups", obj{"pattern": "^func", "path": "internal/run/run.go", "output_mode": "content", "context": 1},
			"internal/run/run.go-2-\ninternal/run/run.go:3:func Run() {\ninternal/run/run.go-4-\tprintln(\"run\")\n--\ninternal/run/run.go-6-\ninternal/run/run.go:7:func helper() {}", false},
		{"adjacent context merges", obj{"pattern": "^package|println", "path": "internal/run/run.go", "output_mode": "content", "context": 1},
			"internal/run/run.go:1:package run\ninternal/run/run.go-2-\ninternal/run/run.go-3-func Run() {\ninternal/run/run.go:4:\tprintln(\"run\")\ninternal/run/run.go-5-}", false},
		{"merged context at the end of the file", obj{"pattern": `^\}$|helper`, "path": "internal/run/run.go", "output_mode": "content", "context": 2},
			"internal/run/run.go-3-func Run() {\ninternal/run/run.go-4-\tprintln(\"run\")\ninternal/run/run.go:5:}\ninternal/run/run.go-6-\ninternal/run/run.go:7:func helper() {}", false},
		{"most context", obj{"pattern": "println", "path": "internal/run/run.go", "output_mode": "content", "context": 20},
			"internal/run/run.go-1-package run\ninternal/run/run.go-2-\ninternal/run/run.go-3-func Run() {\ninternal/run/run.go:4:\tprintln(\"run\")\ninternal/run/run.go-5-}\ninternal/run/run.go-6-\ninternal/run/run.go-7-func helper() {}", false},
		{"limit reached exactly", obj{"pattern": "package", "path": "internal/run", "limit": 2},
			"internal/run/run.go\ninternal/run/run_test.go\n[Stopped at the limit of 2 files; there may be more. Narrow the search with path or glob, or raise limit (at most 5000).]", false},
		{"limit reached exactly in a file", obj{"pattern": "func", "path": "internal/run/run.go", "output_mode": "content", "limit": 2},
			"internal/run/run.go:3:func Run() {\ninternal/run/run.go:7:func helper() {}\n[Stopped at the limit of 2 matching lines; there may be more. Narrow the search with path or glob, or raise limit (at most 5000).]", false},
		{"count limit reached exactly", obj{"pattern": "package", "path": "internal/run", "output_mode": "count", "limit": 2},
			"internal/run/run.go:1\ninternal/run/run_test.go:1\n[2 matching lines in 2 files]\n[Stopped at the limit of 2 files; there may be more. Narrow the search with path or glob, or raise limit (at most 5000).]", false},
		{"limit at the maximum", obj{"pattern": "package", "path": "internal/run", "limit": 5000},
			"internal/run/run.go\ninternal/run/run_test.go", false},
		{"limit", obj{"pattern": "func", "output_mode": "content", "limit": 2},
			"cmd/tool/main.go:4:func main() {}\ninternal/run/run.go:3:func Run() {\n[Stopped at the limit of 2 matching lines; there may be more. Narrow the search with path or glob, or raise limit (at most 5000).]", false},
		{"anchors per line", obj{"pattern": `\}$`, "path": "main.go", "output_mode": "content"}, "main.go:5:}", false},
		{"begin-of-text anchor", obj{"pattern": `\Apackage run`, "output_mode": "files_with_matches"}, "internal/run/run.go\ninternal/run/run_test.go", false},
		{"git and binary files skipped", obj{"pattern": "Run = true|PNG"}, `No matches for "Run = true|PNG" in the project root.`, false},
		{"bad expression", obj{"pattern": "(?<=x)y"}, "invalid regular expression", true},
		{"malformed glob", obj{"pattern": "func", "glob": "internal/[run/*.go"}, `glob "internal/[run/*.go" is malformed at "[run"`, true},
		{"double star in a glob", obj{"pattern": "func", "glob": "**/run.go"}, "internal/run/run.go", false},
		{"bad mode", obj{"pattern": "x", "output_mode": "lines"}, `argument "output_mode" must be one of files_with_matches, content, count`, true},
		{"bad context", obj{"pattern": "x", "context": 99}, "context must be between 0 and 20", true},
		{"missing path", obj{"pattern": "x", "path": "nope"}, "nope does not exist", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t, "grep", tt.args)
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v: %s", res.IsError, tt.isError, res.Content)
			}
			if tt.isError {
				wantContains(t, "error", res.Content, tt.want)
				return
			}
			if res.Content != tt.want {
				t.Errorf("grep(%v) =\n%s\nwant\n%s", tt.args, res.Content, tt.want)
			}
		})
	}
}

// grep shows secrets redacted, key blocks included, even when a match is
// inside the block.
func TestGrepRedacts(t *testing.T) {
	f := newFixture(t)
	key := fakeAWSKey(3)
	pem := fakePEM(3, 9)
	f.write(t, "deploy.env", "REGION=eu\nAWS_ACCESS_KEY_ID="+key+"\n")
	f.write(t, "id_rsa", pem)
	res := f.call(t, "grep", obj{"pattern": "AKIA|REGION", "output_mode": "content"})
	want := "deploy.env:1:REGION=eu\ndeploy.env:2:AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id]"
	if res.Content != want {
		t.Errorf("grep = %q, want %q", res.Content, want)
	}
	bodyLine := strings.Split(pem, "\n")[2]
	res = f.call(t, "grep", obj{"pattern": regexp.QuoteMeta(bodyLine[:20]), "output_mode": "content", "context": 2})
	if strings.Contains(res.Content, bodyLine[:20]) {
		t.Errorf("grep showed a key line: %s", res.Content)
	}
	wantContains(t, "grep", res.Content, "id_rsa-1-[REDACTED:private-key]", "id_rsa:3:")
}

// A file of exactly grepMaxFile bytes is searched; one byte more is
// skipped and counted. (Sparse files: text first, then zero bytes past
// the sniffed head.)
func TestGrepMaxFile(t *testing.T) {
	f := newFixture(t)
	for name, size := range map[string]int64{"edge.txt": grepMaxFile, "over.txt": grepMaxFile + 1} {
		f.write(t, name, strings.Repeat("needle in text\n", sniffLen/15+1))
		if err := os.Truncate(filepath.Join(f.root, name), size); err != nil {
			t.Fatal(err)
		}
	}
	res := f.call(t, "grep", obj{"pattern": "needle"})
	if !strings.HasPrefix(res.Content, "edge.txt\n") || strings.Contains(res.Content, "over.txt") ||
		!strings.Contains(res.Content, "[1 file over 32.0 MiB not searched.]") {
		t.Errorf("grep = %q, want edge.txt and one file over the limit", res.Content)
	}
}
