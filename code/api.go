// Package code is Mira's index of a source tree: the files of a project,
// the definitions and references its parsers find in them, the call graph
// those give, and the project's git history, kept in a private cache
// outside the project and brought up to date incrementally. Its queries
// answer what an assistant asks of code: where a name is defined, who calls
// it, which files matter for a request, what changes together, who knows a
// file.
//
// The index is derived and disposable: it lives by default in
// $XDG_CACHE_HOME/mira/code/<dir>-<hash of the root>/, never writes into
// the project, and rebuilds any file of its own that is damaged or of
// another format instead of trusting it.
package code

import (
	"context"
	"errors"
	"time"
)

// errNotBuilt is returned by the parts of the API not built yet.
var errNotBuilt = errors.New("code index: not built yet")

// Options says which project to index and where the index lives.
type Options struct {
	// Root is the project's root directory (absolute; a relative path is
	// made absolute).
	Root string
	// Dir is where the index files live; "" means
	// $XDG_CACHE_HOME/mira/code/<base name of Root>-<short hash of Root>
	// (~/.cache when XDG_CACHE_HOME is unset).
	Dir string
	// Warn, when set, hears of each file that could not be read or parsed;
	// the update goes on without it.
	Warn func(path string, err error)
	// Progress, when set, hears how many of the files to parse are done.
	Progress func(done, total int)
	// Getenv looks up environment variables (XDG_CACHE_HOME); nil means
	// os.Getenv.
	Getenv func(string) string
}

// Index is an open code index. Its methods are safe for concurrent use;
// queries answer from what the last Open or Update loaded and say which
// files changed since (see Status.Stale).
type Index struct {
	opt Options
}

// Open loads the index of opt.Root from disk without scanning the project.
// A missing, damaged or old-format index gives an empty index (Update
// builds it); only an unusable root or index directory is an error.
func Open(ctx context.Context, opt Options) (*Index, error) {
	return nil, errNotBuilt
}

// Update brings the index up to date: it stats every file, re-parses those
// whose size, mtime and content hash changed, drops deleted ones, reads the
// git history from the last indexed commit, and saves the index
// atomically.
func (ix *Index) Update(ctx context.Context) (Stats, error) {
	return Stats{}, errNotBuilt
}

// Status describes the index as loaded, and which files changed on disk
// since (a stat pass; nothing is re-parsed).
func (ix *Index) Status() Status { return Status{} }

// Close releases the index.
func (ix *Index) Close() error { return nil }

// Symbols returns up to k definitions matching q (a name, part of one, or
// words), best first.
func (ix *Index) Symbols(q string, k int) []SymbolHit { return nil }

// Card describes one definition. ref is a name ("Execute"), a qualified
// name ("Command.Execute"), a place ("cmd/run.go:42") or a file's symbol
// ("cmd/run.go#Execute"). With body the Snippet is the whole definition,
// else its first lines (at most 5).
func (ix *Index) Card(ref string, body bool) (Card, error) { return Card{}, errNotBuilt }

// Callers returns the call sites of sym, and of their callers up to depth
// levels (breadth first).
func (ix *Index) Callers(sym string, depth int) []Edge { return nil }

// Callees returns the calls made by sym, and by what they call up to depth
// levels (breadth first).
func (ix *Index) Callees(sym string, depth int) []Edge { return nil }

// Map returns the project's module tree with its most central symbols,
// fitted under budget tokens as count measures them (nil count: 4 bytes a
// token). The order is deterministic.
func (ix *Index) Map(budget int, count func(string) int) Map { return Map{} }

// Touchpoints returns the definitions most relevant to q, as cards with an
// excerpt of the code around them and why each was chosen.
func (ix *Index) Touchpoints(q Query) []Touchpoint { return nil }

// Files returns the files most relevant to q.
func (ix *Index) Files(q Query) []FileHit { return nil }

// Cochange returns up to k files that changed in the same commits as path,
// strongest first.
func (ix *Index) Cochange(path string, k int) []Cochange { return nil }

// Experts returns the authors who changed path, most relevant first.
func (ix *Index) Experts(path string) []Expert { return nil }

// Log returns up to k recent commits touching pathOrSymbol (a path, or a
// symbol as Card accepts it: the commits touching its file), newest first.
func (ix *Index) Log(pathOrSymbol string, k int) []Commit { return nil }

// Stats says what an Update did.
type Stats struct {
	Files     int // files indexed after the update
	Added     int // new files parsed
	Changed   int // changed files re-parsed
	Removed   int // files dropped
	Unchanged int // files whose stat or hash showed no change
	Skipped   int // files left out (binary, too large, unreadable)
	Commits   int // commits read from the history

	Walk    time.Duration // finding and statting files
	Parse   time.Duration // reading and parsing changed files (definitions and references)
	Graph   time.Duration // resolving references into the call graph
	History time.Duration // reading and adding the git history
	Save    time.Duration // writing the index
}

// Status describes an index.
type Status struct {
	Root, Dir string
	Files     int
	Symbols   int
	Refs      int
	Languages map[string]Lang // by language ("" = plain text)
	Skipped   map[string]int  // files left out, by reason: "binary", "too large", "unreadable"
	Head      string          // the commit whose history is indexed; "" = none
	Updated   time.Time       // when the index was last updated; zero = never
	Stale     []string        // files changed, added or deleted on disk since (slash paths, sorted)
}

// Lang counts a language's files, definitions and references.
type Lang struct {
	Files, Symbols, Refs int
}

// Query asks for the code relevant to a request.
type Query struct {
	Text    string
	K       int                // results wanted (0: a default)
	Budget  int                // tokens for the cards (0 = no limit)
	Count   func(string) int   // the tokenizer; nil: 4 bytes a token
	Files   []string           // files the conversation names: their co-change partners are seeds
	Boost   map[string]float64 // path or "path#Symbol" -> weight (from memories that point there)
	Explain bool               // fill Why
}

// Card describes a definition.
type Card struct {
	Kind, Name, Parent string
	Module             string // Go package directory, Python dotted module, JS file, Rust mod path
	Path, Lang         string // slash path relative to the root
	Line, EndLine      int
	Signature, Doc     string
	Snippet            string   // up to 5 lines; with body the whole definition
	Memories           []string // filled by the mira package: memories that point here
	Stale              bool     // the file changed on disk since it was indexed
}

// Touchpoint is a definition relevant to a query.
type Touchpoint struct {
	Card
	Excerpt string // up to 30 lines around the definition
	Score   float64
	Why     []string // why it was retrieved
}

// FileHit is a file relevant to a query.
type FileHit struct {
	Path  string
	Score float64
	Why   []string
	Stale bool
}

// SymbolHit is a definition matching a search.
type SymbolHit struct {
	Card
	Score float64
}

// Edge is a call site: From calls To at Path:Line, Depth levels from the
// symbol asked about (1 = direct).
type Edge struct {
	From, To Card
	Path     string
	Line     int
	Depth    int
}

// Map is the project's module tree, as text fitted to a budget and as data.
type Map struct {
	Text    string
	Tokens  int
	Modules []Module
}

// Module is a directory of the project with its most central definitions.
type Module struct {
	Path    string
	Files   int
	Symbols []Card
}

// Cochange is a file that changed together with another.
type Cochange struct {
	Path   string
	Count  int
	Weight float64
	Last   time.Time
}

// Expert is an author of a file.
type Expert struct {
	Author, Email string
	Commits       int
	Weight        float64
	Last          time.Time
}

// Commit is a commit of the project's history.
type Commit struct {
	Hash          string
	Author, Email string
	When          time.Time
	Subject       string
	Files         []string
}
