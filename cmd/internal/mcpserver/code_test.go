package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miramem/mira"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeSession connects a client to a server whose code tools answer about
// a small Go project, with a cache of its own.
func codeSession(t *testing.T, withProject bool, prep ...func(root string, getenv func(string) string)) *mcp.ClientSession {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "shop")
	for name, src := range map[string]string{
		"go.mod":             "module example.com/shop\n",
		"billing/export.go":  "package billing\n\n// ExportInvoices writes the invoices of a day as CSV.\nfunc ExportInvoices(invs []Invoice) error {\n\tfor _, inv := range invs {\n\t\twriteRow(inv.Total())\n\t}\n\treturn nil\n}\n\nfunc writeRow(n int) {}\n",
		"billing/invoice.go": "package billing\n\n// Invoice is a bill sent to a customer.\ntype Invoice struct{ Cents int }\n\n// Total is the invoice's total in cents.\nfunc (i Invoice) Total() int { return i.Cents }\n",
		"cmd/shop/main.go":   "package main\n\nimport \"example.com/shop/billing\"\n\nfunc main() { billing.ExportInvoices(nil) }\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"XDG_CACHE_HOME": filepath.Join(dir, ".cache")}
	getenv := func(k string) string { return env[k] }
	m, err := mira.Open(t.Context(), mira.Options{Home: filepath.Join(dir, "home"), Config: &mira.Config{}, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	for _, f := range prep {
		f(root, getenv)
	}
	opt := Options{Version: "test", Getenv: getenv}
	if withProject {
		opt.CodeRoot = root
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := New(m, opt).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and returns its text and its structured content
// decoded into out.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if out != nil && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %s: %v", name, b, err)
		}
	}
	return text.String(), res.IsError
}

func TestCodeTools(t *testing.T) {
	cs := codeSession(t, true)

	var search CodeSearchOut
	text, isErr := call(t, cs, "code_search", map[string]any{"query": "export the invoices", "excerpts": true}, &search)
	if isErr || len(search.Touchpoints) == 0 || search.Touchpoints[0].Name != "ExportInvoices" ||
		search.Touchpoints[0].Path != "billing/export.go" || search.Touchpoints[0].Excerpt == "" ||
		!strings.Contains(text, "func ExportInvoices at billing/export.go:4-9") {
		t.Errorf("code_search touchpoints = %q, %+v", text, search)
	}
	search = CodeSearchOut{}
	text, isErr = call(t, cs, "code_search", map[string]any{"query": "export the invoices", "find": "files", "k": 2}, &search)
	if isErr || len(search.Files) == 0 || len(search.Files) > 2 || search.Files[0].Path != "billing/export.go" {
		t.Errorf("code_search files = %q, %+v", text, search)
	}

	var sym CodeSymbolOut
	text, isErr = call(t, cs, "code_symbol", map[string]any{"ref": "ExportInvoices", "body": true}, &sym)
	if isErr || sym.Card == nil || sym.Card.Line != 4 || !strings.Contains(sym.Card.Snippet, "writeRow(inv.Total())") ||
		!strings.Contains(text, "// ExportInvoices writes the invoices of a day as CSV.") {
		t.Errorf("code_symbol card = %q, %+v", text, sym)
	}
	sym = CodeSymbolOut{}
	text, isErr = call(t, cs, "code_symbol", map[string]any{"ref": "ExportInvoices", "show": "callers"}, &sym)
	if isErr || len(sym.Calls) != 1 || sym.Calls[0].From.Name != "main" || sym.Calls[0].Path != "cmd/shop/main.go" ||
		!strings.Contains(text, "cmd/shop/main.go:5  main -> ExportInvoices") {
		t.Errorf("code_symbol callers = %q, %+v", text, sym)
	}
	sym = CodeSymbolOut{}
	text, isErr = call(t, cs, "code_symbol", map[string]any{"ref": "ExportInvoices", "show": "callees", "depth": 2}, &sym)
	if isErr || !strings.Contains(text, "ExportInvoices -> writeRow") || !strings.Contains(text, "ExportInvoices -> Invoice.Total") {
		t.Errorf("code_symbol callees = %q, %+v", text, sym)
	}

	var mp CodeMapOut
	text, isErr = call(t, cs, "code_map", map[string]any{"budget": 500}, &mp)
	if isErr || !strings.Contains(mp.Text, "billing/") || mp.Tokens == 0 || mp.Tokens > 500 || len(mp.Modules) == 0 || text != mp.Text {
		t.Errorf("code_map = %q, %+v", text, mp)
	}

	// Bad arguments are tool errors the model can read.
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"code_symbol", map[string]any{"ref": "NoSuchThing"}, "code_search"},
		{"code_symbol", map[string]any{"ref": "ExportInvoices", "show": "siblings"}, "show"},
		{"code_search", map[string]any{"query": ""}, "query"},
		{"code_search", map[string]any{"query": "x", "k": 1000}, "k"},
	} {
		if text, isErr := call(t, cs, tc.name, tc.args, nil); !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v = %q (error %v), want an error naming %q", tc.name, tc.args, text, isErr, tc.want)
		}
	}
}

// Without a project, the code tools say so.
func TestCodeToolsWithoutProject(t *testing.T) {
	cs := codeSession(t, false)
	if text, isErr := call(t, cs, "code_map", nil, nil); !isErr || !strings.Contains(text, "no project") {
		t.Errorf("code_map without a project = %q (error %v)", text, isErr)
	}
}

// The context tool takes code as mira-context does: with a query, the
// code map and the query's cards from an index that exists (built by
// mira-code index or by a code tool), never building one; none in mode
// off or with no_code; the files named count.
func TestContextCode(t *testing.T) {
	ask := func(cs *mcp.ClientSession, args map[string]any) string {
		t.Helper()
		var out ContextOut
		if _, isErr := call(t, cs, "context", args, &out); isErr {
			t.Fatalf("context %v failed", args)
		}
		return out.Prompt
	}
	q := map[string]any{"query": "export the invoices"}
	cs := codeSession(t, true)
	if p := ask(cs, q); strings.Contains(p, "ExportInvoices") || strings.Contains(p, "## Code") {
		t.Errorf("code in the context without an index:\n%s", p)
	}
	call(t, cs, "code_map", nil, nil) // builds the index
	if p := ask(cs, q); !strings.Contains(p, "## Code map") || !strings.Contains(p, "ExportInvoices · billing/export.go") {
		t.Errorf("no code map and cards once the index is built:\n%s", p)
	}

	indexed := codeSession(t, true, func(root string, getenv func(string) string) {
		c, err := mira.OpenCode(t.Context(), mira.CodeOptions{Root: root, Getenv: getenv})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Update(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	if p := ask(indexed, q); !strings.Contains(p, "## Code map") || !strings.Contains(p, "ExportInvoices · billing/export.go") {
		t.Errorf("no code from an index mira-code built:\n%s", p)
	}
	if p := ask(indexed, map[string]any{"query": "export the invoices", "mode": "heavy", "files": []string{"cmd/shop/main.go"}}); !strings.Contains(p, "named in the conversation") {
		t.Errorf("the files named do not count:\n%s", p)
	}
	for _, args := range []map[string]any{
		{"query": "export the invoices", "mode": "off"},
		{"query": "export the invoices", "no_code": true},
		{},
	} {
		if p := ask(indexed, args); strings.Contains(p, "## Code") || strings.Contains(p, "billing/export.go") {
			t.Errorf("code in the context of %v:\n%s", args, p)
		}
	}
}
