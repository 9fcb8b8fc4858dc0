package code

// The parts of the index that come from its sibling packages: the parser,
// the ranking model and the history.

import (
	"context"
	"errors"

	"github.com/miramem/mira/code/history"
	"github.com/miramem/mira/code/parse"
	"github.com/miramem/mira/code/rank"
)

type (
	pKind   = parse.Kind
	pFile   = parse.File
	pSymbol = parse.Symbol
	pRef    = parse.Ref
	hStats  = history.Stats
)

// Cochange is a file that changed together with another.
type Cochange = history.Cochange

// Expert is an author of a file.
type Expert = history.Expert

// Commit is a commit of the project's history.
type Commit = history.Commit

func parseLanguage(p string) string { return parse.Language(p) }

func parseFile(p string, src []byte) (*pFile, error) { return parse.Parse(p, src) }

// rankPut gives the ranking model the new version of a file.
func rankPut(m *rank.Model, path, lang string, text []byte, f *pFile) {
	m.Put(rank.Doc{Path: path, Lang: lang, Text: text, File: f})
}

// errRewritten says the indexed commit is gone from the history.
var errRewritten = history.ErrRewritten

// readHistory reads the commits since the one given; a project outside
// any repository has none.
func readHistory(ctx context.Context, root, since string) ([]Commit, string, error) {
	cs, head, err := history.Read(ctx, root, since, 0)
	if errors.Is(err, history.ErrNoRepo) {
		return nil, "", nil
	}
	return cs, head, err
}
