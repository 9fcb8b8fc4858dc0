package parse

import (
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden parses each fixture testdata/<lang>/…/<name>.txt as <name> and compares
// the whole extraction with <name>.golden; -update rewrites the golden files.
func TestGolden(t *testing.T) {
	var fixtures []string
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".txt") {
			fixtures = append(fixtures, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(fixtures) == 0 {
		t.Fatal("no fixtures in testdata")
	}
	for _, fx := range fixtures {
		name := strings.TrimSuffix(fx, ".txt")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(fx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(name, src)
			if err != nil {
				t.Fatalf("Parse(%s) error: %v", name, err)
			}
			golden := name + ".golden"
			if *update {
				b, err := json.MarshalIndent(got, "", "\t")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			var want File
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("%s: %v", golden, err)
			}
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("Parse(%s) diff (-want +got):\n%s", name, diff)
			}
		})
	}
}

func TestLanguage(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"a/b.go", "go"},
		{"x.PY", "python"},
		{"x.pyi", "python"},
		{"web/app.js", "javascript"},
		{"web/app.jsx", "javascript"},
		{"web/app.ts", "typescript"},
		{"web/app.tsx", "tsx"},
		{"src/lib.rs", "rust"},
		{"Main.java", "java"},
		{"README.md", ""},
		{"Makefile", ""},
		{"go", ""},
	} {
		if got := Language(tc.path); got != tc.want {
			t.Errorf("Language(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

func TestUnknownLanguage(t *testing.T) {
	f, err := Parse("notes.md", []byte("# hi"))
	if !errors.Is(err, ErrUnknownLanguage) {
		t.Fatalf("Parse(notes.md) error = %v, want ErrUnknownLanguage", err)
	}
	if f != nil {
		t.Errorf("Parse(notes.md) = %+v, want nil", f)
	}
	if !strings.Contains(err.Error(), "notes.md") {
		t.Errorf("error %q does not name the file", err)
	}
}

// find returns the symbol named name (Parent.Name when it has a dot).
func find(t *testing.T, f *File, name string) Symbol {
	t.Helper()
	parent, n, ok := strings.Cut(name, ".")
	if !ok {
		parent, n = "", name
	}
	for _, s := range f.Symbols {
		if s.Name == n && s.Parent == parent {
			return s
		}
	}
	t.Fatalf("no symbol %s in %+v", name, f.Symbols)
	return Symbol{}
}

func TestParseSymbolsHasNoRefs(t *testing.T) {
	src := []byte("package p\nfunc F() { G() }\n")
	f, err := ParseSymbols("p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Refs) != 0 || len(f.Symbols) != 1 {
		t.Errorf("ParseSymbols = %+v, want one symbol and no refs", f)
	}
}
