package extract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeModel answers CompleteJSON from scripted replies the way the real
// client does: a reply that does not decode or fails the check is sent
// back once for repair (the next reply); an error reply is a call that
// failed after the client's retries.
type fakeModel struct {
	replies []any // string or error
	calls   []fakeCall
}

type fakeCall struct {
	system, user string
	repairs      []string // why each refused reply was refused
}

func (f *fakeModel) Model() string { return "fake-model" }

func (f *fakeModel) CompleteJSON(ctx context.Context, system, user string, out any, check func() error) error {
	c := fakeCall{system: system, user: user}
	defer func() { f.calls = append(f.calls, c) }()
	var last error
	for range 2 {
		if len(f.replies) == 0 {
			return errors.New("fake: no reply scripted")
		}
		r := f.replies[0]
		f.replies = f.replies[1:]
		if err, ok := r.(error); ok {
			return err
		}
		if err := json.Unmarshal([]byte(r.(string)), out); err != nil {
			last = err
		} else if check == nil {
			return nil
		} else if last = check(); last == nil {
			return nil
		}
		c.repairs = append(c.repairs, last.Error())
	}
	return fmt.Errorf("invalid reply after repair: %w", last)
}

func ids() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("N%d", n) }
}

func TestFactsReplies(t *testing.T) {
	tests := []struct {
		name    string
		replies []any
		want    []Fact
		repairs int
		err     string
	}{
		{name: "object", replies: []any{`{"facts":[{"text":"The user lives in Berlin.","kind":"fact"},{"text":"The user likes tea.","kind":"Preference"}]}`},
			want: []Fact{{Text: "The user lives in Berlin.", Kind: "fact"}, {Text: "The user likes tea.", Kind: "preference"}}},
		{name: "nothing", replies: []any{`{"facts":[]}`}},
		{name: "null list", replies: []any{`{"facts":null}`}},
		{name: "bare list of strings", replies: []any{`["The user has a cat."]`},
			want: []Fact{{Text: "The user has a cat.", Kind: "fact"}}},
		{name: "plural kind and extra spaces", replies: []any{`{"facts":[{"text":"  We chose   Go. ","kind":"decisions"}]}`},
			want: []Fact{{Text: "We chose Go.", Kind: "decision"}}},
		{name: "fact instead of text", replies: []any{`{"facts":[{"fact":"The user is 41."}]}`},
			want: []Fact{{Text: "The user is 41.", Kind: "fact"}}},
		{name: "wrong shape then repaired", replies: []any{`{"fact":"The user is 41."}`, `{"facts":["The user is 41."]}`},
			want: []Fact{{Text: "The user is 41.", Kind: "fact"}}, repairs: 1},
		{name: "empty text repaired", replies: []any{`{"facts":[{"text":""}]}`, `{"facts":[]}`}, repairs: 1},
		{name: "unknown kind repaired", replies: []any{`{"facts":[{"text":"x is y","kind":"note"}]}`, `{"facts":[{"text":"x is y","kind":"fact"}]}`},
			want: []Fact{{Text: "x is y", Kind: "fact"}}, repairs: 1},
		{name: "too many repaired", replies: []any{`["a","b","c","d"]`, `["a","b","c"]`},
			want: []Fact{{Text: "a", Kind: "fact"}, {Text: "b", Kind: "fact"}, {Text: "c", Kind: "fact"}}, repairs: 1},
		{name: "not JSON repaired", replies: []any{`sure! here you go`, `{"facts":[]}`}, repairs: 1},
		{name: "still wrong after repair", replies: []any{`{"facts":"none"}`, `{"facts":{"text":"a"}}`}, err: `"facts" is not a list`},
		{name: "call failed", replies: []any{errors.New("server replied 500")}, err: "server replied 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{replies: tt.replies}
			x := &Extractor{LLM: m, NewID: ids()}
			got, err := x.Facts(context.Background(), []Turn{{ID: "T1", Role: "user", Text: "something"}})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "T1") {
					t.Fatalf("Facts() error = %v, want one naming T1 and %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range tt.want {
				tt.want[i].Turn = "T1"
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("facts diff (-want +got):\n%s", diff)
			}
			if len(m.calls) != 1 || len(m.calls[0].repairs) != tt.repairs {
				t.Errorf("calls %+v, want 1 call with %d repairs", m.calls, tt.repairs)
			}
		})
	}
}

