// Package parse extracts the definitions and references of one source file, for the
// code index. It is pure Go with no dependency outside the standard library, and
// never panics: a file it cannot fully understand gives what could be read.
//
// What each language gets:
//
// Go (.go) uses go/parser, so declarations are exact: functions, methods (Parent is
// the receiver's type name without pointer or type parameters), struct, interface
// and other types, aliases, package-level constants and variables, struct fields
// and interface methods (Parent is the type), doc comments, and imports. Bodies are
// blanked by a small lexer before parsing (positions kept), which makes parsing
// several times cheaper; the references in bodies come from that lexer: calls
// (f(, x.f(, f[T]() with Qual the identifier before the dot), selector names and
// composite literal types T{; Qual is the last identifier before the dot, looking
// through brackets as go/ast would (m for m[i].f(), f for f(x).g()). Type uses come
// from the AST outside bodies (parameters, results, fields, composite literals);
// inside bodies only composite literal types count (not local var types, type
// assertions or func literal parameters). Local declarations inside bodies are not
// symbols. A file go/parser rejects is parsed whole and gives what go/parser could
// read.
//
// Python (.py, .pyi): classes, functions, methods and nested functions (Parent is the
// enclosing class or function), module-level variables (UPPER_CASE names are
// constants) and class attributes as fields. Spans follow indentation; decorators
// are not part of the span but their comment block counts as doc. Doc is the
// docstring, else a # comment block directly above. Imports are the modules of
// import and from statements (relative ones keep their dots). References are calls
// and attribute uses, and a class's bases. Package is the dotted module of the path.
// Not read: assignments inside functions, attributes set on self, conditional or
// dynamic definitions beyond their syntax.
//
// JavaScript (.js .mjs .cjs .jsx), TypeScript (.ts .mts .cts) and TSX (.tsx):
// function declarations, classes with their methods, accessors and fields, arrow
// functions and function expressions bound by const/let/var (at any depth, Parent
// the enclosing definition), other top-level const/let/var, methods of object
// literals bound to a name (const api = { get() {} }), functions assigned to
// A.prototype.m (a method of A), exports.f or module.exports.f (exported), TypeScript
// interfaces with
// their members, type aliases, enums with their members, namespaces and declared
// modules, and export default. Exported means the export keyword (members follow
// their class, less private, protected and #names). Doc is a JSDoc /** */ block, or
// a // block, directly above. Imports come from import, export … from, require()
// and import(). References are calls, new, member names, and capitalised names in
// type positions. Regular expression literals are told from division by the token
// before the slash, which can be wrong in rare code; JSX text is read as code, so a
// quote in it can hide the rest of that line. Not read: destructured bindings,
// computed member names ([Symbol.iterator]() {}), objects assigned to exports,
// class expressions bound by assignment. Decorators are skipped (their calls are
// references) and are not part of the span.
//
// Rust (.rs): fn (methods inside impl and trait, Parent the impl's type or the
// trait), struct and union with their fields, enum with its variants (kind field),
// trait, impl (Name the type implemented, so impl Display for Foo is "Foo"), mod with
// its inner //! doc, macro_rules, const, static and type. Doc is the /// or /** */
// block above the item and its attributes. Exported means pub without a restriction
// (pub(crate) is not exported); items of traits and trait impls follow the trait.
// Imports are the use trees as written. References are calls, path calls (Qual the
// segment before ::), macro calls (name!), field uses and capitalised type names.
// Package is the module path from the file's place under src/. Not read: items
// produced by macros, and the contents of macro_rules.
//
// Java (.java): classes, interfaces, enums (constants as fields), records and
// annotation types, nested and local ones too (Parent the enclosing type), methods
// and constructors, fields (only the first name of int a, b), package and imports.
// The span starts at the annotations; the signature leaves them out. Doc is the
// Javadoc block above. Exported means public, or a member of an interface.
// References are calls, new T, member names and capitalised type names. Not read:
// methods in the bodies of enum constants and anonymous classes (their calls become
// references), lambdas.
//
// C (.c .h) and C++ (.cc .cpp .cxx .c++ .hh .hpp .hxx .h++ .ipp .tpp .inl), one
// scanner: function definitions (a prototype outside a class is a declaration and
// not listed), methods defined in a class or out of it as A::b (Parent A; a method
// when A is not a namespace of the file), operators (operator==), constructors and
// destructors (~A), structs, unions (kind struct), classes and enums with their
// members (fields, method declarations, enumerators as kind const with Parent the
// enum), typedefs and using aliases (kind type; typedef struct { … } T is the struct
// T), namespaces (kind module), file-level variables (not extern ones), and #define
// macros with the first line as signature. Doc is the comment block that begins a
// line directly above (/* */, //, Doxygen's /** and ///). Exported means not static
// and not in an anonymous namespace, and public in a class (struct members by
// default). Imports are the #include paths. Of #if … #else … #endif every branch
// is read when each is whole statements, else the first (never #if 0's): a header
// written in two branches is read once; macros are taken from every branch.
// References are calls (Qual the name before ., -> or ::), member names, names
// after struct, union, enum or class, and capitalised names, in macro bodies too.
// Not read: K&R-style parameter declarations, definitions inside function bodies,
// definitions produced by macros (DEFINE_LIST(x) { … } is a function named
// DEFINE_LIST), templates' angle brackets beyond a heuristic.
//
// Ruby (.rb .rake .gemspec .ru, Rakefile, Gemfile): modules and classes (A::B
// gives B with Parent A), def with self. and other receivers, operator methods
// and endless defs, attr_reader/writer/accessor names (kind field), alias and
// alias_method, and constants (NAME = value outside methods). Parent is the
// enclosing class or module; class << self bodies belong to the class. Spans end
// at the matching end, told from modifiers (x if y) by position. Exported is
// false after a bare private or protected and for private def. Doc is the #
// block above. Imports are require, require_relative and load. References are
// calls with parentheses, receivers' methods (x.y, A::y), command calls (puts x)
// and constants. Heredocs, %-literals, regular expressions and =begin blocks are
// skipped as text. Not read: methods defined by define_method or class_eval
// strings, private :name after the definition, Struct.new blocks.
//
// Other languages: Language returns "" and Parse returns ErrUnknownLanguage; the
// index still searches them as text.
//
// The speed of all this is measured by BenchmarkParseGoroot (the Go toolchain's own
// sources) and BenchmarkParseTree (any tree, for the scanners).
package parse
