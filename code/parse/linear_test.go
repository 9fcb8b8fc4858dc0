package parse

import (
	"strings"
	"testing"
)

// The scanners look ahead for the end of a header or statement. Unclosed brackets
// or missing terminators, repeated, must not make that quadratic: a hostile or
// broken file would stall the index. The work counted is the tokens looked at by
// the look-ahead helpers, which must stay a small multiple of the tokens.
func TestScannersLinear(t *testing.T) {
	const n = 5000
	rep := func(prefix, line string) []byte { return []byte(prefix + strings.Repeat(line, n)) }
	for _, tc := range []struct {
		name string
		src  []byte
		work func(src []byte) (work, toks int)
	}{
		{"js const (", rep("", "const a = (\n"), jsWork},
		{"js type {", rep("", "type X = {\n"), jsWork},
		{"js class f(", rep("class A {\n", "f(\n"), jsWork},
		{"js minified", rep("", "var a=1;"), jsWork},
		{"ts let x: {", rep("", "let x: {\n"), jsWork},
		{"ts generic", rep("", "function f(): A<\n"), jsWork},
		{"rust fn no body", rep("", "fn f()\n"), rsWork},
		{"rust struct (", rep("struct S {\n", "a: (\n"), rsWork},
		{"rust enum (", rep("enum E {\n", "A(\n"), rsWork},
		{"java no body", rep("class A {\n", "void f()\n"), javaWork},
		{"java field", rep("class A {\n", "int x\n"), javaWork},
		{"java enum (", rep("enum E {\n", "A(\n"), javaWork},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work, toks := tc.work(tc.src)
			if work > 64*toks+1000 {
				t.Errorf("look-ahead work %d for %d tokens, want at most %d", work, toks, 64*toks+1000)
			}
		})
	}
}

func jsWork(src []byte) (int, int) {
	p := newJSParser(src, true)
	p.run()
	return p.work, len(p.toks)
}

func rsWork(src []byte) (int, int) {
	r := newRustParser("src/x.rs", src)
	r.run()
	return r.work, len(r.toks)
}

func javaWork(src []byte) (int, int) {
	p := newJavaParser(src)
	p.run()
	return p.work, len(p.toks)
}