// TestFactsMessages: only user messages are asked about, each with its
// date and the assistant message before it as context.
func TestFactsMessages(t *testing.T) {
	m := &fakeModel{replies: []any{`{"facts":["The user has a dog named Rex."]}`, `{"facts":[]}`}}
	x := &Extractor{LLM: m, NewID: ids(), Now: func() time.Time { return time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC) }}
	turns := []Turn{
		{Role: "assistant", Text: "Do you have pets?"},
		{Role: "user", Text: "Yes, a dog, Rex.", Time: time.Date(2026, 3, 1, 23, 30, 0, 0, time.FixedZone("x", -3600))},
		{Role: "tool", Text: "   "},
		{Text: "Thanks!"},
		{Role: "user", Text: "   "},
	}
	got, err := x.Facts(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Fact{{Text: "The user has a dog named Rex.", Kind: "fact"}}, got); diff != "" {
		t.Errorf("facts diff (-want +got):\n%s", diff)
	}
	if len(m.calls) != 2 {
		t.Fatalf("%d calls, want 2 (the two non-empty user messages)", len(m.calls))
	}
	first := m.calls[0].user
	for _, want := range []string{"Date of the message: 2026-03-02", "Do you have pets?", "context only", "Message:\nYes, a dog, Rex."} {
		if !strings.Contains(first, want) {
			t.Errorf("first message lacks %q:\n%s", want, first)
		}
	}
	second := m.calls[1].user
	if strings.Contains(second, "context only") || !strings.Contains(second, "Date of the message: 2026-11-21") {
		t.Errorf("second message (no assistant turn before, no time) =\n%s", second)
	}
	if m.calls[0].system != factsPrompt {
		t.Error("extraction did not use the extraction prompt")
	}
}

// near returns a Neighbours function that gives each text the memories
// listed for the first key it contains.
func near(byWord map[string][]Memory) func(context.Context, []string, int) ([][]Memory, error) {
	return func(_ context.Context, texts []string, k int) ([][]Memory, error) {
		out := make([][]Memory, len(texts))
		for i, t := range texts {
			for w, ms := range byWord {
				if strings.Contains(t, w) {
					out[i] = ms[:min(k, len(ms))]
				}
			}
		}
		return out, nil
	}
}

var (
	paris = Memory{ID: "01JPARIS000000000000000000", Kind: "fact", Text: "The user lives in Paris."}
	pizza = Memory{ID: "01JPIZZA000000000000000000", Kind: "preference", Text: "The user loves pizza."}
	tesla = Memory{ID: "01JTESLA000000000000000000", Kind: "fact", Text: "The user drives a Tesla."}
	rex   = Memory{ID: "01JREX00000000000000000000", Kind: "fact", Text: "The user has a dog named Rex."}
)

