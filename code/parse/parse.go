package parse

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrUnknownLanguage is returned by Parse for a path whose language Language does not know.
var ErrUnknownLanguage = errors.New("unknown language")

// Kind is what a Symbol defines.
type Kind string

// The kinds of symbols the extractors produce.
const (
	KindFunc      Kind = "func"
	KindMethod    Kind = "method"
	KindClass     Kind = "class"
	KindStruct    Kind = "struct"
	KindInterface Kind = "interface"
	KindType      Kind = "type"
	KindEnum      Kind = "enum"
	KindTrait     Kind = "trait"
	KindImpl      Kind = "impl"
	KindConst     Kind = "const"
	KindVar       Kind = "var"
	KindField     Kind = "field"
	KindModule    Kind = "module"
	KindMacro     Kind = "macro"
)

// File is what Parse extracts from one source file.
type File struct {
	Lang    string
	Package string   // Go package name; Python dotted module from the path; Rust module path; "" else
	Imports []string // import paths or modules as written
	Symbols []Symbol // in source order
	Refs    []Ref    // identifiers used: calls, type uses, selector names
}

// Symbol is one definition.
type Symbol struct {
	Kind      Kind
	Name      string // simple name: "Execute"
	Parent    string // enclosing type, class, impl or module name; "" at top level
	Line      int    // 1-based first line of the definition
	EndLine   int    // 1-based last line, body included
	Signature string // one line, whitespace collapsed
	Doc       string // doc comment or docstring, comment markers stripped, trimmed
	Exported  bool   // visible outside its module
}

// Ref is one use of an identifier.
type Ref struct {
	Name string // the identifier: "Execute"
	Qual string // the qualifier before the dot, if any: "x" in x.Execute()
	Line int
	Call bool // in call position
}

var extLang = map[string]string{
	".go":      "go",
	".py":      "python",
	".pyi":     "python",
	".js":      "javascript",
	".mjs":     "javascript",
	".cjs":     "javascript",
	".jsx":     "javascript",
	".ts":      "typescript",
	".mts":     "typescript",
	".cts":     "typescript",
	".tsx":     "tsx",
	".rs":      "rust",
	".java":    "java",
	".c":       "c",
	".h":       "c",
	".cc":      "cpp",
	".cpp":     "cpp",
	".cxx":     "cpp",
	".c++":     "cpp",
	".hh":      "cpp",
	".hpp":     "cpp",
	".hxx":     "cpp",
	".h++":     "cpp",
	".ipp":     "cpp",
	".tpp":     "cpp",
	".inl":     "cpp",
	".rb":      "ruby",
	".rake":    "ruby",
	".gemspec": "ruby",
	".ru":      "ruby",
}

// baseLang names the language of files known by their whole name.
var baseLang = map[string]string{
	"Rakefile": "ruby", "Gemfile": "ruby", "Guardfile": "ruby", "Vagrantfile": "ruby",
}

// Language names the language of path from its extension, or "" when it is not
// one Parse understands.
func Language(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	if l, ok := extLang[ext]; ok {
		return l
	}
	return baseLang[filepath.Base(path)]
}

// Parse extracts the definitions and references of one file; path, relative to the
// project's root, gives the language and, for Python and Rust, the module. It never
// panics; a
// file it cannot fully understand gives what could be extracted and no error. The
// errors are ErrUnknownLanguage, and an internal error naming the file should a
// scanner fail (a bug).
func Parse(path string, src []byte) (*File, error) {
	return parse(path, src, true)
}

// ParseSymbols is Parse without references: definitions and imports only, which is
// cheaper (BenchmarkParseGoroot measures both).
func ParseSymbols(path string, src []byte) (*File, error) {
	return parse(path, src, false)
}

func parse(path string, src []byte, refs bool) (f *File, err error) {
	lang := Language(path)
	defer func() {
		// A scanner bug must not take the index down with it; the fuzz tests hunt
		// for these, and the error names the file for the index's warning.
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("parse %s: internal error: %v", path, r)
		}
	}()
	switch lang {
	case "go":
		f = parseGo(path, src, refs)
	case "python":
		f = parsePython(path, src, refs)
	case "javascript", "typescript", "tsx":
		f = parseJS(src, refs)
	case "rust":
		f = parseRust(path, src, refs)
	case "java":
		f = parseJava(src, refs)
	case "c", "cpp":
		f = parseC(src, refs)
	case "ruby":
		f = parseRuby(src, refs)
	default:
		return nil, fmt.Errorf("parse %s: %w", path, ErrUnknownLanguage)
	}
	f.Lang = lang
	return f, nil
}

// maxSig bounds a signature so a long initialiser or a minified line does not
// become one.
const maxSig = 200

// oneLine collapses runs of white space to one space, none after an opening or
// before a closing bracket, trims the ends and cuts the result at maxSig bytes (on a
// character boundary, marked with "…"). It stops reading there, so a minified
// file's one long line costs no more than a short one.
func oneLine[T ~string | ~[]byte](s T) string {
	var b strings.Builder
	space := false
	var last byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
			space = b.Len() > 0 && last != '(' && last != '['
			continue
		}
		if b.Len() >= maxSig && c&0xC0 != 0x80 {
			b.WriteString("…")
			break
		}
		if space && c != ')' && c != ']' {
			b.WriteByte(' ')
		}
		space = false
		b.WriteByte(c)
		last = c
	}
	return b.String()
}
