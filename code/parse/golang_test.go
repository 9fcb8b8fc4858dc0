package parse

import (
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