func TestReconcile(t *testing.T) {
	berlin := Fact{Text: "The user lives in Berlin.", Kind: "fact", Turn: "T1"}
	sold := Fact{Text: "The user sold the Tesla.", Kind: "fact"}
	dog := Fact{Text: "The user has a dog named Rex", Kind: "fact"}
	hate := Fact{Text: "The user hates pizza.", Kind: "preference"}
	store := near(map[string][]Memory{"lives": {paris, pizza}, "Tesla": {tesla, paris}, "Rex": {rex}, "pizza": {pizza, paris}})
	tests := []struct {
		name    string
		facts   []Fact
		replies []any
		want    []Action
		calls   int
		warn    string
	}{
		{name: "no neighbours: added without a call", facts: []Fact{{Text: "The sky is blue.", Kind: "fact"}},
			want: []Action{{Op: OpAdd, ID: "N1", Text: "The sky is blue.", Kind: "fact", Fact: Fact{Text: "The sky is blue.", Kind: "fact"}}}},
		{name: "ADD", facts: []Fact{berlin}, calls: 1,
			replies: []any{`{"decisions":[{"fact":"f1","action":"ADD"}]}`},
			want:    []Action{{Op: OpAdd, ID: "N1", Text: berlin.Text, Kind: "fact", Fact: berlin}}},
		{name: "UPDATE with the model's text", facts: []Fact{berlin}, calls: 1,
			replies: []any{`{"decisions":[{"fact":"f1","action":"update","memory":"m1","text":"The user lives in Berlin since 2026.","reason":"moved"}]}`},
			want: []Action{
				{Op: OpAdd, ID: "N1", Text: "The user lives in Berlin since 2026.", Kind: "fact", Fact: berlin},
				{Op: OpUpdate, ID: "N1", Fact: berlin, Target: paris, Reason: "moved"},
			}},
		{name: "DELETE only still adds the fact", facts: []Fact{sold}, calls: 1,
			replies: []any{`{"decisions":[{"fact":"f1","event":"DELETE","memory":"m1","reason":"sold it"}]}`},
			want: []Action{
				{Op: OpAdd, ID: "N1", Text: sold.Text, Kind: "fact", Fact: sold},
				{Op: OpDelete, Fact: sold, Target: tesla, Reason: `sold it (contradicted by N1: "The user sold the Tesla.")`},
			}},
		{name: "NONE", facts: []Fact{hate}, calls: 1,
			replies: []any{`{"decisions":[{"fact":"f1","action":"NONE","memory":"m1","reason":"same"}]}`},
			want:    []Action{{Op: OpNone, Fact: hate, Target: pizza, Reason: "same"}}},
		{name: "NONE without a memory", facts: []Fact{hate}, calls: 1,
			replies: []any{`[{"fact":"f1","action":"NONE"}]`},
			want:    []Action{{Op: OpNone, Fact: hate, Reason: "already remembered"}}},
		{name: "same words: none without a call", facts: []Fact{dog},
			want: []Action{{Op: OpNone, Fact: dog, Target: rex, Reason: "already remembered", Exact: true}}},
		{name: "failed call adds the facts", facts: []Fact{berlin, sold}, calls: 1,
			replies: []any{errors.New("server replied 500 Internal Server Error")},
			want: []Action{
				{Op: OpAdd, ID: "N1", Text: berlin.Text, Kind: "fact", Fact: berlin},
				{Op: OpAdd, ID: "N2", Text: sold.Text, Kind: "fact", Fact: sold},
			},
			warn: "server replied 500 Internal Server Error; the facts are added as they are"},
		{name: "unfixable reply adds the facts", facts: []Fact{berlin}, calls: 1,
			replies: []any{`{"decisions":[{"fact":"f1","action":"UPDATE","memory":"m9"}]}`, `{"decisions":[{"fact":"f1","action":"MERGE"}]}`},
			want:    []Action{{Op: OpAdd, ID: "N1", Text: berlin.Text, Kind: "fact", Fact: berlin}},
			warn:    `unknown action "MERGE"`},
		{name: "unknown memory id repaired", facts: []Fact{berlin}, calls: 1,
			replies: []any{`{"decisions":[{"fact":"f1","action":"UPDATE","memory":"01JPARIS000000000000000000"}]}`, `{"decisions":[{"fact":"f1","action":"UPDATE","memory":"m1"}]}`},
			want: []Action{
				{Op: OpAdd, ID: "N1", Text: berlin.Text, Kind: "fact", Fact: berlin},
				{Op: OpUpdate, ID: "N1", Fact: berlin, Target: paris, Reason: "updated"},
			}},
		{name: "missing decision repaired", facts: []Fact{berlin, hate}, calls: 1,
			replies: []any{`{"decisions":[{"fact":"f1","action":"ADD"}]}`, `{"decisions":[{"fact":"f1","action":"ADD"},{"fact":"f2","action":"UPDATE","memory":"m2"}]}`},
			want: []Action{
				{Op: OpAdd, ID: "N1", Text: berlin.Text, Kind: "fact", Fact: berlin},
				{Op: OpAdd, ID: "N2", Text: hate.Text, Kind: "preference", Fact: hate},
				{Op: OpUpdate, ID: "N2", Fact: hate, Target: pizza, Reason: "updated"},
			}},
		{name: "UPDATE and DELETE of one memory is an update", facts: []Fact{berlin}, calls: 1,
			replies: []any{`{"decisions":[{"fact":"f1","action":"DELETE","memory":"m1"},{"fact":"f1","action":"UPDATE","memory":"m1"},{"fact":"f1","action":"DELETE","memory":"m2","reason":"unrelated but the model says so"}]}`},
			want: []Action{
				{Op: OpAdd, ID: "N1", Text: berlin.Text, Kind: "fact", Fact: berlin},
				{Op: OpUpdate, ID: "N1", Fact: berlin, Target: paris, Reason: "updated"},
				{Op: OpDelete, Fact: berlin, Target: pizza, Reason: `unrelated but the model says so (contradicted by N1: "The user lives in Berlin.")`},
			}},
		{name: "one memory replaced once", facts: []Fact{berlin, {Text: "The user lives in Rome.", Kind: "fact"}}, calls: 1,
			replies: []any{`{"decisions":[{"fact":"f1","action":"UPDATE","memory":"m1"},{"fact":"f2","action":"UPDATE","memory":"m1"}]}`},
			want: []Action{
				{Op: OpAdd, ID: "N1", Text: berlin.Text, Kind: "fact", Fact: berlin},
				{Op: OpUpdate, ID: "N1", Fact: berlin, Target: paris, Reason: "updated"},
				{Op: OpAdd, ID: "N2", Text: "The user lives in Rome.", Kind: "fact", Fact: Fact{Text: "The user lives in Rome.", Kind: "fact"}},
			}},
		{name: "the same fact twice in a batch", facts: []Fact{berlin, berlin}, calls: 1,
			replies: []any{`{"decisions":[{"fact":"f1","action":"ADD"}]}`},
			want: []Action{
				{Op: OpNone, Fact: berlin, Target: Memory{Kind: "fact", Text: berlin.Text}, Reason: "repeated in the input", Exact: true},
				{Op: OpAdd, ID: "N1", Text: berlin.Text, Kind: "fact", Fact: berlin},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &fakeModel{replies: tt.replies}
			var warns []string
			x := &Extractor{LLM: m, NewID: ids(), Neighbours: store, Warn: func(err error) { warns = append(warns, err.Error()) }}
			got, err := x.Reconcile(context.Background(), tt.facts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("actions diff (-want +got):\n%s", diff)
			}
			if len(m.calls) != tt.calls {
				t.Errorf("%d model calls, want %d", len(m.calls), tt.calls)
			}
			if tt.warn == "" && len(warns) > 0 || tt.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0], tt.warn)) {
				t.Errorf("warnings %q, want one with %q", warns, tt.warn)
			}
		})
	}
}

