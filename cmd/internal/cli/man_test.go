package cli

import (
	"os"
	"path/filepath"
	"reflect"
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
		"mira-code":      &CodeCmd{},
	}
}

// TestConfigPageListsEveryKey fails when the configuration file has a key
// that mira-config(5) does not document.
func TestConfigPageListsEveryKey(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "man", "mira-config.5.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(string(data), `\-`, "-")
	var walk func(t reflect.Type, prefix string, depth int)
	walk = func(typ reflect.Type, prefix string, depth int) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			key := prefix + name
			if f.Type.Kind() == reflect.Struct && depth < 1 {
				walk(f.Type, key+".", depth+1)
				continue
			}
			if !strings.Contains(page, "**"+key) {
				t.Errorf("mira-config.5.md does not document %s", key)
			}
		}
	}
	walk(reflect.TypeFor[Config](), "", 0)
}

// TestOverviewPages checks the pages of the mira command and the overview
// name every command.
func TestOverviewPages(t *testing.T) {
	for _, page := range []string{"mira.1.md", "mira.7.md"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "man", page))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range Commands {
			if !strings.Contains(string(data), "**mira-"+c.Name+"**(1)") {
				t.Errorf("%s does not name mira-%s(1)", page, c.Name)
			}
		}
	}
}
