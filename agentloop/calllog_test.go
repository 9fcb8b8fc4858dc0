package agentloop_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	. "github.com/miramem/mira/agentloop"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// withCallLog has the agent record its calls in the rig's store.
func withCallLog() rigOpt {
	return func(r *rig) { r.cfg.CallLog = r.memory() }
}

// callRecords reads the conversation's call records back.
func (r *rig) callRecords() []CallRecord {
	r.t.Helper()
	lines, err := r.memory().ReadCalls("chat", func(err error) { r.t.Errorf("ReadCalls: %v", err) })
	if err != nil {
		r.t.Fatal(err)
	}
	out := make([]CallRecord, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal(l, &out[i]); err != nil {
			r.t.Fatalf("record %d: %v\n%s", i+1, err, l)
		}
	}
	return out
}

func TestCallRecordForEachStep(t *testing.T) {
	r := newRig(t, []llmtest.Reply{
		{ToolCalls: []llmtest.ToolCall{
			{ID: "c_edit", Name: "edit_file", Arguments: args(map[string]any{"path": "a.txt", "old_string": "one", "new_string": "two"})},
			{ID: "c_bad", Name: "edit_file", Arguments: args(map[string]any{"path": "a.txt", "old_string": "absent", "new_string": "x"})},
			{ID: "c_glob", Name: "glob", Arguments: args(map[string]any{"pattern": "*.txt"})},
		}, Usage: &llmtest.Usage{PromptTokens: 1200, CompletionTokens: 30, CachedTokens: 1024}},
		llmtest.Text("Changed it.").WithUsage(1300, 4, 1152),
	}, withCallLog())
	r.write("a.txt", "one\n")
	r.send("change one to two in a.txt")

	recs := r.callRecords()
	if len(recs) != 2 {
		t.Fatalf("%d call records, want 2 (one per request)", len(recs))
	}
	turns := r.turns()
	var plans []string
	for _, e := range turns {
		if e.Role == "assistant" {
			plans = append(plans, StringField(e, "plan"))
		}
	}
	if len(plans) != 2 || plans[0] != recs[0].ID || plans[1] != recs[1].ID || recs[0].ID == recs[1].ID {
		t.Fatalf("assistant turns name plans %q, records have ids %q and %q", plans, recs[0].ID, recs[1].ID)
	}
	for i, rec := range recs {
		if len(rec.ID) != 12 || rec.Step != i+1 || rec.UserTurn != turns[0].ID || rec.Turn == "" || rec.Model != "test-model" {
			t.Errorf("record %d: id %q step %d user turn %q turn %q model %q", i+1, rec.ID, rec.Step, rec.UserTurn, rec.Turn, rec.Model)
		}
		if len(rec.Plans) == 0 || rec.Plans[0].Part != PartStanding || rec.Plans[0].ID == "" {
			t.Errorf("record %d plans = %+v, want the standing plan first", i+1, rec.Plans)
		}
		if e := rec.Estimated; e.Total <= e.Instructions || e.Instructions == 0 || e.Tools == 0 || e.Conversation == 0 {
			t.Errorf("record %d estimate = %+v", i+1, e)
		}
	}
	if u := recs[0].Reported; u == nil || u.PromptTokens != 1200 || u.CachedTokens != 1024 || u.CompletionTokens != 30 {
		t.Errorf("step 1 reported = %+v, want the fake's usage 1200/1024 cached/30", u)
	}
	if u := recs[1].Reported; u == nil || u.PromptTokens != 1300 || u.CachedTokens != 1152 {
		t.Errorf("step 2 reported = %+v, want 1300/1152 cached", u)
	}
	if recs[1].Estimated.Conversation <= recs[0].Estimated.Conversation {
		t.Errorf("step 2 conversation estimate %d, not more than step 1's %d after the tool results", recs[1].Estimated.Conversation, recs[0].Estimated.Conversation)
	}
	want := []CallOutcome{
		{ID: "c_edit", Tool: "edit_file", Outcome: OutcomeOK, Edit: EditKept},
		{ID: "c_bad", Tool: "edit_file", Outcome: OutcomeError, Edit: EditNotMade},
		{ID: "c_glob", Tool: "glob", Outcome: OutcomeOK},
	}
	if got := recs[0].ToolCalls; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("step 1 tool calls = %+v, want %+v", got, want)
	}
	if len(recs[1].ToolCalls) != 0 {
		t.Errorf("step 2 tool calls = %+v, want none", recs[1].ToolCalls)
	}
	var evPlans []string
	for _, ev := range r.events {
		if ev.Type == "usage" {
			evPlans = append(evPlans, ev.Plan)
		}
	}
	if len(evPlans) != 2 || evPlans[0] != recs[0].ID || evPlans[1] != recs[1].ID {
		t.Errorf("usage events name plans %q, want the records' ids", evPlans)
	}
	if out, err := exec.Command("git", "-C", r.home, "status", "--porcelain").Output(); err != nil || len(out) != 0 {
		t.Errorf("git status after recording = %q, %v; want clean (plans/ is ignored)", out, err)
	}
	line, err := r.memory().FindCall(recs[1].ID, nil)
	if err != nil || !strings.Contains(string(line), `"id":"`+recs[1].ID+`"`) {
		t.Errorf("FindCall(%s) = %s, %v", recs[1].ID, line, err)
	}
}

