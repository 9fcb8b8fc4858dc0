package agent

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// /done closes a task in a running session: the next request to the
// model no longer carries it in the standing context, /tasks lists it as
// done (newest first, with ids), and ids that are no task are refused by
// name.
func TestAgentDoneTasks(t *testing.T) {
	x := newAgentEnv(t, llmtest.Text("First."), llmtest.Text("Second."))
	ids := x.rememberAll("/remember task: migrate the orders table", "/remember task: write the release notes", "/remember fact: orders live in PostgreSQL")
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
	wantUsageErrors(t, s, map[string]string{
		"/done " + ids[2]:         ids[2] + " is a fact, not a goal or task",
		"/done " + ids[0]:         ids[0],
		"/done " + ids[1] + " ok": `unknown status "ok"`,
		"/done":                   "/done needs the id",
	})
}

// The model closes a task with its task_done tool: the task is done in the
// store and leaves the next request's standing context; a fact's id, a
// closed version's id and an unknown status are refused by name, as
// mira-mcp's task_done refuses them, and change nothing.
func TestAgentTaskDoneTool(t *testing.T) {
	x := newAgentEnv(t)
	ids := x.rememberAll("/remember task: migrate the orders table", "/remember fact: orders live in PostgreSQL")
	call := func(id string, args map[string]any) llmtest.Reply {
		return llmtest.Tools(llmtest.ToolCall{ID: id, Name: "task_done", Arguments: jsonArgs(args)})
	}
	x.srv.Push(
		call("d", map[string]any{"id": ids[0]}), llmtest.Text("Closed it."),
		call("f", map[string]any{"id": ids[1]}),
		call("o", map[string]any{"id": ids[0]}),
		call("s", map[string]any{"id": ids[0], "status": "finished"}),
		llmtest.Text("Refused."),
		llmtest.Text("Next."),
	)
	var out bytes.Buffer
	s := x.session(&out, "--no-extract")
	ctx := t.Context()
	if _, err := s.send(ctx, "the migration is finished"); err != nil {
		t.Fatal(err)
	}
	reqs := x.srv.Requests()
	if !slices.ContainsFunc(reqs[0].Tools, func(tl openai.Tool) bool { return tl.Function != nil && tl.Function.Name == "task_done" }) {
		t.Fatalf("task_done is not offered: %v", reqs[0].Tools)
	}
	if res := lastTool(reqs[1]); !strings.Contains(res, "Marked task "+ids[0]+" done") {
		t.Fatalf("task_done = %q", res)
	}
	tasks, err := s.lib.m.Tasks(ctx, s.scopes(), mem.KindTask, 0)
	if err != nil || len(tasks) != 1 || tasks[0].Status != "done" || tasks[0].Text != "migrate the orders table" {
		t.Fatalf("tasks after task_done = %+v, %v", tasks, err)
	}
	done := tasks[0].ID
	if _, err := s.send(ctx, "close the others"); err != nil {
		t.Fatal(err)
	}
	reqs = x.srv.Requests()
	for i, want := range []string{ids[1] + " is a fact, not a goal or task", ids[0], "finished"} {
		res := lastTool(reqs[3+i])
		if !strings.Contains(res, want) || strings.Contains(res, "Marked") {
			t.Errorf("task_done refusal %d = %q, want it to name %q", i, res, want)
		}
	}
	if _, err := s.send(ctx, "what is open?"); err != nil {
		t.Fatal(err)
	}
	if req := x.srv.Requests()[6].Text(); strings.Contains(req, "migrate the orders table") {
		t.Errorf("the closed task is still standing:\n%s", req)
	}
	after, err := s.lib.m.Tasks(ctx, s.scopes(), mem.KindTask, 0)
	if err != nil || len(after) != 1 || after[0].ID != done {
		t.Errorf("the refusals changed the tasks: %+v, %v", after, err)
	}
}

// lastTool is the content of a request's last tool message.
func lastTool(r llmtest.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == openai.ChatMessageRoleTool {
			return r.Messages[i].Content
		}
	}
	return ""
}

// /goals lists the goals open and closed, newest first, with ids, status
// and the progress of the tasks that name them by a tag goal:<id>, also
// after the goal's own status changed (a new id) and a task was closed.
func TestAgentGoalsProgress(t *testing.T) {
	x := newAgentEnv(t)
	delete(x.env, "MIRA_MODEL")
	var out bytes.Buffer
	s := x.session(&out, "--no-extract")
	ctx := t.Context()
	remember := func(kind, text string, tags ...string) string {
		t.Helper()
		e, _, err := s.lib.remember(ctx, text, kind, tags, "cli")
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	old := remember(mem.KindGoal, "retire the old billing system")
	ship := remember(mem.KindGoal, "ship the agent")
	t1 := remember(mem.KindTask, "write the release notes", "goal:"+ship)
	remember(mem.KindTask, "tag the release", "goal:"+ship, "release")
	remember(mem.KindTask, "export the invoices", "goal:"+old)
	remember(mem.KindTask, "water the plants")
	for _, c := range []string{"/done " + t1, "/done " + old} {
		if _, err := s.slash(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	if _, err := s.slash(ctx, "/goals"); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != 2 {
		t.Fatalf("/goals = %q", out.String())
	}
	// The closed goal is a new version, so the newest.
	for i, want := range []string{"✓ retire the old billing system  (", "○ ship the agent  (" + ship + " · scope shop · open · 1/2 tasks done)"} {
		if !strings.HasPrefix(got[i], want) {
			t.Errorf("/goals line %d = %q, want it to start %q", i, got[i], want)
		}
	}
	if !strings.HasSuffix(got[0], " · done · 0/1 task done)") {
		t.Errorf("/goals closed goal = %q", got[0])
	}
	out.Reset()
	s.c.Output = "jsonl"
	if _, err := s.slash(ctx, "/goals"); err != nil {
		t.Fatal(err)
	}
	var line struct {
		Goal       mem.Record `json:"goal"`
		TasksDone  int        `json:"tasks_done"`
		TasksTotal int        `json:"tasks_total"`
	}
	last := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(last[len(last)-1]), &line); err != nil || line.Goal.ID != ship || line.TasksDone != 1 || line.TasksTotal != 2 {
		t.Errorf("/goals jsonl = %q (%v)", out.String(), err)
	}
}
