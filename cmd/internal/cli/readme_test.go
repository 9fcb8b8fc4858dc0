package cli

import (
	"os"
	"strings"
	"testing"
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
	} {
		if !strings.Contains(readme, line) {
			t.Errorf("README.md no longer shows %q: update it and testdata/script/readme.txtar together", line)
		}
	}
}
