package parse

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// fuzzParse seeds a fuzz target with the fixtures of one language and checks that
// Parse neither panics nor reports spans outside the file.
func fuzzParse(f *testing.F, lang, path string, seeds ...string) {
	err := filepath.WalkDir(filepath.Join("testdata", lang), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".txt") {
			return err
		}
		b, err := os.ReadFile(p)
		f.Add(b)
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, parse := range []func(string, []byte) (*File, error){Parse, ParseSymbols} {
			file, err := parse(path, src)
			if err != nil {
				t.Fatalf("Parse error: %v", err)
			}
			checkFile(t, file, src)
		}
	})
}

func checkFile(t *testing.T, file *File, src []byte) {
	t.Helper()
	lines := bytes.Count(src, []byte("\n")) + 1
	for _, s := range file.Symbols {
		if s.Name == "" {
			t.Errorf("symbol with no name: %+v", s)
		}
		if s.Line < 1 || s.EndLine < s.Line || s.EndLine > lines {
			t.Errorf("symbol %+v: span outside 1..%d", s, lines)
		}
		if bytes.ContainsAny([]byte(s.Signature), "\n\r") {
			t.Errorf("symbol %+v: signature spans lines", s)
		}
		if utf8.ValidString(string(src)) && !utf8.ValidString(s.Signature) {
			t.Errorf("symbol %+v: signature is not UTF-8", s)
		}
	}
	for _, r := range file.Refs {
		if r.Name == "" || r.Line < 1 || r.Line > lines {
			t.Errorf("ref %+v outside 1..%d or unnamed", r, lines)
		}
	}
}

func FuzzGo(f *testing.F) {
	fuzzParse(f, "go", "x.go", "package p\nfunc (", "package p\ntype T struct{ a, b int `x`", "package\x00")
}

func FuzzPython(f *testing.F) {
	fuzzParse(f, "python", "x.py", "def f(:\n  '''", "class A:\n\tdef b(self): pass\n  x = f'{\"", "@d\n@e\nasync def", "x = '''\\", "from . import (a,\n")
}

func FuzzJavaScript(f *testing.F) {
	fuzzParse(f, "javascript", "x.js", "class A { b() {", "const f = (", "`${`${", "x = /[/]/; function", "export default {", "a ? /re/ : b / c")
}

func FuzzTypeScript(f *testing.F) {
	fuzzParse(f, "typescript", "x.ts", "interface I { a(): {", "const f = <T,>(x: T): T =>", "type X<T = {", "declare module 'm' {", "enum E { A = 1,")
}

func FuzzTSX(f *testing.F) {
	fuzzParse(f, "tsx", "x.tsx", "const A = () => <div>don't {x}</div>;", "function F() { return <a href='x'>{`${y}`}</a> }")
}

func FuzzRust(f *testing.F) {
	fuzzParse(f, "rust", "src/x.rs", "fn f<'a>(x: &'a str) -> &'a str {", "impl<T> X for", "r##\"x\"#", "struct S { pub(", "/* /* */", "macro_rules! m {", "enum E { A(")
}

func FuzzJava(f *testing.F) {
	fuzzParse(f, "java", "X.java", "class A { void f(", "enum E { A(", "@interface X {", "String s = \"\"\"", "public <T> T f() {}")
}