func TestNoCallLogNoPlanField(t *testing.T) {
	r := newRig(t, []llmtest.Reply{llmtest.Text("Hi.")})
	r.send("hello")
	for _, e := range r.turns() {
		if _, ok := e.Fields()["plan"]; ok {
			t.Errorf("turn %s names a plan with no call log kept", e.ID)
		}
	}
	if _, err := r.agent.Why(context.Background(), "last", ""); !errors.Is(err, ErrNoRecord) {
		t.Errorf("Why without a call log: %v, want ErrNoRecord", err)
	}
}

func TestWhyExcludedAndNeverRetrieved(t *testing.T) {
	r := newRig(t, []llmtest.Reply{llmtest.Text("Sessions expire after 30 minutes.")}, withCallLog(),
		withConfig(func(c *Config) { c.RecallBudget, c.ContextMode = 200, plan.ModeHeavy }))
	long := "Sessions stored in PostgreSQL tables, sessions stored with JSONB" + strings.Repeat(" and a great many details about sessions stored there", 60)
	big := r.remember(&mem.Entry{Kind: mem.KindDecision, Scope: "global", Body: long})
	small := r.remember(&mem.Entry{Kind: mem.KindFact, Scope: "global", Body: "Sessions expire after 30 minutes."})
	never := r.remember(&mem.Entry{Kind: mem.KindDecision, Scope: "global", Body: "Deploys go through the blue green pipeline."})
	r.send("where are sessions stored")

	ans, err := r.agent.Why(context.Background(), "last", "PostgreSQL")
	if err != nil {
		t.Fatal(err)
	}
	if len(ans.Turns) != 1 || len(ans.Turns[0].Findings) != 1 {
		t.Fatalf("Why(last, PostgreSQL) = %+v, want one turn with one finding", ans)
	}
	f := ans.Turns[0].Findings[0]
	if f.ID != big.ID || f.Verdict != VerdictExcluded || f.Reason != "over budget" || f.Rank != 1 || f.Score == nil || f.Part != PartRecall {
		t.Errorf("finding for the big decision = %+v, want excluded over budget at rank 1 in the recall plan", f)
	}

	ans, err = r.agent.Why(context.Background(), "sessions stored", "expire")
	if err != nil {
		t.Fatal(err)
	}
	if f := ans.Turns[0].Findings; len(f) != 1 || f[0].ID != small.ID || f[0].Verdict != VerdictIncluded || f[0].Reason != "in budget" {
		t.Errorf("finding for the small fact = %+v, want included in budget", f)
	}

	ans, err = r.agent.Why(context.Background(), ans.Turns[0].Record.UserTurn, "blue green pipeline")
	if err != nil {
		t.Fatal(err)
	}
	if f := ans.Turns[0].Findings; len(f) != 1 || f[0].ID != never.ID || f[0].Verdict != VerdictNotRetrieved || f[0].Rank != 0 {
		t.Errorf("finding for the deploy decision = %+v, want not retrieved", f)
	}

	if _, err := r.agent.Why(context.Background(), "kubernetes", ""); !errors.Is(err, ErrNoRecord) {
		t.Errorf("Why for words no message has: %v, want ErrNoRecord", err)
	}
}

// Turns written before call records, or edited by hand, name no plan or
// a plan that is no string: the conversation still loads and goes on.
func TestTurnsWithoutPlanStillLoad(t *testing.T) {
	r := newRig(t, []llmtest.Reply{llmtest.Text("Still here.")}, withCallLog())
	old := r.remember(&mem.Entry{Kind: mem.KindTurn, Scope: "chat", Role: "assistant", Source: "agent", Body: "An old reply."})
	odd := r.remember(&mem.Entry{Kind: mem.KindTurn, Scope: "chat", Role: "assistant", Source: "agent", Body: "A hand-edited reply.",
		Extra: map[string]any{"plan": []any{"not", "an", "id"}}})
	r.agent = r.open()
	r.send("are you there")
	if n := len(r.turns()); n != 4 {
		t.Fatalf("%d turns, want the 2 old ones and the new exchange", n)
	}
	for _, id := range []string{old.ID, odd.ID} {
		if _, err := r.agent.Why(context.Background(), id, ""); !errors.Is(err, ErrNoRecord) {
			t.Errorf("Why(%s) for a turn with no record: %v, want ErrNoRecord", id, err)
		}
	}
	if ans, err := r.agent.Why(context.Background(), "last", ""); err != nil || len(ans.Turns) != 1 || ans.Turns[0].Record.Query != "are you there" {
		t.Errorf("Why(last) = %+v, %v", ans, err)
	}
}

// A memory edited by hand may hold a secret the store would refuse: the
// record keeps the start of its text only masked, as the turns do.
func TestCallRecordRedactsTitles(t *testing.T) {
	r := newRig(t, []llmtest.Reply{llmtest.Text("It is in PostgreSQL.")}, withCallLog())
	pass := "S3cr3tPa55w0rd"
	r.remember(&mem.Entry{Kind: mem.KindFact, Scope: "global", Body: "Sessions database: postgres://app:" + pass + "@db:5432/x"})
	r.send("which sessions database")
	recs := r.callRecords()
	if len(recs) != 1 || len(recs[0].Retrieved) != 1 {
		t.Fatalf("records = %+v, want one retrieving the fact", recs)
	}
	if title := recs[0].Retrieved[0].Title; strings.Contains(title, pass) || !strings.Contains(title, "Sessions database") {
		t.Errorf("title = %q, want the password masked", title)
	}
	ans, err := r.agent.Why(context.Background(), "last", "kubernetes")
	if err != nil || len(ans.Matched) != 0 || len(ans.Turns) != 1 || len(ans.Turns[0].Findings) != 0 {
		t.Errorf("Why(last, kubernetes) = %+v, %v; want no memory matched, and no word taken for an id", ans, err)
	}
}
