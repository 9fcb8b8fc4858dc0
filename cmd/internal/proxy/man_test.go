package proxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/miramem/mira/cmd/internal/cli"
)

// TestManPage fails when a flag of mira-proxy, or a section users look
// for, is missing from its man page.
func TestManPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "man", "mira-proxy.1.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(string(data), `\-`, "-")
	for _, sec := range []string{"# NAME", "# SYNOPSIS", "# DESCRIPTION", "# OPTIONS", "# EXIT STATUS", "# ENVIRONMENT", "# FILES", "# EXAMPLES", "# SEE ALSO"} {
		if !strings.Contains(page, sec+"\n") {
			t.Errorf("mira-proxy.1.md has no %s section", sec)
		}
	}
	for _, code := range []string{"**0**", "**1**", "**2**", "**11**", "**130**"} {
		if !strings.Contains(page, code) {
			t.Errorf("mira-proxy.1.md EXIT STATUS does not list %s", code)
		}
	}
	k, err := kong.New(&Cmd{}, kong.Vars(cli.KongVars(&cli.Config{}, func(string) string { return "" })), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range k.Model.Node.Flags {
		if !f.Hidden && !strings.Contains(page, "--"+f.Name) {
			t.Errorf("mira-proxy.1.md does not document --%s", f.Name)
		}
	}
	for _, h := range []string{HeaderConversation, HeaderMira, HeaderRemember, HeaderPlan, HeaderWarning, "Server-Timing"} {
		if !strings.Contains(page, h) {
			t.Errorf("mira-proxy.1.md does not mention the header %s", h)
		}
	}
}
