package parse

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// fuzzParse seeds a fuzz target with the fixtures of one language and checks that
// Parse neither panics nor reports spans outside the file.
func fuzzParse(f *testing.F, lang, path string, seeds ...string) {
	fixtures, _ := filepath.Glob(filepath.Join("testdata", lang, "*.txt"))
	for _, fx := range fixtures {
		b, err := os.ReadFile(fx)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
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
