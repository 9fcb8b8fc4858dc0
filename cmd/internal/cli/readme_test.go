package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/miramem/mira"
)

// TestReadmeExamples checks that README.md shows the commands that
// testdata/script/readme.txtar runs on a fresh store, so that neither
// changes without the other.
func TestReadmeExamples(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, line := range []string{
		`mira-remember --kind decision --tag db "We chose PostgreSQL for JSONB"`,
		`mira-recall "which database did we pick" -k 5`,
		`mira-recall database | mira-context --mode light`,
		`mira-summarize --all `,
		`git -C ~/.local/share/mira log --oneline`,
		"delete\n`$MIRA_HOME/.index/` and the next command rebuilds it",
		"`mira-forget ID…` | tombstone: the file moves under `entries/<scope>/deleted/`",
		"`mira-index status\\|rebuild\\|watch`",
		`mira-code touchpoints --explain "carts must total in cents"`,
		`mira-code card Cart.Total --body; mira-code map --budget 1500`,
	} {
		if !strings.Contains(readme, line) {
			t.Errorf("README.md no longer shows %q: update it and testdata/script/readme.txtar together", line)
		}
	}
}

// yamlKeyLine is a commented-out line of YAML: a key, or an indented line.
var yamlKeyLine = regexp.MustCompile(`^( |[a-z_]+:)`)

// TestReadmeConfigExample checks that the README's config example is a
// valid configuration that names no server, which would make a user
// who copies it wait on ports where nothing listens, and that its
// commented-out server sections are valid once uncommented.
func TestReadmeConfigExample(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Configuration\n")
	if !ok {
		t.Fatal("README.md has no Configuration section")
	}
	_, rest, ok := strings.Cut(sec, "config.yaml`")
	if !ok {
		t.Fatal("the Configuration section names no config.yaml")
	}
	var example, uncommented []string
	for _, line := range strings.Split(rest, "\n")[1:] {
		if line == "" && len(example) > 0 {
			break
		}
		if l, ok := strings.CutPrefix(line, "    "); ok {
			example = append(example, l)
			if c, ok := strings.CutPrefix(l, "# "); ok && yamlKeyLine.MatchString(c) {
				l = c
			}
			uncommented = append(uncommented, l)
		}
	}
	if len(example) < 10 {
		t.Fatalf("found no config example: %q", example)
	}
	cfg, err := mira.ParseConfig([]byte(strings.Join(example, "\n")))
	if err != nil {
		t.Fatalf("README config example: %v", err)
	}
	if cfg.Rerank.BaseURL != "" || cfg.LLM.Model != "" || cfg.LLM.BaseURL != "" || cfg.Embed.BaseURL != "" || cfg.Embed.Name != "" {
		t.Errorf("README config example configures a server: %+v %+v %+v", cfg.Rerank, cfg.LLM, cfg.Embed)
	}
	full, err := mira.ParseConfig([]byte(strings.Join(uncommented, "\n")))
	if err != nil {
		t.Fatalf("README config example, uncommented: %v", err)
	}
	if full.Rerank.BaseURL == "" || full.LLM.Model == "" || full.Embed.Name == "" {
		t.Errorf("README config example does not show the llm, embed and rerank sections")
	}
}
