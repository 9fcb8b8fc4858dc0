package parse

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGoSymbols(t *testing.T) {
	src := []byte(`package p

// T is a type.
type T[K comparable] struct{ n int }

// M does.
func (t *T[K]) M(a, b int) (err error) {
	return nil
}

func f() {}
`)
	f, err := Parse("p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []Symbol{
		{Kind: KindStruct, Name: "T", Line: 4, EndLine: 4, Signature: "type T[K comparable] struct", Doc: "T is a type.", Exported: true},
		{Kind: KindField, Name: "n", Parent: "T", Line: 4, EndLine: 4, Signature: "n int"},
		{Kind: KindMethod, Name: "M", Parent: "T", Line: 7, EndLine: 9, Signature: "func (t *T[K]) M(a, b int) (err error)", Doc: "M does.", Exported: true},
		{Kind: KindFunc, Name: "f", Line: 11, EndLine: 11, Signature: "func f()"},
	}
	if diff := cmp.Diff(want, f.Symbols); diff != "" {
		t.Errorf("symbols diff (-want +got):\n%s", diff)
	}
}

func TestGoRefs(t *testing.T) {
	src := []byte(`package p
func f(x *Conf) Result {
	fmt.Println(x.Name)
	g()
	return Result{}
}
`)
	f, err := Parse("p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	want := []Ref{
		{Name: "Conf", Line: 2},
		{Name: "Result", Line: 2},
		{Name: "Println", Qual: "fmt", Line: 3, Call: true},
		{Name: "Name", Qual: "x", Line: 3},
		{Name: "g", Line: 4, Call: true},
		{Name: "Result", Line: 5},
	}
	if diff := cmp.Diff(want, f.Refs); diff != "" {
		t.Errorf("refs diff (-want +got):\n%s", diff)
	}
}

// A file go/parser rejects still gives the declarations before the error.
func TestGoBroken(t *testing.T) {
	src := []byte("package p\n\nfunc Good() {}\n\nfunc Bad( {\n")
	f, err := Parse("p.go", src)
	if err != nil {
		t.Fatal(err)
	}
	find(t, f, "Good")
}

// Blanking bodies must not change the declarations go/parser sees: compare with a
// whole parse on tricky sources and on part of the standard library.
func TestGoSkimSameSymbols(t *testing.T) {
	srcs := map[string]string{
		"structresult.go": "package p\nfunc F() struct{ a int } { return struct{ a int }{1} }\nfunc G() {}\n",
		"ifaceparam.go":   "package p\nfunc F[T interface{ ~int }](x T, y interface {\n\tM()\n}) {\n\tif x > 0 { F(x) }\n}\ntype T struct{ f func() }\n",
		"literal.go":      "package p\nvar m = map[string]func(){\n\t\"a\": func() { b := '}'; _ = b },\n}\nvar s = `{`\n\n//go:noescape\nfunc asm(x int)\n\nvar t = T{1}\n",
		"strings.go":      "package p\nfunc F() string { return \"}\" + `\n}` }\nfunc G() rune { /* } */ return '\\'' }\n",
	}
	for _, dir := range []string{"go/ast", "net/http", "unicode"} {
		files, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", dir, "*.go"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			srcs[p] = string(b)
		}
	}
	if len(srcs) < 20 {
		t.Fatalf("only %d sources: GOROOT/src not found at %s", len(srcs), runtime.GOROOT())
	}
	for name, src := range srcs {
		skim := parseGoSkim(name, []byte(src), false, true)
		whole := parseGoSkim(name, []byte(src), false, false)
		if diff := cmp.Diff(whole.Symbols, skim.Symbols); diff != "" {
			t.Errorf("%s: symbols diff (-whole +skim):\n%s", name, diff)
		}
	}
}
