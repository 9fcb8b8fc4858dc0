package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every command's --help ends with its examples, and every example is
// also on the command's man page.
func TestHelpExamples(t *testing.T) {
	for name, grammar := range manCommands() {
		var out, errb bytes.Buffer
		o := &IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
		if code := Main(name, "", grammar, []string{"--help"}, o); code != 0 {
			t.Fatalf("%s --help: exit %d: %s", name, code, errb.String())
		}
		help := out.String()
		if len(examples[name]) == 0 {
			t.Errorf("%s has no examples", name)
			continue
		}
		_, block, ok := strings.Cut(help, "\nExamples:\n")
		if !ok {
			t.Errorf("%s --help has no Examples block:\n%s", name, help)
			continue
		}
		for _, e := range examples[name] {
			if !strings.Contains(block, e) {
				t.Errorf("%s --help lacks the example %q", name, e)
			}
		}
		if g, _, _ := strings.Cut(help, "\nExamples:\n"); !strings.Contains(g, "Global flags:\n  --home") {
			t.Errorf("%s --help does not group the global flags", name)
		}
	}
	for name, ex := range examples {
		page := strings.ReplaceAll(name, " ", "-")
		if strings.HasPrefix(name, "mira ") {
			page = "mira"
		}
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "man", page+".1.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ex {
			cmd, _, _ := strings.Cut(e, "  #")
			if !strings.Contains(string(data), strings.TrimSpace(cmd)) {
				t.Errorf("man/%s.1.md lacks the --help example %q", page, cmd)
			}
		}
	}
}