// TestReconcilePrompt: memories are listed under short ids, never their
// real ones, each once even when near several facts.
func TestReconcilePrompt(t *testing.T) {
	m := &fakeModel{replies: []any{`{"decisions":[{"fact":"f1","action":"ADD"},{"fact":"f2","action":"ADD"}]}`}}
	x := &Extractor{LLM: m, NewID: ids(), Neighbours: near(map[string][]Memory{"lives": {paris, pizza}, "pizza": {pizza, paris}})}
	_, err := x.Reconcile(context.Background(), []Fact{{Text: "The user lives in Berlin.", Kind: "fact"}, {Text: "The user hates pizza.", Kind: "preference"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "New facts:\nf1 (fact): The user lives in Berlin.\nf2 (preference): The user hates pizza.\n\n" +
		"Existing memories:\nm1 (fact): The user lives in Paris.\nm2 (preference): The user loves pizza."
	if m.calls[0].user != want {
		t.Errorf("reconcile message =\n%s\nwant\n%s", m.calls[0].user, want)
	}
	if m.calls[0].system != reconcilePrompt {
		t.Error("reconciliation did not use its prompt")
	}
}

// TestReconcileWithinRun: facts of one run are compared with memories the
// run itself adds, and a memory replaced before it was ever written is not
// written at all; what it replaced points at its replacement.
func TestReconcileWithinRun(t *testing.T) {
	lyon := Fact{Text: "The user lives in Lyon.", Kind: "fact"}
	berlin := Fact{Text: "The user lives in Berlin.", Kind: "fact"}
	t.Run("chain", func(t *testing.T) {
		m := &fakeModel{replies: []any{
			`{"decisions":[{"fact":"f1","action":"UPDATE","memory":"m1"}]}`,
			`{"decisions":[{"fact":"f1","action":"UPDATE","memory":"m1"}]}`,
		}}
		x := &Extractor{LLM: m, NewID: ids(), Batch: 1, Neighbours: near(map[string][]Memory{"lives": {paris}})}
		got, err := x.Reconcile(context.Background(), []Fact{lyon, berlin})
		if err != nil {
			t.Fatal(err)
		}
		want := []Action{
			{Op: OpUpdate, ID: "N2", Fact: lyon, Target: paris, Reason: "updated"},
			{Op: OpAdd, ID: "N2", Text: berlin.Text, Kind: "fact", Fact: berlin},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("actions diff (-want +got):\n%s", diff)
		}
		// The second call saw Lyon (the run's own memory) as m1, not Paris,
		// which the run had already replaced.
		if !strings.Contains(m.calls[1].user, "m1 (fact): The user lives in Lyon.") || strings.Contains(m.calls[1].user, "Paris") {
			t.Errorf("second reconcile message =\n%s", m.calls[1].user)
		}
	})
	t.Run("deleted before written", func(t *testing.T) {
		m := &fakeModel{replies: []any{
			`{"decisions":[{"fact":"f1","action":"UPDATE","memory":"m1"}]}`,
			`{"decisions":[{"fact":"f1","action":"DELETE","memory":"m1","reason":"moved away"}]}`,
		}}
		x := &Extractor{LLM: m, NewID: ids(), Batch: 1, Neighbours: near(map[string][]Memory{"lives": {paris}})}
		gone := Fact{Text: "The user no longer lives in Lyon.", Kind: "fact"}
		got, err := x.Reconcile(context.Background(), []Fact{lyon, gone})
		if err != nil {
			t.Fatal(err)
		}
		want := []Action{
			{Op: OpDelete, Fact: lyon, Target: paris, Reason: `updated; then moved away (contradicted by N2: "The user no longer lives in Lyon.")`},
			{Op: OpAdd, ID: "N2", Text: gone.Text, Kind: "fact", Fact: gone},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("actions diff (-want +got):\n%s", diff)
		}
	})
	t.Run("exact repeat of an earlier fact", func(t *testing.T) {
		m := &fakeModel{}
		x := &Extractor{LLM: m, NewID: ids(), Batch: 1}
		got, err := x.Reconcile(context.Background(), []Fact{berlin, berlin})
		if err != nil {
			t.Fatal(err)
		}
		want := []Action{
			{Op: OpAdd, ID: "N1", Text: berlin.Text, Kind: "fact", Fact: berlin},
			{Op: OpNone, Fact: berlin, Target: Memory{ID: "N1", Kind: "fact", Text: berlin.Text}, Reason: "already remembered", Exact: true},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("actions diff (-want +got):\n%s", diff)
		}
		if len(m.calls) != 0 {
			t.Errorf("%d model calls, want none", len(m.calls))
		}
	})
}

func TestReconcileErrors(t *testing.T) {
	x := &Extractor{LLM: &fakeModel{}, NewID: ids(), Neighbours: func(context.Context, []string, int) ([][]Memory, error) {
		return nil, errors.New("index is locked")
	}}
	if _, err := x.Reconcile(context.Background(), []Fact{{Text: "a b", Kind: "fact"}}); err == nil || !strings.Contains(err.Error(), "index is locked") {
		t.Errorf("Reconcile with failing neighbours: error = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	x = &Extractor{LLM: &fakeModel{replies: []any{context.Canceled}}, NewID: ids(), Neighbours: near(map[string][]Memory{"lives": {paris}})}
	if _, err := x.Reconcile(ctx, []Fact{{Text: "The user lives in Rome.", Kind: "fact"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Reconcile interrupted: error = %v, want context.Canceled (an interrupt is not a failed call)", err)
	}
	if _, err := (&Extractor{}).Facts(context.Background(), []Turn{{Text: "x"}}); err == nil {
		t.Error("Facts without a model: no error")
	}
}

func TestParseDecisionIDs(t *testing.T) {
	tests := []struct {
		reply string
		want  []decision
		err   string
	}{
		{reply: `{"decisions":[{"fact":"F1","action":"add"},{"fact":2,"action":"none","memory":"[m2]"}]}`,
			want: []decision{{fact: 0, action: actAdd, memory: -1}, {fact: 1, action: actNone, memory: 1}}},
		{reply: `{"decisions":[{"fact":"f1","action":"ADD","memory":"m3"},{"fact":"f2","action":"NONE","memory":""}]}`,
			want: []decision{{fact: 0, action: actAdd, memory: -1}, {fact: 1, action: actNone, memory: -1}}},
		{reply: `{"decisions":[{"fact":"f3","action":"ADD"}]}`, err: `unknown id "f3": use f1 to f2`},
		{reply: `{"decisions":[{"action":"ADD"}]}`, err: `"fact" is missing`},
		{reply: `{"decisions":[{"fact":"f1","action":"DELETE"},{"fact":"f2","action":"ADD"}]}`, err: `DELETE needs "memory"`},
		{reply: `{"decisions":[{"fact":"f1"},{"fact":"f2","action":"ADD"}]}`, err: `"action" is missing`},
		{reply: `{"decisions":[{"fact":"f1","action":"ADD"}]}`, err: "no decision for f2"},
		{reply: `{"memory":[]}`, err: `"decisions" is missing`},
		{reply: `{"decisions":["f1 ADD"]}`, err: "decisions[0]: want an object"},
	}
	for _, tt := range tests {
		got, err := parseDecisions(json.RawMessage(tt.reply), 2, 3)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseDecisions(%s) error = %v, want %q", tt.reply, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseDecisions(%s): %v", tt.reply, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(decision{})); diff != "" {
			t.Errorf("parseDecisions(%s) diff (-want +got):\n%s", tt.reply, diff)
		}
	}
}

func TestNormalizeKind(t *testing.T) {
	for in, want := range map[string]string{"": "fact", "Fact": "fact", " goals ": "goal", "TASK": "task", "correction": "correction"} {
		if got, err := NormalizeKind(in); err != nil || got != want {
			t.Errorf("NormalizeKind(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"note", "turn", "summary", "opinion"} {
		if _, err := NormalizeKind(in); err == nil {
			t.Errorf("NormalizeKind(%q): no error", in)
		}
	}
}
