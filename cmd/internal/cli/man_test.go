package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestManPagesListEveryFlag fails when a command has a flag its man page
// does not mention, and checks each page has the sections users look for.
func TestManPagesListEveryFlag(t *testing.T) {
	for name, grammar := range manCommands() {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "..", "..", "man", name+".1.md"))
			if err != nil {
				t.Fatal(err)
			}
			page := strings.ReplaceAll(string(data), `\-`, "-")
			for _, sec := range []string{"# NAME", "# SYNOPSIS", "# DESCRIPTION", "# OPTIONS", "# EXIT STATUS", "# ENVIRONMENT", "# FILES", "# EXAMPLES", "# SEE ALSO"} {
				if !strings.Contains(page, sec+"\n") {
					t.Errorf("%s.1.md has no %s section", name, sec)
				}
			}
			for _, code := range []string{"**0**", "**1**", "**2**", "**11**"} {
				if !strings.Contains(page, code) {
					t.Errorf("%s.1.md EXIT STATUS does not list %s", name, code)
				}
			}
			k, err := kong.New(grammar, kong.Vars(configVars(&Config{}, func(string) string { return "" })), kong.Exit(func(int) {}))
			if err != nil {
				t.Fatal(err)
			}
			var walk func(n *kong.Node)
			walk = func(n *kong.Node) {
				for _, f := range n.Flags {
					if f.Hidden {
						continue
					}
					if !strings.Contains(page, "--"+f.Name) {
						t.Errorf("%s.1.md does not document --%s", name, f.Name)
					}
				}
				for _, c := range n.Children {
					if !strings.Contains(page, "**"+c.Name+"**") {
						t.Errorf("%s.1.md does not document the %s subcommand", name, c.Name)
					}
					walk(c)
				}
			}
			walk(k.Model.Node)
		})
	}
}

// manCommands are the grammars of this package's commands, by name.
func manCommands() map[string]any {
	return map[string]any{
		"mira-remember":  &RememberCmd{},
		"mira-recall":    &RecallCmd{},
		"mira-forget":    &ForgetCmd{},
		"mira-index":     &IndexCmd{},
		"mira-summarize": &SummarizeCmd{},
		"mira-context":   &ContextCmd{},
		"mira-mcp":       &MCPCmd{},
		"mira-sync":      &SyncCmd{},
	}
}
