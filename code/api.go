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
	"bytes"
	"encoding/json"
	"time"
)

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
	Files     int `json:"files,omitempty"`     // files indexed after the update
	Added     int `json:"added,omitempty"`     // new files parsed
	Changed   int `json:"changed,omitempty"`   // changed files re-parsed
	Removed   int `json:"removed,omitempty"`   // files dropped
	Unchanged int `json:"unchanged,omitempty"` // files whose stat or hash showed no change
	Skipped   int `json:"skipped,omitempty"`   // files left out (binary, too large, unreadable)
	Commits   int `json:"commits,omitempty"`   // commits read from the history

	// Wall time of each part of the update, written to JSON in
	// milliseconds (see MarshalJSON).
	Walk    time.Duration `json:"walk_ms,omitempty"`    // finding and statting files
	Parse   time.Duration `json:"parse_ms,omitempty"`   // reading, hashing and parsing changed files (their definitions; the parsers find the references in the same pass)
	Graph   time.Duration `json:"graph_ms,omitempty"`   // interning the references, and resolving them into the call graph when the update was large (see Phases)
	Rank    time.Duration `json:"rank_ms,omitempty"`    // splitting, stemming and counting the changed files' words into the ranking model
	History time.Duration `json:"history_ms,omitempty"` // reading and adding the git history
	Save    time.Duration `json:"save_ms,omitempty"`    // writing the index
	Took    time.Duration `json:"took_ms,omitempty"`    // the whole update, filled by the mira package

	// Phases groups the same times as a build's phases, in this order:
	// "definitions" (Walk and Parse), "references" (Graph), "ranking"
	// (Rank), "history" and "save", each with the process's CPU time over
	// it (zero where the system does not say). The phases run one after
	// the other, each on every core. An update that changed more than a
	// few hundred files resolves the call graph before it returns;
	// a smaller one leaves that to the first query that needs it.
	Phases []Phase `json:"phases,omitempty"`
}

// Phase is one phase of an Update: its wall time, and the CPU time the
// process used meanwhile.
type Phase struct {
	Name      string        `json:"name"`
	Wall, CPU time.Duration `json:"-"`
}

// Status describes an index.
type Status struct {
	Root      string          `json:"root,omitempty"`
	Dir       string          `json:"dir,omitempty"`
	Files     int             `json:"files,omitempty"`
	Symbols   int             `json:"symbols,omitempty"`
	Refs      int             `json:"refs,omitempty"`
	Languages map[string]Lang `json:"languages,omitempty"` // by language ("" = plain text)
	Skipped   map[string]int  `json:"skipped,omitempty"`   // files left out, by reason: "binary", "too large", "unreadable"
	Head      string          `json:"head,omitempty"`      // the commit whose history is indexed; "" = none
	Updated   time.Time       `json:"updated,omitzero"`    // when the index was last updated; zero = never (JSON: RFC 3339, UTC, seconds)
	Stale     []string        `json:"stale,omitempty"`     // files changed, added or deleted on disk since (slash paths, sorted)
}

// Lang counts a language's files, definitions and references.
type Lang struct {
	Files   int `json:"files,omitempty"`
	Symbols int `json:"symbols,omitempty"`
	Refs    int `json:"refs,omitempty"`
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
	Kind      string   `json:"kind,omitempty"`
	Name      string   `json:"name,omitempty"`
	Parent    string   `json:"parent,omitempty"`
	Module    string   `json:"module,omitempty"` // Go package directory, Python dotted module, JS file, Rust mod path
	Path      string   `json:"path,omitempty"`   // slash path relative to the root
	Lang      string   `json:"lang,omitempty"`
	Line      int      `json:"line,omitempty"`
	EndLine   int      `json:"end_line,omitempty"`
	Signature string   `json:"signature,omitempty"`
	Doc       string   `json:"doc,omitempty"`
	Snippet   string   `json:"snippet,omitempty"`  // up to 5 lines; with body the whole definition
	Memories  []string `json:"memories,omitempty"` // filled by the mira package: memories that point here
	Stale     bool     `json:"stale,omitempty"`    // the file changed on disk since it was indexed
}

// Touchpoint is a definition relevant to a query.
type Touchpoint struct {
	Card
	Excerpt string   `json:"excerpt,omitempty"` // up to 30 lines around the definition
	Score   float64  `json:"score,omitempty"`
	Why     []string `json:"why,omitempty"` // why it was retrieved
}

// FileHit is a file relevant to a query.
type FileHit struct {
	Path  string   `json:"path,omitempty"`
	Score float64  `json:"score,omitempty"`
	Why   []string `json:"why,omitempty"`
	Stale bool     `json:"stale,omitempty"`
}

// SymbolHit is a definition matching a search.
type SymbolHit struct {
	Card
	Score float64 `json:"score,omitempty"`
}

// Edge is a call site: From calls To at Path:Line, Depth levels from the
// symbol asked about (1 = direct).
type Edge struct {
	From  Card   `json:"from"`
	To    Card   `json:"to"`
	Path  string `json:"path,omitempty"`
	Line  int    `json:"line,omitempty"`
	Depth int    `json:"depth,omitempty"`
}

// Map is the project's module tree, as text fitted to a budget and as data.
type Map struct {
	Text    string   `json:"text,omitempty"`
	Tokens  int      `json:"tokens,omitempty"`
	Modules []Module `json:"modules,omitempty"`
}

// Module is a directory of the project with its most central definitions.
type Module struct {
	Path    string `json:"path,omitempty"`
	Files   int    `json:"files,omitempty"`
	Symbols []Card `json:"symbols,omitempty"`
}

// MarshalJSON writes the stats with their times in whole milliseconds.
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	return marshalJSON(struct {
		plain
		Walk    int64 `json:"walk_ms,omitempty"`
		Parse   int64 `json:"parse_ms,omitempty"`
		Graph   int64 `json:"graph_ms,omitempty"`
		History int64 `json:"history_ms,omitempty"`
		Rank    int64 `json:"rank_ms,omitempty"`
		Save    int64 `json:"save_ms,omitempty"`
		Took    int64 `json:"took_ms,omitempty"`
	}{plain(s), ms(s.Walk), ms(s.Parse), ms(s.Graph), ms(s.History), ms(s.Rank), ms(s.Save), ms(s.Took)})
}

// MarshalJSON writes the phase with its times in whole milliseconds.
func (p Phase) MarshalJSON() ([]byte, error) {
	return marshalJSON(struct {
		Name string `json:"name"`
		Wall int64  `json:"wall_ms"`
		CPU  int64  `json:"cpu_ms"`
	}{p.Name, p.Wall.Milliseconds(), p.CPU.Milliseconds()})
}

// MarshalJSON writes the status with its time in RFC 3339, in UTC and
// whole seconds.
func (s Status) MarshalJSON() ([]byte, error) {
	type plain Status
	var updated string
	if !s.Updated.IsZero() {
		updated = s.Updated.UTC().Format(time.RFC3339)
	}
	return marshalJSON(struct {
		plain
		Updated string `json:"updated,omitempty"`
	}{plain(s), updated})
}

// marshalJSON is json.Marshal without escaping HTML: a path or a
// signature keeps its < and &.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
