package agent

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/llm/llmtest"
)

// tool runs another of Mira's commands over the env's store.
func (x *agentEnv) tool(main func([]string, *cli.IO) int, stdin string, args ...string) (int, string, string) {
	x.t.Helper()
	var out, errb bytes.Buffer
	o := &cli.IO{
		In: strings.NewReader(stdin), Out: &out, Err: &errb,
		Getenv: func(k string) string { return x.env[k] },
		Getwd:  func() (string, error) { return x.proj, nil },
	}
	code := main(append([]string{"--home", x.home}, args...), o)
	return code, out.String(), errb.String()
}

func TestAgentPlanRecordShownAndExplained(t *testing.T) {
	x := newAgentEnv(t)
	long := "Sessions are stored in PostgreSQL with JSONB columns. " + strings.Repeat("The session table keeps every attribute of a login, its expiry and its device. ", 300)
	for _, m := range []string{long, "Deploys go through the blue green pipeline on Fridays."} {
		if code, _, errs := x.tool(cli.Remember, m, "--kind", "decision"); code != 0 {
			t.Fatalf("mira-remember: exit %d: %s", code, errs)
		}
	}
	x.write("a.txt", "one\n")
	x.srv.Push(
		llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "edit_file", Arguments: `{"path":"a.txt","old_string":"one","new_string":"two"}`}).WithUsage(900, 20, 512),
		llmtest.Text("Sessions live in PostgreSQL.").WithUsage(950, 8, 896),
	)
	x.ok("", "-y", "--context-mode", "heavy", "-p", "where are sessions stored in PostgreSQL")

	var plans []string
	for _, e := range x.turns("chat") {
		if e.Role == "assistant" {
			p, _ := e.Fields()["plan"].(string)
			plans = append(plans, p)
		}
	}
	if len(plans) != 2 || plans[0] == "" || plans[1] == "" {
		t.Fatalf("assistant turns name plans %q, want one each", plans)
	}

	// Piped: the record as JSON, with the fake server's usage.
	code, out, errs := x.tool(cli.Context, "", "--show-plan", plans[0])
	if code != 0 {
		t.Fatalf("mira-context --show-plan: exit %d: %s", code, errs)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("--show-plan piped = %q: %v", out, err)
	}
	rep, _ := rec["reported"].(map[string]any)
	if rec["id"] != plans[0] || rep["prompt_tokens"] != 900.0 || rep["cached_tokens"] != 512.0 {
		t.Errorf("--show-plan record = %v", rec)
	}
	// On a terminal: readable.
	_, out, _ = x.tool(cli.Context, "", "--show-plan", plans[0], "--output", "text")
	for _, want := range []string{"plan " + plans[0], "\nin (", "\nout (", "over budget", "estimated", "reported  900 prompt (512 cached)", "edit_file", "edit kept"} {
		if !strings.Contains(out, want) {
			t.Errorf("--show-plan text lacks %q:\n%s", want, out)
		}
	}
	code, _, errs = x.tool(cli.Context, "", "--show-plan", "0123456789ab")
	if code != cli.ExitUsage || !strings.Contains(errs, "--show-plan") || !strings.Contains(errs, "no call record") {
		t.Errorf("--show-plan of an unknown id: exit %d, %q", code, errs)
	}

	// Why did the agent not know about the sessions table, nor the deploys?
	out = x.ok("", "--output", "text", "context", "why", "last", "session table")
	if !strings.Contains(out, "NOT SHOWN: left out of the recall context: over budget") || !strings.Contains(out, "retrieved #1") {
		t.Errorf("why last session table:\n%s", out)
	}
	out = x.ok("", "--output", "text", "context", "why", "sessions stored", "blue green pipeline")
	if !strings.Contains(out, "NOT SHOWN: not retrieved") {
		t.Errorf("why for the deploys:\n%s", out)
	}
	rows := jsonLines(t, x.ok("", "-p", "/context why "+plans[1]+" 'blue green'", "--output", "jsonl"))
	if len(rows) != 1 {
		t.Fatalf("why as JSON: %v", rows)
	}
	if code, _, errs := x.run("", "context", "why", "kubernetes"); code != cli.ExitUsage || !strings.Contains(errs, "no call record") {
		t.Errorf("why for no recorded message: exit %d, %q", code, errs)
	}
}

func TestAgentNoPlanLog(t *testing.T) {
	x := newAgentEnv(t)
	x.srv.Default(llmtest.Text("fine"))
	x.ok("", "--no-plan-log", "-p", "hello")
	for _, e := range x.turns("chat") {
		if _, ok := e.Fields()["plan"]; ok {
			t.Errorf("turn %s names a plan with --no-plan-log", e.ID)
		}
	}
	if _, err := os.Stat(filepath.Join(x.home, "plans", "calls")); !os.IsNotExist(err) {
		t.Errorf("plans/calls exists after --no-plan-log: %v", err)
	}
}
