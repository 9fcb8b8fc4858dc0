package agentloop_test

import (
	"context"
	"strings"
	"testing"

	"github.com/miramem/mira"
	. "github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/agentloop/tools"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// pinLibrary is the test library with what pins need: memories by id
// and the state of tasks, from the store through mira.Memory.
type pinLibrary struct {
	*testLibrary
	m *mira.Memory
}

func (l pinLibrary) Get(ctx context.Context, id string) (mem.Record, error) {
	e, err := l.m.Get(ctx, id)
	if err != nil {
		return mem.Record{}, err
	}
	return e.Record(), nil
}

func (l pinLibrary) TaskClosed(ctx context.Context, id string) (bool, error) {
	return l.m.TaskClosed(ctx, id)
}

// newPinRig is a rig whose library reads memories by id and whose
// toolbox has suggest_pin.
func newPinRig(t *testing.T, replies ...llmtest.Reply) *rig {
	t.Helper()
	r := newRig(t, replies, withConfig(func(c *Config) { c.RecallK = -1 }))
	r.cfg.Library = pinLibrary{r.lib, r.memory()}
	r.agent = r.open()
	if err := r.reg.Register(tools.NewSuggestPinTool(r.agent)); err != nil {
		t.Fatal(err)
	}
	return r
}

// pinOf is the view of id in /context pins, or nil.
func pinOf(a *Agent, id string) *PinView {
	v, err := a.Pins(context.Background())
	if err != nil {
		panic(err)
	}
	for _, p := range v.Items {
		if p.ID == id {
			return &p
		}
	}
	return nil
}

// standingReason is the reason the last standing plan gives id.
func standingReason(a *Agent, id string) string {
	p, _ := a.LastPlans()
	for _, e := range append(append([]plan.Entry(nil), p.Included...), p.Excluded...) {
		if e.ID == id {
			return e.Reason
		}
	}
	return "(absent)"
}

const noteText = "The invoice exporter writes UTF-8 CSV with semicolons as separators.\nIt runs nightly from cron.\nThird line, left out of the thin card."

// quote is a reply that quotes a distinctive span of the note.
const quote = "As noted, the exporter writes UTF-8 CSV with semicolons as separators, so Excel opens it."

func TestEphemeralPinPromotedThenEnds(t *testing.T) {
	r := newPinRig(t)
	note := r.remember(&mem.Entry{Kind: mem.KindFact, Scope: mem.DefaultScope, Body: noteText})
	if err := r.agent.Pin(t.Context(), note.ID, PinEphemeral, 0); err != nil {
		t.Fatal(err)
	}
	// Used three turns in a row: kept, then promoted to a lease.
	var acts []float64
	for i := range 3 {
		r.srv.Push(llmtest.Reply{Content: quote})
		r.send("how is the export formatted?")
		req := r.srv.Last()
		if sys := req.Messages[1].Content; i == 0 && (!strings.Contains(sys, "It runs nightly from cron.") || strings.Contains(sys, "Third line")) {
			t.Fatalf("the ephemeral pin is not in the standing context as a thin card:\n%s", sys)
		}
		if got := standingReason(r.agent, note.ID); got != plan.ReasonPinned {
			t.Fatalf("turn %d: reason %q, want pinned", i+1, got)
		}
		p := pinOf(r.agent, note.ID)
		if p == nil {
			t.Fatalf("turn %d: the pin is gone", i+1)
		}
		acts = append(acts, p.Activation)
	}
	if !(acts[0] < acts[1] && acts[1] < acts[2]) {
		t.Errorf("activation does not rise with use: %v", acts)
	}
	p := pinOf(r.agent, note.ID)
	if p.Kind != PinLeased || !p.Promoted || !p.Session {
		t.Fatalf("after three uses: %+v, want a promoted lease of the session", p)
	}
	// Not referenced any more: activation decays, and the lease ends.
	prev := p.Activation
	ended := 0
	for i := range 12 {
		r.srv.Push(llmtest.Reply{Content: "Something else entirely."})
		r.send("let us talk about the weather")
		p := pinOf(r.agent, note.ID)
		if p == nil || p.Kind == "" {
			ended = i + 1
			break
		}
		if p.Activation >= prev {
			t.Fatalf("activation did not decay: %v then %v", prev, p.Activation)
		}
		prev = p.Activation
	}
	if ended == 0 {
		t.Fatal("the promoted lease never ended")
	}
	if e, _ := r.memory().Get(t.Context(), note.ID); e.Pin != "" {
		t.Errorf("the session's pins reached the store: pin %q", e.Pin)
	}
}

func TestEphemeralPinUnusedLastsOneTurn(t *testing.T) {
	r := newPinRig(t)
	note := r.remember(&mem.Entry{Kind: mem.KindFact, Scope: mem.DefaultScope, Body: noteText})
	if err := r.agent.Pin(t.Context(), note.ID, PinEphemeral, 0); err != nil {
		t.Fatal(err)
	}
	r.srv.Push(llmtest.Reply{Content: "Fine."}, llmtest.Reply{Content: "Fine."})
	r.send("hello")
	if got := standingReason(r.agent, note.ID); got != plan.ReasonPinned {
		t.Fatalf("first turn: %q", got)
	}
	r.send("hello again")
	if got := standingReason(r.agent, note.ID); got != "(absent)" {
		t.Errorf("second turn: %q, want the ephemeral pin gone", got)
	}
	if strings.Contains(r.srv.Last().Messages[1].Content, "semicolons") {
		t.Error("the ephemeral pin is still in the standing context")
	}
}

func TestTurnLeaseEndsAfterItsTurns(t *testing.T) {
	r := newPinRig(t)
	note := r.remember(&mem.Entry{Kind: mem.KindFact, Scope: mem.DefaultScope, Body: noteText})
	if err := r.agent.Pin(t.Context(), note.ID, PinLeased, 2); err != nil {
		t.Fatal(err)
	}
	want := []string{plan.ReasonPinned, plan.ReasonPinned, plan.ReasonExpiredPin, "(absent)"}
	for i, w := range want {
		// Even quoted every turn: a lease of turns is the user's word.
		r.srv.Push(llmtest.Reply{Content: quote})
		r.send("the export again")
		if got := standingReason(r.agent, note.ID); got != w {
			t.Errorf("turn %d: reason %q, want %q", i+1, got, w)
		}
	}
	if err := r.agent.Pin(t.Context(), note.ID, PinLeased, 0); err == nil || !strings.Contains(err.Error(), "number of turns") {
		t.Errorf("a lease of no turns: %v", err)
	}
	if err := r.agent.Pin(t.Context(), "01JZZZZZZZZZZZZZZZZZZZZZZZ", PinEphemeral, 0); err == nil || !strings.Contains(err.Error(), "01JZZZZZZZZZZZZZZZZZZZZZZZ") {
		t.Errorf("pinning an unknown id: %v", err)
	}
}

func TestTaskLeaseEndsWhenTaskDone(t *testing.T) {
	r := newPinRig(t)
	m := r.memory()
	res, err := m.Remember(t.Context(), []*mem.Entry{{Kind: mem.KindTask, Body: "ship the exporter"}}, mira.RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	task := res.Items[0].Entry
	note := r.remember(&mem.Entry{Kind: mem.KindFact, Scope: mem.DefaultScope, Body: noteText})
	if _, err := m.PinLease(t.Context(), note.ID, mem.PinLeased, mira.Lease{Task: task.ID}); err != nil {
		t.Fatal(err)
	}
	r.srv.Push(llmtest.Reply{Content: "ok"}, llmtest.Reply{Content: "ok"})
	r.send("status?")
	if got := standingReason(r.agent, note.ID); got != plan.ReasonPinned {
		t.Fatalf("while the task is open: %q", got)
	}
	if p := pinOf(r.agent, note.ID); p == nil || p.Kind != mem.PinLeased || p.Session || !strings.Contains(p.Until, task.ID) {
		t.Errorf("/context pins shows %+v", p)
	}
	if _, err := m.SetStatus(t.Context(), task.ID, "done", mira.RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	r.send("and now?")
	if got := standingReason(r.agent, note.ID); got != plan.ReasonExpiredPin {
		t.Errorf("once the task is done: %q, want %q", got, plan.ReasonExpiredPin)
	}
	if strings.Contains(r.srv.Last().Messages[1].Content, "semicolons") {
		t.Error("the expired lease is still in the standing context")
	}
}

func TestSuggestPinIsShownNotApplied(t *testing.T) {
	r := newPinRig(t)
	note := r.remember(&mem.Entry{Kind: mem.KindFact, Scope: mem.DefaultScope, Body: noteText})
	r.srv.Push(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "suggest_pin", Arguments: args(map[string]string{"id": note.ID, "reason": "every export question needs it"})}}},
		llmtest.Reply{Content: "I suggested a pin."},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "suggest_pin", Arguments: args(map[string]string{"id": "01JZZZZZZZZZZZZZZZZZZZZZZZ", "reason": "x"})}}},
		llmtest.Reply{Content: "That one does not exist."},
	)
	r.send("keep the export format in mind")
	fresh := r.agent.NewSuggestions()
	if len(fresh) != 1 || fresh[0].ID != note.ID || fresh[0].Reason != "every export question needs it" {
		t.Fatalf("suggestions = %+v", fresh)
	}
	if len(r.agent.NewSuggestions()) != 0 {
		t.Error("the suggestions stay new after they were shown")
	}
	if got := pinsOf(t, r.agent).Suggestions; len(got) != 1 || got[0].ID != note.ID {
		t.Errorf("/context pins suggestions = %+v", got)
	}
	if p := pinOf(r.agent, note.ID); p != nil && p.Kind != "" {
		t.Errorf("a suggestion was applied: %+v", p)
	}
	if e, _ := r.memory().Get(t.Context(), note.ID); e.Pin != "" {
		t.Errorf("a suggestion reached the store: %q", e.Pin)
	}
	r.send("another")
	var res *Event
	for i := range r.events {
		if r.events[i].Type == "tool_result" && r.events[i].CallID == "c2" {
			res = &r.events[i]
		}
	}
	if res == nil || !res.IsError || !strings.Contains(res.Text, "01JZZZZZZZZZZZZZZZZZZZZZZZ") {
		t.Errorf("suggesting an unknown id: %+v", res)
	}
	// Accepting it is pinning it: the suggestion goes.
	if err := r.agent.Pin(t.Context(), note.ID, PinEphemeral, 0); err != nil {
		t.Fatal(err)
	}
	if got := pinsOf(t, r.agent).Suggestions; len(got) != 0 {
		t.Errorf("suggestions after pinning: %+v", got)
	}
}

func TestRecalledMemoryQuotedBecomesEphemeral(t *testing.T) {
	r := newRig(t, nil)
	r.cfg.Library = pinLibrary{r.lib, r.memory()}
	r.agent = r.open()
	note := r.remember(&mem.Entry{Kind: mem.KindFact, Scope: mem.DefaultScope, Body: noteText})
	r.srv.Push(llmtest.Reply{Content: quote}, llmtest.Reply{Content: "Weather is fine."})
	r.send("which separators does the invoice exporter use")
	p := pinOf(r.agent, note.ID)
	if p == nil || p.Kind != PinEphemeral || !p.Session {
		t.Fatalf("a recalled memory the reply quoted: %+v, want an ephemeral pin", p)
	}
	r.send("weather")
	if got := standingReason(r.agent, note.ID); got != plan.ReasonPinned {
		t.Errorf("next turn: %q, want pinned", got)
	}
}

func pinsOf(t *testing.T, a *Agent) *PinsView {
	t.Helper()
	v, err := a.Pins(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return v
}
