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

import "time"

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

// Stats says what an Update did.
type Stats struct {
	Files     int // files indexed after the update
	Added     int // new files parsed
	Changed   int // changed files re-parsed
	Removed   int // files dropped
	Unchanged int // files whose stat or hash showed no change
	Skipped   int // files left out (binary, too large, unreadable)
	Commits   int // commits read from the history

	// Wall time of each part of the update.
	Walk    time.Duration // finding and statting files
	Parse   time.Duration // reading, hashing and parsing changed files (their definitions; the parsers find the references in the same pass)
	Graph   time.Duration // interning the references, and resolving them into the call graph when the update was large (see Phases)
	Rank    time.Duration // splitting, stemming and counting the changed files' words into the ranking model
	History time.Duration // reading and adding the git history
	Save    time.Duration // writing the index

	// Phases groups the same times as a build's phases, in this order:
	// "definitions" (Walk and Parse), "references" (Graph), "ranking"
	// (Rank), "history" and "save", each with the process's CPU time over
	// it (zero where the system does not say). The phases run one after
	// the other, each on every core. An update that changed more than a
	// few hundred files resolves the call graph before it returns;
	// a smaller one leaves that to the first query that needs it.
	Phases []Phase
}

// Phase is one phase of an Update: its wall time, and the CPU time the
// process used meanwhile.
type Phase struct {
	Name      string
	Wall, CPU time.Duration
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
