package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miramem/mira"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
	openai "github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

const exportGo = `package billing

// ExportInvoices writes the invoices of a day as CSV.
func ExportInvoices(invs []Invoice) error {
	for _, inv := range invs {
		writeRow(inv.Total())
	}
	return nil
}

func writeRow(n int) {}
`

const invoiceGo = `package billing

// Invoice is a bill sent to a customer.
type Invoice struct{ Cents int }

// Total is the invoice's total in cents.
func (i Invoice) Total() int { return i.Cents }
`

const mainGo = `package main

import "example.com/shop/billing"

func main() { billing.ExportInvoices(nil) }
`

// codeProject writes a small Go project, with a cache of its own for the
// code index.
func (x *agentEnv) codeProject() {
	x.t.Helper()
	x.env["XDG_CACHE_HOME"] = filepath.Join(filepath.Dir(x.home), ".cache")
	x.write("billing/export.go", exportGo)
	x.write("billing/invoice.go", invoiceGo)
	x.write("cmd/shop/main.go", mainGo)
}

// index builds the code index of dir as mira-code index does.
func (x *agentEnv) index(dir string) {
	x.t.Helper()
	c, err := mira.OpenCode(t0(), mira.CodeOptions{Root: dir, Getenv: func(k string) string { return x.env[k] }})
	if err != nil {
		x.t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Update(t0()); err != nil {
		x.t.Fatal(err)
	}
}

// agentCode opens the store and the agent's code over the project as
// mira-agent does, both closed when the test ends.
func (x *agentEnv) agentCode() *agentCode {
	x.t.Helper()
	getenv := func(k string) string { return x.env[k] }
	m, err := mira.Open(t0(), mira.Options{Home: x.home, Getenv: getenv})
	if err != nil {
		x.t.Fatal(err)
	}
	x.t.Cleanup(func() { m.Close() })
	c := newAgentCode(m, mem.DetectProject(x.proj, ""), getenv, nil)
	x.t.Cleanup(func() { c.Close() })
	return c
}

// The model expands what it needs through the code tool: a card with its
// body, its callers, callees, symbols, touchpoints and what changes with
// a file; a project never indexed is indexed at the first call.
func TestAgentCodeTool(t *testing.T) {
	call := func(id string, args map[string]any) llmtest.ToolCall {
		return llmtest.ToolCall{ID: id, Name: "code", Arguments: jsonArgs(args)}
	}
	x := newAgentEnv(t,
		llmtest.Tools(
			call("card", map[string]any{"action": "card", "query": "ExportInvoices", "body": true}),
			call("callers", map[string]any{"action": "callers", "query": "ExportInvoices"}),
			call("callees", map[string]any{"action": "callees", "query": "billing/export.go#ExportInvoices", "depth": 2}),
			call("symbols", map[string]any{"action": "symbols", "query": "Invoice", "k": 3}),
			call("touch", map[string]any{"action": "touchpoints", "query": "export the invoices"}),
			call("co", map[string]any{"action": "cochange", "query": "billing/export.go"}),
			call("bad", map[string]any{"action": "card", "query": "NoSuchThing"}),
			call("union", map[string]any{"action": "card", "query": []string{"a"}}),
		),
		llmtest.Text("ExportInvoices loops over the invoices."),
	)
	x.codeProject()
	x.ok("", "-p", "what does ExportInvoices do?", "--output", "text")
	reqs := x.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	// The schema has plain types only: every host takes it.
	var def *openai.FunctionDefinition
	for _, tl := range reqs[0].Tools {
		if tl.Function != nil && tl.Function.Name == "code" {
			def = tl.Function
		}
	}
	if def == nil {
		t.Fatalf("no code tool offered: %+v", reqs[0].Tools)
	}
	raw, _ := json.Marshal(def.Parameters)
	var schema jsonschema.Definition
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for name, p := range schema.Properties {
		if p.Type == "" || strings.Contains(string(raw), `"type":[`) {
			t.Errorf("argument %s has no single type: %s", name, raw)
		}
	}
	results := map[string]string{}
	for _, m := range reqs[1].Messages {
		if m.Role == openai.ChatMessageRoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	for id, want := range map[string][]string{
		"card":    {"func ExportInvoices at billing/export.go:4-9", "// ExportInvoices writes the invoices of a day as CSV.", "\t\twriteRow(inv.Total())"},
		"callers": {"cmd/shop/main.go:5  main -> ExportInvoices"},
		"callees": {"ExportInvoices -> writeRow", "ExportInvoices -> Invoice.Total"},
		"symbols": {"billing/invoice.go:4  struct Invoice"},
		"touch":   {"func ExportInvoices at billing/export.go:4-9", "why: "},
		"co":      {`nothing found for "billing/export.go"`},
		"bad":     {"code card \"NoSuchThing\": "},
		"union":   {`argument "query"`},
	} {
		for _, w := range want {
			if !strings.Contains(results[id], w) {
				t.Errorf("tool result %s lacks %q:\n%s", id, w, results[id])
			}
		}
	}
}

// The map is in the standing context and the touchpoints come with the
// message, as the mode says: thin in light, with excerpts in heavy, none
// in off; a project never indexed gives neither.
func TestAgentCodeContext(t *testing.T) {
	x := newAgentEnv(t)
	x.codeProject()
	x.srv.Default(llmtest.Text("ok"))
	x.ok("", "-p", "export the invoices", "--output", "text")
	if r := x.srv.Last(); strings.Contains(r.System(), "## Code map") || strings.Contains(r.LastUser(), "## Code") {
		t.Errorf("code in the context of a project never indexed:\n%s\n%s", r.System(), r.LastUser())
	}
	x.index(x.proj)
	for _, tc := range []struct {
		mode       string
		mapIn      bool
		card, body bool
	}{{"light", true, true, false}, {"heavy", true, true, true}, {"off", false, false, false}} {
		x.ok("", "-p", "export the invoices", "--context-mode", tc.mode, "--output", "text")
		r := x.srv.Last()
		sys, user := r.System(), r.LastUser()
		if got := strings.Contains(sys, "## Code map") && strings.Contains(sys, "use the code tool"[1:]) && strings.Contains(sys, "> billing/"); got != tc.mapIn {
			t.Errorf("%s: map in the standing context %v, want %v:\n%s", tc.mode, got, tc.mapIn, sys)
		}
		if got := strings.Contains(user, "### func · ExportInvoices · billing/export.go:4-9"); got != tc.card {
			t.Errorf("%s: card with the message %v, want %v:\n%s", tc.mode, got, tc.card, user)
		}
		if got := strings.Contains(user, "> \t\twriteRow(inv.Total())"); got != tc.body {
			t.Errorf("%s: excerpt with the message %v, want %v:\n%s", tc.mode, got, tc.body, user)
		}
		if tc.card && !strings.HasSuffix(user, "# Message\n\nexport the invoices") {
			t.Errorf("%s: the message does not end the user turn:\n%s", tc.mode, user)
		}
	}
	// The standing context keeps its bytes from one request to the next
	// while the project's code is what it was.
	x.ok("", "-p", "export the invoices again", "--output", "text")
	a := x.srv.Last().Messages[1].Content
	x.ok("", "-p", "and once more", "--output", "text")
	if b := x.srv.Last().Messages[1].Content; a != b {
		t.Errorf("the standing context changed between two messages:\n%s\n----\n%s", a, b)
	}
}

// /switch moves the code index with the project: the map and the cards
// are the new project's.
func TestAgentCodeSwitch(t *testing.T) {
	x := newAgentEnv(t)
	x.codeProject()
	other := filepath.Join(filepath.Dir(x.proj), "garden")
	x.write("../garden/go.mod", "module example.com/garden\n")
	x.write("../garden/water.go", "package garden\n\n// WaterPlants waters every plant.\nfunc WaterPlants() {}\n")
	x.index(x.proj)
	x.index(other)
	c := x.agentCode()
	mapText := func() string {
		items, err := c.Map(t0(), plan.ModeLight)
		if err != nil || len(items) != 1 {
			t.Fatalf("map: %v, %d items", err, len(items))
		}
		return items[0].Record.Text
	}
	if got := mapText(); !strings.Contains(got, "billing/") {
		t.Fatalf("map of shop:\n%s", got)
	}
	c.switchTo(mem.DetectProject(other, ""))
	if got := mapText(); !strings.Contains(got, "/ (2 files)") || strings.Contains(got, "billing") {
		t.Errorf("map after /switch:\n%s", got)
	}
	items, err := c.Touchpoints(context.Background(), plan.ModeLight, "water the plants", nil)
	if err != nil || len(items) == 0 || items[0].Code.Path != "water.go" {
		t.Errorf("touchpoints after /switch: %v %+v", err, items)
	}
	out, err := agentCodeTool{c}.Card(t0(), "WaterPlants", false)
	if err != nil || !strings.Contains(out, "water.go:4") {
		t.Errorf("code tool after /switch: %q, %v", out, err)
	}
}

// The files the conversation names, in the message or in a recent turn,
// are the touchpoints' files: their code comes with the message, saying
// why.
func TestAgentCodeNamedFiles(t *testing.T) {
	x := newAgentEnv(t)
	x.codeProject()
	x.index(x.proj)
	x.srv.Default(llmtest.Text("ok"))
	const why = "named in the conversation"
	x.ok("", "-p", "export the invoices", "--output", "text")
	if user := x.srv.Last().LastUser(); strings.Contains(user, why) {
		t.Errorf("a file named with no file named:\n%s", user)
	}
	x.ok("", "-p", "see cmd/shop/main.go: export the invoices", "--output", "text")
	if user := x.srv.Last().LastUser(); !strings.Contains(user, "cmd/shop/main.go") || !strings.Contains(user, why) {
		t.Errorf("the file the message names is not among its code:\n%s", user)
	}
	x.ok("", "-p", "and export them again", "--output", "text")
	if user := x.srv.Last().LastUser(); !strings.Contains(user, why) {
		t.Errorf("the file a recent turn names is not among the message's code:\n%s", user)
	}
}

// The code tool does not build an index for a project whose root is the
// user's home directory, or that holds more files than its bound: it
// tells the model and the user to run mira-code index.
func TestAgentCodeToolRefusesHugeTrees(t *testing.T) {
	x := newAgentEnv(t,
		llmtest.Tools(llmtest.ToolCall{ID: "card", Name: "code", Arguments: jsonArgs(map[string]any{"action": "card", "query": "ExportInvoices"})}),
		llmtest.Text("no index"),
	)
	x.codeProject()
	x.env["HOME"] = x.proj
	_, _, errs := x.run("", "-p", "what does ExportInvoices do?", "--output", "text")
	reqs := x.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var result string
	for _, m := range reqs[1].Messages {
		if m.Role == openai.ChatMessageRoleTool {
			result = m.Content
		}
	}
	for _, out := range []string{result, errs} {
		if !strings.Contains(out, "home directory") || !strings.Contains(out, `"mira-code index"`) {
			t.Errorf("no word of the home directory and mira-code index in:\n%s", out)
		}
	}
	if mira.CodeIndexed(x.proj, "", func(k string) string { return x.env[k] }) {
		t.Error("the home directory was indexed")
	}

	delete(x.env, "HOME")
	c := x.agentCode()
	c.maxFiles = 2
	if _, err := (agentCodeTool{c}).Card(t0(), "ExportInvoices", false); err == nil || !strings.Contains(err.Error(), "more than 2 files") || !strings.Contains(err.Error(), "mira-code index") {
		t.Errorf("a tree over the bound: %v", err)
	}
	c.maxFiles = 10
	if out, err := (agentCodeTool{c}).Card(t0(), "ExportInvoices", false); err != nil || !strings.Contains(out, "billing/export.go:4") {
		t.Errorf("a tree under the bound: %q, %v", out, err)
	}
}
