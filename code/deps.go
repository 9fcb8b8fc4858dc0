package code

// The parts of the index that come from its sibling packages. Until they
// land, these stand-ins keep the index buildable.

import (
	"context"
	"time"

	"github.com/miramem/mira/code/parse"
	"github.com/miramem/mira/code/rank"
)

type (
	pKind   = parse.Kind
	pFile   = parse.File
	pSymbol = parse.Symbol
	pRef    = parse.Ref
)

func parseLanguage(p string) string { return parse.Language(p) }

func parseFile(p string, src []byte) (*pFile, error) { return parse.Parse(p, src) }

// rankPut gives the ranking model the new version of a file.
func rankPut(m *rank.Model, path, lang string, text []byte, f *pFile) {}

type hStats struct{ Commits []Commit }

func (s *hStats) Add(c []Commit) { s.Commits = append(c, s.Commits...) }

func (s *hStats) Cochange(p string, k int, now time.Time) []Cochange { return nil }

func (s *hStats) Experts(p string, now time.Time) []Expert { return nil }

func (s *hStats) Log(p string, k int) []Commit { return nil }

func readHistory(ctx context.Context, root, since string) ([]Commit, string, error) {
	return nil, "", nil
}
