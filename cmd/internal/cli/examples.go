package cli

import (
	"fmt"
	"strings"

	"github.com/alecthomas/kong"
)

// examples are the "Examples:" block at the end of each command's --help:
// a few real lines, each also in the command's man page.
var examples = map[string][]string{
	"mira-remember": {
		`mira-remember --kind decision --tag db "We chose PostgreSQL for JSONB"`,
		`mira-remember --lines --kind fact --scope shop < facts.txt`,
		`mira-remember --pin leased --until 72h "Code freeze until the release is out"`,
	},
	"mira-recall": {
		`mira-recall "how do users log in" | mira-context --mode light`,
		`mira-recall --kind decision auth`,
		`mira-recall --scope shop --since 7d deploy | jq -r .id`,
		`mira-recall --explain -k 3 postgres`,
	},
	"mira-context": {
		`mira-recall "how do we refresh auth tokens" | mira-context --mode light`,
		`mira-recall -k 40 "billing migration" | mira-context --mode heavy --budget 12000 --meter`,
	},
	"mira-summarize": {
		`*/15 * * * * mira-summarize --all --lock-timeout 60s    # crontab`,
		`mira-summarize --show --scope conv-42 --output text`,
	},
	"mira-forget": {
		`mira-forget --reason "moved to the wiki" 01JD3ZK4Q8V6N2M7T5R9W1X0YB`,
		`mira-recall --tag scratch -k 1000 | mira-forget --reason cleanup`,
	},
	"mira-index": {
		`mira-index status`,
		`mira-index rebuild`,
		`mira-index watch -v &`,
	},
	"mira-code": {
		`mira-code touchpoints --explain "prices must be integers in cents"`,
		`mira-code card Store.Head --body`,
		`mira-code callers --depth 2 DetectProject`,
		`mira-code map --budget 1500 | pbcopy`,
		`git diff --name-only | xargs -n1 mira-code cochange`,
	},
	"mira-mcp": {
		`claude mcp add mira -- mira-mcp`,
		`MIRA_MCP_TOKEN=$(openssl rand -hex 16) mira-mcp --http 0.0.0.0:7777 -v`,
	},
	"mira-sync": {
		`mira-sync`,
		`mira-sync --clone git@example.com:me/memory.git        # on the other machine`,
	},
	"mira-agent": {
		`export OPENAI_BASE_URL=http://localhost:11434/v1 MIRA_MODEL=qwen3:8b`,
		`mira-agent`,
	},
	"mira-proxy": {
		`OPENAI_API_KEY=sk-... MIRA_MODEL=gpt-4.1-mini mira-proxy -v &`,
	},
	"mira home": {
		`git -C "$(mira home)" log --oneline`,
	},
	"mira config": {
		`mira config | grep -v default`,
	},
}

// helpWithExamples prints kong's help, then the command's examples.
func helpWithExamples(name string) kong.HelpPrinter {
	return func(options kong.HelpOptions, ctx *kong.Context) error {
		if err := kong.DefaultHelpPrinter(options, ctx); err != nil {
			return err
		}
		ex := examples[name]
		if len(ex) == 0 {
			return nil
		}
		fmt.Fprintf(ctx.Stdout, "\nExamples:\n")
		for _, e := range ex {
			fmt.Fprintf(ctx.Stdout, "  %s\n", strings.TrimSpace(e))
		}
		return nil
	}
}
