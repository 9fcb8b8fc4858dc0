package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// /done closes a task in a running session: the next request to the
// model no longer carries it in the standing context, /tasks lists it as
// done (newest first, with ids), and ids that are no task are refused by
// name.
func TestAgentDoneTasks(t *testing.T) {
	x := newAgentEnv(t, llmtest.Text("First."), llmtest.Text("Second."))
	delete(x.env, "MIRA_MODEL")
	var ids []string
	for _, text := range []string{"/remember task: migrate the orders table", "/remember task: write the release notes", "/remember fact: orders live in PostgreSQL"} {
		var rec mem.Record
		if err := json.Unmarshal([]byte(x.ok("", "-p", text, "--output", "jsonl")), &rec); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID)
	}
	x.env["MIRA_MODEL"] = "test-model"
	var out bytes.Buffer
	s := x.session(&out, "--no-extract")
	ctx := t.Context()
	if _, err := s.send(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	if req := x.srv.Requests()[0].Text(); !strings.Contains(req, "migrate the orders table") {
		t.Fatalf("the open task is not in the first request:\n%s", req)
	}
	out.Reset()
	if _, err := s.slash(ctx, "/done "+ids[0]); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "Marked task done: migrate the orders table") {
		t.Errorf("/done printed %q", got)
	}
	if _, err := s.send(ctx, "and now?"); err != nil {
		t.Fatal(err)
	}
	if req := x.srv.Requests()[1].Text(); strings.Contains(req, "migrate the orders table") || !strings.Contains(req, "write the release notes") {
		t.Errorf("after /done, the standing context still has the closed task or lost the open one:\n%s", req)
	}
	out.Reset()
	if _, err := s.slash(ctx, "/tasks"); err != nil {
		t.Fatal(err)
	}
	// Both were created within the second; the order, newest first, is
	// the root package's to test (TestSetStatus).
	got := out.String()
	if strings.Count(got, "\n") != 2 || !strings.Contains(got, "✓ migrate the orders table  (") || !strings.Contains(got, " · done)\n") ||
		!strings.Contains(got, "○ write the release notes  ("+ids[1]) {
		t.Errorf("/tasks = %q", got)
	}
	for arg, want := range map[string]string{
		"/done " + ids[2]:         ids[2] + " is a fact, not a goal or task",
		"/done " + ids[0]:         ids[0],
		"/done " + ids[1] + " ok": `unknown status "ok"`,
		"/done":                   "/done needs the id",
	} {
		_, err := s.slash(ctx, arg)
		var ue *cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a usage error with %q", arg, err, want)
		}
	}
}
