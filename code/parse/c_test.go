package parse

import (
	"fmt"
	"strings"
	"testing"
)

func TestLanguageCAndRuby(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"src/buf.c", "c"},
		{"include/buf.h", "c"},
		{"x.cc", "cpp"},
		{"x.cpp", "cpp"},
		{"x.hpp", "cpp"},
		{"x.hh", "cpp"},
		{"lib/shop.rb", "ruby"},
		{"Rakefile", "ruby"},
		{"tasks/db.rake", "ruby"},
		{"shop.gemspec", "ruby"},
		{"Makefile", ""},
	} {
		if got := Language(tc.path); got != tc.want {
			t.Errorf("Language(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestCPreprocessor: the first branch of a conditional is read (the #else
// of #if 0), so that a header written twice does not unbalance the braces;
// a macro's body gives references, not definitions; a macro defined in a
// branch not read is still listed.
func TestCPreprocessor(t *testing.T) {
	src := `#ifdef WIDE
int put(wchar_t *s) {
#elif defined(NARROW)
int put(char *s, int n) {
#else
int put(void) {
#endif
	return emit(s);
}

#if 0
void gone(void) {}
#elif 1
void kept(void) {}
#endif

#define CALL(x) do { helper(x); } while (0)
#define EMPTY
int after(void) { return 1; }
#if 0
#define OLD 1
#endif
`
	f, err := Parse("x.c", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range f.Symbols {
		got = append(got, fmt.Sprintf("%s %s %d-%d", s.Kind, s.Name, s.Line, s.EndLine))
	}
	want := []string{"func put 2-9", "func kept 14-14", "macro CALL 17-17", "macro EMPTY 18-18", "func after 19-19", "macro OLD 21-21"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("symbols\n got %q\nwant %q", got, want)
	}
	calls := map[string]bool{}
	for _, r := range f.Refs {
		if r.Call {
			calls[r.Name] = true
		}
	}
	if !calls["helper"] || !calls["emit"] || calls["gone"] {
		t.Errorf("calls %v: want helper (in a macro) and emit", calls)
	}
}

// TestCHeaderPrototypes: prototypes outside a class are declarations, not
// definitions; inside a class they are its methods.
func TestCHeaderPrototypes(t *testing.T) {
	f, _ := Parse("x.h", []byte("int open_file(const char *p);\nextern int errno_val;\nclass A {\n  int f(int);\n  virtual void g() = 0;\n};\n"))
	var got []string
	for _, s := range f.Symbols {
		got = append(got, string(s.Kind)+" "+s.Parent+"."+s.Name+" "+s.Signature)
	}
	want := []string{"class .A class A", "method A.f int f(int)", "method A.g virtual void g()"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func FuzzC(f *testing.F) {
	fuzzParse(f, "c", "x.c", "int f(", "struct s { int a", "#if 0\n{", "#define X(a", "typedef struct {", "enum { A = (", "/* */ #else", "int a[] = {")
}

func FuzzCPP(f *testing.F) {
	fuzzParse(f, "cpp", "x.cpp", "namespace a { class B {", "template <class T", "R\"x(", "A::~A() : b{", "operator()(", "f<int>(", "extern \"C\" {", "1'000")
}

func cWork(src []byte) (int, int) {
	p, _ := newCParser(src)
	p.block(0, len(p.toks), cScope{kind: 't', public: true})
	return p.work, len(p.toks)
}

func rbWork(src []byte) (int, int) {
	_, w := rubyWork(src, true)
	toks, _ := rbLex(src)
	return w, len(toks)
}

// TestCAndRubyLinear: unclosed brackets, bodies and directives, repeated,
// keep the look-ahead linear.
func TestCAndRubyLinear(t *testing.T) {
	const n = 5000
	rep := func(prefix, line string) []byte { return []byte(prefix + strings.Repeat(line, n)) }
	for _, tc := range []struct {
		name string
		src  []byte
		work func(src []byte) (work, toks int)
	}{
		{"c f(", rep("", "int f(\n"), cWork},
		{"c struct {", rep("", "struct s {\n"), cWork},
		{"c namespace {", rep("", "namespace a {\n"), cWork},
		{"c template <", rep("", "template <class T\n"), cWork},
		{"c a>(", rep("int ", "a>(x)\n"), cWork},
		{"c enum", rep("enum e {\n", "A = (\n"), cWork},
		{"c #if 0", rep("", "#if 0\n"), cWork},
		{"c #else", rep("#if X\n", "#else\nint a;\n"), cWork},
		{"c ctor", rep("A::A() : ", "b{c}, \n"), cWork},
		{"ruby def (", rep("", "def f(\n"), rbWork},
		{"ruby class", rep("", "class A\n"), rbWork},
		{"ruby names", rep("", "a b c "), rbWork},
		{"ruby heredoc", rep("", "x = <<\"A\n"), rbWork},
		{"ruby string", rep("", "\"#{\n"), rbWork},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work, toks := tc.work(tc.src)
			if work > 64*toks+1000 {
				t.Errorf("look-ahead work %d for %d tokens, want at most %d", work, toks, 64*toks+1000)
			}
		})
	}
}

// genC makes a C++ file of about n functions, classes and macros.
func genC(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "#define M%d(x) ((x) + %d)\n/* f%d adds. */\nstatic int f%d(int a) {\n\treturn M%d(a) + g(a, \"s{\");\n}\n", i, i, i, i, i)
		fmt.Fprintf(&b, "namespace n%d {\nclass C%d : public B {\npublic:\n\tint v;\n\tvoid m() const { f%d(v); }\n};\n}\n", i, i, i)
	}
	return []byte(b.String())
}

func genRuby(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "# C%d counts.\nclass C%d < Base\n  attr_reader :a\n  X%d = 1\n  def m%d(a)\n    if a\n      puts \"#{a} end\"\n    end\n    [1].each do |x| f(x) end\n  end\nend\n", i, i, i, i)
	}
	return []byte(b.String())
}

