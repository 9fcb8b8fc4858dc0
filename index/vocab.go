package index

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
)

// families are the small families of software people name in their notes:
// a word for the kind of thing (database, language, cloud…) and products
// of that kind. "Which database did we pick" is answered by a memory that
// says "We chose PostgreSQL", which does not say "database", and the
// built-in embedder cannot know what PostgreSQL is (it learns only from
// the store's own words). So a query word that names a family also
// searches for its members, at familyWeight, on both halves of the
// search (see textTerms and vectorQuery). It goes one way: "postgres" does
// not find a memory about MySQL, nor one that says only "database".
//
// Each line is "kind words: members", or words without a colon that each
// stand for the others (at familyWeight: unlike an abbreviation's, their
// meanings differ a little); the last line, the words of choosing, is
// searched on the lexical half only (see familyTexts). Words are compared
// after the text
// analyzer (lower case, stemmed), so plurals of a kind word belong to it.
// A member belongs here only when it names the product in almost any
// text: words that are also common English or people's names (go, swift,
// spring, express, cassandra, julia, oracle…) are left out, since each
// would make a query about the family find memories about something else.
var families = []string{
	"database databases db datastore rdbms: postgresql postgres mysql mariadb sqlite sqlite3 mongodb redis dynamodb cockroachdb clickhouse elasticsearch opensearch couchdb neo4j duckdb influxdb timescaledb mssql firestore cosmosdb bigquery",
	"language languages: python golang rust java javascript typescript kotlin scala ruby php perl haskell elixir erlang clojure ocaml csharp fsharp lua dart zig",
	"framework frameworks: react angular vue svelte django flask fastapi rails laravel symfony nextjs nuxt springboot dotnet",
	"cloud clouds: aws azure gcp heroku digitalocean linode vercel netlify cloudflare hetzner",
	"queue queues broker: kafka rabbitmq nats sqs activemq zeromq",
	"ci: jenkins circleci buildkite teamcity",
	"editor editors ide: vim neovim emacs vscode intellij goland pycharm webstorm",
	"cache: redis memcached varnish",
	"container containers: docker podman containerd",
	// The words of choosing: each stands for the others, so "which
	// database did we pick" finds "we chose PostgreSQL".
	"pick picked choose chose chosen decide decided decision select selected opt opted",
}

// familyWeight is how much a family member found for a query's kind word
// weighs against the word itself, on each half of the search: a memory
// that names the kind of thing beats one that names only a product of it,
// other things equal.
const familyWeight = 0.5

// family is one kind word's members, as analysed terms, and how the
// members are written (for the embedder, which reads words, not stems).
type family struct {
	terms []string
	words []string
}

var (
	familyOnce sync.Once
	// familyOf maps an analysed kind word to the families it names.
	familyOf map[string][]*family
	// choiceFamily is the words of choosing.
	choiceFamily *family
)

// familyTable builds familyOf with the index's text analyzer.
func familyTable(a analysis.Analyzer) map[string][]*family {
	familyOnce.Do(func() {
		familyOf = map[string][]*family{}
		for _, line := range families {
			kinds, members, ok := strings.Cut(line, ":")
			if !ok {
				members = kinds
			}
			f := &family{}
			for _, w := range strings.Fields(members) {
				for _, tok := range a.Analyze([]byte(w)) {
					if t := string(tok.Term); !slices.Contains(f.terms, t) {
						f.terms, f.words = append(f.terms, t), append(f.words, w)
					}
				}
			}
			choiceFamily = f // the last
			for _, w := range strings.Fields(kinds) {
				for _, tok := range a.Analyze([]byte(w)) {
					if t := string(tok.Term); !slices.Contains(familyOf[t], f) {
						familyOf[t] = append(familyOf[t], f)
					}
				}
			}
		}
	})
	return familyOf
}

// termGroup is terms that stand for one word of a query at weight: a
// document's best term of the group counts, once.
type termGroup struct {
	terms  []string
	words  []string // as written, for the embedder
	weight float64
	choice bool // the words of choosing
}

// familyGroups returns a group for each family a word of terms (a query's
// analysed terms and their abbreviations) names, each once, without the
// members terms already has; and the words of choosing when text asks
// what was chosen with a phrase ("which queue did we go with"). It is nil
// for most queries.
func familyGroups(a analysis.Analyzer, text string, terms []string) []termGroup {
	if a == nil || len(terms) == 0 {
		return nil
	}
	table := familyTable(a)
	var (
		groups []termGroup
		seen   []*family
	)
	named := make([][]*family, 0, len(terms)+1)
	for _, t := range terms {
		named = append(named, table[t])
	}
	if choicePhrase.MatchString(text) {
		named = append(named, []*family{choiceFamily})
	}
	for _, fs := range named {
		for _, f := range fs {
			if slices.Contains(seen, f) {
				continue
			}
			seen = append(seen, f)
			g := termGroup{weight: familyWeight, choice: f == choiceFamily}
			for i, m := range f.terms {
				if !slices.Contains(terms, m) {
					g.terms, g.words = append(g.terms, m), append(g.words, f.words[i])
				}
			}
			if len(g.terms) > 0 {
				groups = append(groups, g)
			}
		}
	}
	return groups
}

// choicePhrase is the phrases that ask what was chosen without a word of
// choosing.
var (
	choicePhrase = regexp.MustCompile(`(?i)\b(go|went|gone|going) with\W*$|\bsettled? on\b|\bopt(ed)? for\b`)
)

// asksForDecision reports whether a query asks what was picked, chosen or
// decided ("which database did we pick", "what did we decide about
// caching", "why did we choose Go", "which queue did we go with"): a
// memory of kind decision is then what answers it best.
func asksForDecision(text string) bool {
	if text == "" {
		return false
	}
	a := textAnalysis()
	familyTable(a)
	for _, tok := range a.Analyze([]byte(text)) {
		if slices.Contains(choiceFamily.terms, string(tok.Term)) {
			return true
		}
	}
	return choicePhrase.MatchString(text)
}
