package agent

import (
	"github.com/miramem/mira/cmd/internal/cli"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestAgentManPage fails when a flag or slash command of mira-agent is
// missing from its man page, or a section users look for is.
func TestAgentManPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "man", "mira-agent.1.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(string(data), `\-`, "-")
	for _, sec := range []string{"# NAME", "# SYNOPSIS", "# DESCRIPTION", "# OPTIONS", "# SLASH COMMANDS", "# EXIT STATUS", "# ENVIRONMENT", "# FILES", "# EXAMPLES", "# SEE ALSO"} {
		if !strings.Contains(page, sec+"\n") {
			t.Errorf("mira-agent.1.md has no %s section", sec)
		}
	}
	for _, code := range []string{"**0**", "**1**", "**2**", "**11**", "**130**"} {
		if !strings.Contains(page, code) {
			t.Errorf("mira-agent.1.md EXIT STATUS does not list %s", code)
		}
	}
	k, err := kong.New(&Cmd{}, kong.Vars(cli.KongVars(&cli.Config{}, func(string) string { return "" })), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range k.Model.Node.Flags {
		if !f.Hidden && !strings.Contains(page, "--"+f.Name) {
			t.Errorf("mira-agent.1.md does not document --%s", f.Name)
		}
	}
	for _, c := range agentSlashCommands {
		if !strings.Contains(page, "**"+c.name+"**") {
			t.Errorf("mira-agent.1.md does not document %s", c.name)
		}
	}
}