// BenchmarkParseCLarge and BenchmarkParseRubyLarge parse generated files
// of growing size: the time per byte stays flat when parsing is linear.
func BenchmarkParseCLarge(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		src := genC(n)
		b.Run(fmt.Sprint(len(src)), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := Parse("x.cpp", src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseRubyLarge(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		src := genRuby(n)
		b.Run(fmt.Sprint(len(src)), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := Parse("x.rb", src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCBothBranches: branches that are whole statements are all read, so
// that a function defined for one platform only is found.
func TestCBothBranches(t *testing.T) {
	src := "#ifdef _WIN32\nstatic int sys_open(void) { return 1; }\n#elif defined(__APPLE__)\n#else\nstatic int sys_open(void) { return 2; }\nstatic int posix_only(void) { return 3; }\n#endif\nint after(void) { return 0; }\n"
	f, _ := Parse("x.c", []byte(src))
	var got []string
	for _, s := range f.Symbols {
		got = append(got, fmt.Sprintf("%s %d-%d", s.Name, s.Line, s.EndLine))
	}
	want := []string{"sys_open 2-2", "sys_open 5-5", "posix_only 6-6", "after 8-8"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("symbols\n got %q\nwant %q", got, want)
	}
}

// TestCFunctionPointerResult: a function returning a function pointer is
// found, and the definitions after it too.
func TestCFunctionPointerResult(t *testing.T) {
	src := "void (*(get_cb(void)))(int) {\n\treturn cb;\n}\n\nint next(void) { return 1; }\n"
	f, _ := Parse("x.c", []byte(src))
	var got []string
	for _, s := range f.Symbols {
		got = append(got, fmt.Sprintf("%s %s %d-%d", s.Kind, s.Name, s.Line, s.EndLine))
	}
	want := []string{"func get_cb 1-3", "func next 5-5"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("symbols\n got %q\nwant %q", got, want)
	}
}

// TestCContextualKeywords: final and override are C++ keywords only after
// a declarator; in C they name functions and variables.
func TestCContextualKeywords(t *testing.T) {
	src := "static void final(const char *name) {\n}\nint override = 1;\nstruct S final : B {\n\tvoid f() override;\n};\n"
	f, _ := Parse("x.c", []byte(src))
	var got []string
	for _, s := range f.Symbols {
		got = append(got, fmt.Sprintf("%s %s.%s", s.Kind, s.Parent, s.Name))
	}
	want := []string{"func .final", "var .override", "struct .S", "method S.f"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("symbols\n got %q\nwant %q", got, want)
	}
}
