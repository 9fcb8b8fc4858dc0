package agentloop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	. "github.com/miramem/mira/agentloop"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/agentloop/tools"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
	"github.com/miramem/mira/summarize"
	openai "github.com/sashabaranov/go-openai"
)

// A task that reads a file, edits it, runs a command and answers: the file
// changes on disk, every message is a turn in the store with one commit
// each, and each request carries the results of the calls before it.
func TestTaskReadEditRunAnswer(t *testing.T) {
	r := newRig(t, []llmtest.Reply{
		llmtest.Tools(llmtest.ToolCall{ID: "call_read", Name: "read_file", Arguments: args(map[string]any{"path": "greet.txt"})}),
		// Two calls in one reply, their arguments interleaved across chunks.
		{Content: "Changing it and checking.", ToolCalls: []llmtest.ToolCall{
			{ID: "call_edit", Name: "edit_file", Arguments: args(map[string]any{"path": "greet.txt", "old_string": "Hello", "new_string": "Goodbye"})},
			{ID: "call_cat", Name: "bash", Arguments: args(map[string]any{"command": "cat greet.txt", "description": "show the file"})},
		}, SplitNames: true},
		llmtest.Text("The greeting now says Goodbye.").WithUsage(900, 12, 600),
	})
	r.write("greet.txt", "Hello, world\n")
	before := r.commits()

	ans := r.send("Change the greeting in greet.txt to Goodbye")
	if ans.Text != "The greeting now says Goodbye." || ans.Steps != 3 {
		t.Errorf("answer = %q after %d steps, want the final text after 3", ans.Text, ans.Steps)
	}
	if got := r.read("greet.txt"); got != "Goodbye, world\n" {
		t.Errorf("greet.txt = %q, want the edit applied", got)
	}

	turns := r.turns()
	want := []string{"user", "assistant", "tool", "assistant", "tool", "tool", "assistant"}
	if diff := cmp.Diff(want, roles(turns)); diff != "" {
		t.Fatalf("stored turn roles (-want +got):\n%s", diff)
	}
	if got := r.commits() - before; got != len(want) {
		t.Errorf("%d commits for %d turns, want one each", got, len(want))
	}
	calls := CallsOf(turns[3])
	if len(calls) != 2 || calls[0].ID != "call_edit" || calls[1].Function.Name != "bash" {
		t.Errorf("second assistant turn's tool_calls = %+v", calls)
	}
	if turns[3].Body != "Changing it and checking." {
		t.Errorf("assistant body = %q", turns[3].Body)
	}
	if !BoolField(turns[1], FieldNoText) || !strings.Contains(turns[1].Body, "read_file") {
		t.Errorf("a reply with only a call is stored as %q (no_text %v)", turns[1].Body, BoolField(turns[1], FieldNoText))
	}
	if id := StringField(turns[5], FieldToolCallID); id != "call_cat" || !strings.Contains(turns[5].Body, "Goodbye, world") {
		t.Errorf("bash result turn: id %q body %q", id, turns[5].Body)
	}

	reqs := r.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	last := reqs[2].Messages
	tail := last[len(last)-3:]
	if tail[0].Role != "assistant" || len(tail[0].ToolCalls) != 2 || tail[1].ToolCallID != "call_edit" || tail[2].ToolCallID != "call_cat" {
		t.Errorf("third request ends with %+v, want the two calls and their results", tail)
	}
	if !strings.Contains(reqs[1].Text(), "1\tHello, world") {
		t.Errorf("second request lacks read_file's numbered output:\n%s", reqs[1].Text())
	}
	if len(reqs[0].Tools) != 6 {
		t.Errorf("request offers %d tools, want the 6 built-in ones", len(reqs[0].Tools))
	}

	var types []string
	for _, ev := range r.events {
		if ev.Type != "text" {
			types = append(types, ev.Type)
		}
	}
	wantTypes := []string{"usage", "tool_call", "tool_result", "usage", "tool_call", "tool_result", "tool_call", "tool_result", "usage", "done"}
	if diff := cmp.Diff(wantTypes, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	st := r.agent.Status()
	if st.Usage.Requests != 3 || st.Last.CachedTokens != 600 {
		t.Errorf("usage = %+v, want 3 requests and the 600 cached tokens reported", st.Usage)
	}
}

// A call the policy denies does not run, and the model hears why.
func TestPermissionDenialReachesModel(t *testing.T) {
	r := newRig(t, []llmtest.Reply{
		llmtest.Tools(llmtest.ToolCall{ID: "w1", Name: "write_file", Arguments: args(map[string]any{"path": "new.txt", "content": "x"})}),
		llmtest.Text("I was not allowed to write new.txt."),
	}, withPolicy(&tools.Policy{Allow: map[string]bool{"bash": true}}))
	r.send("create new.txt")
	if _, err := os.Stat(filepath.Join(r.root, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new.txt exists after a denied write (err %v)", err)
	}
	msgs := r.srv.Last().Messages
	res := msgs[len(msgs)-1]
	if res.Role != "tool" || !strings.Contains(res.Content, "permission denied") || !strings.Contains(res.Content, "--allow write_file") {
		t.Errorf("the model got %q, want the denial and how to allow it", res.Content)
	}
	turns := r.turns()
	if tool := turns[2]; !BoolField(tool, FieldDenied) || !BoolField(tool, FieldIsError) {
		t.Errorf("tool turn front matter lacks denied/is_error: %v", tool.Fields())
	}
}

// A command past its timeout is stopped and the model is told.
func TestToolTimeout(t *testing.T) {
	r := newRig(t, []llmtest.Reply{
		llmtest.Tools(llmtest.ToolCall{ID: "b1", Name: "bash", Arguments: args(map[string]any{"command": "sleep 20", "timeout": 1})}),
		llmtest.Text("It timed out."),
	})
	start := time.Now()
	r.send("run the slow thing")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the message took %v; the 1 s timeout did not stop the command", d)
	}
	msgs := r.srv.Last().Messages
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, "Timed out after 1s") {
		t.Errorf("tool result = %q, want the timeout said", got)
	}
}

// Cancelling during a stream stops it at once; what arrived is stored as
// an interrupted reply and the conversation goes on from there.
func TestCancelDuringStream(t *testing.T) {
	long := llmtest.Text("Let me think about this at length, step by step, before I answer you.")
	long.HangBeforeChunk = 6
	r := newRig(t, []llmtest.Reply{long, llmtest.Text("Short answer.")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen strings.Builder
	done := make(chan error, 1)
	go func() {
		_, err := r.agent.Send(ctx, "explain the loop", func(ev Event) {
			if ev.Type == "text" {
				seen.WriteString(ev.Text)
				if seen.Len() >= 12 {
					cancel()
				}
			}
		})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Send after cancel: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Send did not return after cancel")
	}
	turns := r.turns()
	if diff := cmp.Diff([]string{"user", "assistant"}, roles(turns)); diff != "" {
		t.Fatalf("turns (-want +got):\n%s", diff)
	}
	got := turns[1]
	if !BoolField(got, FieldInterrupted) || !strings.HasPrefix(got.Body, "Let me think") || !strings.HasSuffix(got.Body, InterruptedNote) {
		t.Errorf("interrupted reply stored as %q (%v)", got.Body, got.Fields())
	}
	r.send("just the short version")
	msgs := r.srv.Last().Messages
	if m := msgs[len(msgs)-2]; m.Role != "assistant" || !strings.Contains(m.Content, InterruptedNote) {
		t.Errorf("the next request shows the cut reply as %+v", m)
	}
}

// Cancelling during a tool stops the command; the call is answered with
// what it said, later calls of the same reply as not run.
func TestCancelDuringTool(t *testing.T) {
	r := newRig(t, []llmtest.Reply{
		llmtest.Tools(
			llmtest.ToolCall{ID: "slow", Name: "bash", Arguments: args(map[string]any{"command": "sleep 30"})},
			llmtest.ToolCall{ID: "next", Name: "glob", Arguments: args(map[string]any{"pattern": "*"})},
		),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	_, err := r.agent.Send(ctx, "run it", func(ev Event) {
		if ev.Type == "tool_call" && ev.CallID == "slow" {
			go func() { time.Sleep(200 * time.Millisecond); cancel() }()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Send: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %v", d)
	}
	turns := r.turns()
	if diff := cmp.Diff([]string{"user", "assistant", "tool", "tool"}, roles(turns)); diff != "" {
		t.Fatalf("turns (-want +got):\n%s", diff)
	}
	if !strings.Contains(turns[2].Body, "Interrupted") || !strings.Contains(turns[3].Body, "Not run") {
		t.Errorf("tool results: %q / %q", turns[2].Body, turns[3].Body)
	}
}

// A long output is stored as an artifact; the model sees a reference it
// can read back.
func TestArtifactForLargeOutput(t *testing.T) {
	r := newRig(t, []llmtest.Reply{
		llmtest.Tools(llmtest.ToolCall{ID: "b1", Name: "bash", Arguments: args(map[string]any{"command": "seq 1 500"})}),
		llmtest.Func(func(req llmtest.Request) llmtest.Reply {
			msgs := req.Messages
			res := msgs[len(msgs)-1].Content
			i := strings.Index(res, "artifact://")
			if i < 0 {
				return llmtest.Text("no artifact in " + res)
			}
			ref := strings.Fields(res[i:])[0]
			ref = strings.TrimRight(ref, ":,.;)")
			return llmtest.Tools(llmtest.ToolCall{ID: "r1", Name: "read_file", Arguments: args(map[string]any{"path": ref, "offset": 250, "limit": 2})})
		}),
		llmtest.Text("Lines 250 and 251 are as expected."),
	}, withLimits(tools.Limits{ResultLines: 50}))
	r.send("count to 500")
	turns := r.turns()
	res := turns[2]
	arts, _ := res.Fields()[FieldArtifacts].([]any)
	if len(arts) != 2 || !strings.HasSuffix(arts[1].(string), ".meta.json") {
		t.Fatalf("tool turn artifacts = %v, want one and its description", res.Fields()[FieldArtifacts])
	}
	data, err := os.ReadFile(filepath.Join(r.home, arts[0].(string)))
	if err != nil || strings.Count(string(data), "\n") != 500 {
		t.Fatalf("artifact %v: %d lines, err %v; want the whole output", arts[0], strings.Count(string(data), "\n"), err)
	}
	if !strings.HasPrefix(arts[0].(string), "artifacts/chat/") || !strings.Contains(res.Body, "artifact://") {
		t.Errorf("artifact at %v, tool turn %q", arts[0], FirstLine(res.Body, 200))
	}
	if got := turns[4].Body; !strings.Contains(got, "250\t250") || !strings.Contains(got, "251\t251") {
		t.Errorf("reading the artifact back gave %q", got)
	}
	// The artifact is committed with its tool turn: in history, and the
	// store's work tree is clean.
	out, err := exec.Command("git", "-C", r.home, "log", "--format=%s", "--name-only", "--", arts[0].(string)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "agent: tool turn") {
		t.Errorf("git log of the artifact: %v\n%s", err, out)
	}
	if out, _ := exec.Command("git", "-C", r.home, "status", "--porcelain").CombinedOutput(); len(out) != 0 {
		t.Errorf("git status:\n%s", out)
	}
}

// Past the buffer limit the older turns are summarized: the summary shows
// in the standing context, every turn is either covered by it or still in
// the buffer, and a pinned memory stays in the context.
func TestRollingSummaryTakesOver(t *testing.T) {
	var replies []llmtest.Reply
	for i := range 6 {
		replies = append(replies, llmtest.Text(fmt.Sprintf("Answer %d: the parser handles case %d by reading the token stream twice and comparing offsets.", i, i)))
	}
	r := newRig(t, replies, withSummaries(), withConfig(func(c *Config) { c.BufferTokens = 150 }))
	pin := r.remember(&mem.Entry{Kind: mem.KindPreference, Scope: "global", Pin: mem.PinSticky, Body: "Always answer in British English."})
	for i := range 6 {
		r.send(fmt.Sprintf("Question %d: how does the parser deal with nested quotes in case %d of the grammar?", i, i))
	}
	var summaries int
	for _, ev := range r.events {
		if ev.Type == "summary" {
			summaries++
		}
	}
	if summaries == 0 {
		t.Fatal("the buffer went past its limit and nothing was summarized")
	}
	state, err := summarize.Load(r.st, "chat", []string{mem.KindTurn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Summaries) == 0 {
		t.Fatal("no summary in the store")
	}
	// Only the older part was summarized, up to a cut that keeps half the
	// buffer's budget: the exchange before the last one is still in the
	// buffer, whole, and so is the last.
	if n := len(state.Buffer); n < 6 || !strings.Contains(state.Buffer[n-1].Body, "Answer 5") || !strings.Contains(state.Buffer[n-3].Body, "Answer 4") {
		t.Errorf("buffer after the summaries = %d turns, want the last exchanges kept", n)
	}
	// No gap: every turn is covered by a live L1 or is in the buffer.
	covered := map[string]bool{}
	err = r.st.Walk(func(e *mem.Entry) error {
		if e.Kind == mem.KindSummary && e.Level == "L1" {
			ids, _ := e.Fields()["covers"].([]any)
			for _, id := range ids {
				covered[id.(string)] = true
			}
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	inBuffer := map[string]bool{}
	for _, e := range state.Buffer {
		inBuffer[e.ID] = true
	}
	all := r.turns()
	if len(all) != 12 {
		t.Fatalf("%d turns stored, want 12", len(all))
	}
	for _, e := range all {
		if covered[e.ID] == inBuffer[e.ID] {
			t.Errorf("turn %s (%s): covered %v, in buffer %v; want exactly one", e.ID, e.Role, covered[e.ID], inBuffer[e.ID])
		}
	}
	// A restarted agent would send the same messages: summary, tail and
	// buffer are read from the store the same way.
	before, after := r.agent, r.open()
	for _, a := range []*Agent{before, after} {
		if a.Status().TailTurns == 0 {
			t.Fatal("no tail after a summary")
		}
	}
	reqOf := func(a *Agent) string {
		msgs, err := a.RequestMessages(context.Background(), "next")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(msgs)
		return string(b)
	}
	if x, y := reqOf(before), reqOf(after); x != y {
		t.Errorf("a restarted agent sends other messages:\n%s\n%s", x, y)
	}

	// The last request shows the summary, the pin, and the buffer as
	// messages.
	r.srv.Push(llmtest.Text("ok"))
	r.send("And case 7?")
	req := r.srv.Last()
	standing := req.Messages[1].Content
	latest := state.Summaries[len(state.Summaries)-1]
	if !strings.Contains(standing, "## Summary") || !strings.Contains(standing, FirstLine(latest.Body, 40)[:30]) {
		t.Errorf("standing context lacks the summary:\n%s", standing)
	}
	if !strings.Contains(standing, pin.Body) {
		t.Errorf("standing context lacks the pinned memory after a summary:\n%s", standing)
	}
	// The conversation messages are the newest summarized turns (the
	// tail), verbatim, then the buffer: the turns just before the buffer,
	// starting at a user message.
	conv := req.Messages[2:]
	state, _ = summarize.Load(r.st, "chat", []string{mem.KindTurn}, nil)
	state.Buffer = state.Buffer[:len(state.Buffer)-1] // the reply to the last request
	all = r.turns()
	first := slices.IndexFunc(all, func(e *mem.Entry) bool { return e.ID == state.Buffer[0].ID })
	tail := r.agent.Status().TailTurns
	if first < 0 || tail == 0 || len(conv) != tail+len(state.Buffer) {
		t.Fatalf("request has %d conversation messages: want a tail of summarized turns (%d) and the buffer (%d)", len(conv), tail, len(state.Buffer))
	}
	want := all[first-tail : first+len(state.Buffer)]
	if want[0].Role != "user" {
		t.Errorf("the tail starts with a %s turn", want[0].Role)
	}
	for i, e := range want {
		if !strings.HasSuffix(conv[i].Content, e.Body) {
			t.Errorf("message %d = %q, want turn %q", i, conv[i].Content, e.Body)
		}
		if i < tail && !covered[e.ID] {
			t.Errorf("tail turn %s is not summarized", e.ID)
		}
	}
}

// The request's beginning stays byte for byte the same from one message
// to the next, so that a provider's prompt cache keeps matching; and a
// restarted agent sends the same bytes as the one before it.
func TestCachePrefixStableAndRestart(t *testing.T) {
	r := newRig(t, []llmtest.Reply{
		llmtest.Tools(llmtest.ToolCall{ID: "g1", Name: "glob", Arguments: args(map[string]any{"pattern": "*.go"})}),
		llmtest.Text("There is one Go file."),
		llmtest.Text("It is main.go."),
		llmtest.Text("Yes, still main.go."),
	})
	r.write("main.go", "package main\n")
	r.remember(&mem.Entry{Kind: mem.KindDecision, Scope: "proj", Pin: mem.PinSticky, Body: "We keep the CLI in one main.go file."})
	r.remember(&mem.Entry{Kind: mem.KindFact, Scope: "global", Body: "The Go files use tabs, as gofmt writes them."})
	r.send("Which Go files are there?")
	// A memory stored between two messages (as the remember tool or
	// mira-remember would) leaves the conversation's bytes alone.
	r.remember(&mem.Entry{Kind: mem.KindNote, Scope: "global", Body: "Release on Fridays."})
	r.send("Which one holds the Go main function?")

	reqs := r.srv.Requests()
	first, second := raw(t, reqs[1]), raw(t, reqs[2])
	// Request 2 (the end of message 1): instructions, standing, user 1,
	// call, result. Request 3 (message 2) starts with the same messages up
	// to user 1, which no longer carries its recalled memories.
	stable := 2
	if !bytes.Equal(first.Tools, second.Tools) {
		t.Error("tool definitions differ between messages")
	}
	for i := range stable {
		if !bytes.Equal(first.Messages[i], second.Messages[i]) {
			t.Errorf("message %d differs between consecutive messages:\n%s\n%s", i, first.Messages[i], second.Messages[i])
		}
	}
	for i := stable + 1; i < len(first.Messages); i++ {
		if !bytes.Equal(first.Messages[i], second.Messages[i]) {
			t.Errorf("conversation message %d differs between consecutive messages:\n%s\n%s", i, first.Messages[i], second.Messages[i])
		}
	}
	if !strings.Contains(reqs[2].Messages[1].Content, "We keep the CLI in one main.go file.") {
		t.Errorf("the pinned project decision is not in the standing context:\n%s", reqs[2].Messages[1].Content)
	}
	if got := reqs[0].LastUser(); !strings.Contains(got, "# Memory context") || !strings.HasSuffix(got, "# Message\n\nWhich Go files are there?") {
		t.Errorf("the first message does not carry its recalled memories:\n%s", got)
	}
	if got := reqs[2].Messages[2].Content; got != "Which Go files are there?" {
		t.Errorf("an earlier message is sent as %q, want the bare text", got)
	}

	// A new agent on the same store continues the conversation with the
	// same messages.
	r.agent = r.open()
	r.send("Still?")
	third := raw(t, r.srv.Last())
	n := len(second.Messages) - 1 // all but the last message, which carried its recall
	for i := range n {
		if !bytes.Equal(second.Messages[i], third.Messages[i]) {
			t.Errorf("after a restart, message %d differs:\n%s\n%s", i, second.Messages[i], third.Messages[i])
		}
	}
	if got := r.srv.Last().Messages; len(got) != len(second.Messages)+2 {
		t.Errorf("after a restart the request has %d messages, want %d", len(got), len(second.Messages)+2)
	}
	if diff := cmp.Diff([]string{"user", "assistant", "tool", "assistant", "user", "assistant", "user", "assistant"}, roles(r.turns())); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
}

// The loop stops after MaxSteps requests.
func TestMaxSteps(t *testing.T) {
	call := llmtest.Tools(llmtest.ToolCall{Name: "glob", Arguments: args(map[string]any{"pattern": "*"})})
	r := newRig(t, []llmtest.Reply{call, call}, withConfig(func(c *Config) { c.MaxSteps = 2 }))
	_, err := r.agent.Send(context.Background(), "loop forever", nil)
	if !errors.Is(err, ErrMaxSteps) {
		t.Fatalf("Send: %v, want ErrMaxSteps", err)
	}
	if n := len(r.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// The reasoning effort is sent to models that take it, and dropped when
// the server refuses it.
func TestEffortSentAndDropped(t *testing.T) {
	r := newRig(t, []llmtest.Reply{
		llmtest.Error(400, "Unrecognized request argument supplied: reasoning_effort"),
		llmtest.Text("fine"),
		llmtest.Text("fine again"),
	}, withConfig(func(c *Config) { c.Effort = EffortHigh }))
	r.cfg.Model = namedModel{r.client, "gpt-5.1"}
	r.agent = r.open()
	ans := r.send("refactor the parser")
	if ans.Effort != EffortHigh {
		t.Errorf("effort %q, want high", ans.Effort)
	}
	r.send("and again")
	reqs := r.srv.Requests()
	if got := []string{raw(t, reqs[0]).Effort, raw(t, reqs[1]).Effort, raw(t, reqs[2]).Effort}; !cmp.Equal(got, []string{"high", "", ""}) {
		t.Errorf("reasoning_effort sent = %q, want high, then none after the refusal", got)
	}
}

// namedModel is the test client under another model name.
type namedModel struct {
	inner Model
	name  string
}

func (m namedModel) Model() string { return m.name }

func (m namedModel) Stream(ctx context.Context, req openai.ChatCompletionRequest, on func(llm.Event)) (*llm.Reply, error) {
	req.Model = "test-model"
	return m.inner.Stream(ctx, req, on)
}

// Usage is priced, with cached tokens at their own price.
func TestUsageCost(t *testing.T) {
	r := newRig(t, []llmtest.Reply{llmtest.Text("hi").WithUsage(1000, 100, 800)},
		withConfig(func(c *Config) { c.Prices = Prices{Input: 1, CachedInput: 0.1, Output: 10} }))
	r.send("hello")
	st := r.agent.Status()
	want := (200*1.0 + 800*0.1 + 100*10.0) / 1e6
	if st.Usage.Cost == nil || *st.Usage.Cost != want {
		t.Errorf("cost = %v, want %v", st.Usage.Cost, want)
	}
	if rate := st.Usage.CacheHitRate(); rate != 0.8 {
		t.Errorf("cache hit rate = %v, want 0.8", rate)
	}
	if s := st.Usage.String(); !strings.Contains(s, "1,000 in (800 cached, 80%)") {
		t.Errorf("usage line %q", s)
	}
}

// /switch moves the file tools and the standing context to another
// project while the conversation goes on.
func TestSwitchProject(t *testing.T) {
	r := newRig(t, []llmtest.Reply{
		llmtest.Text("first"),
		llmtest.Tools(llmtest.ToolCall{ID: "r", Name: "read_file", Arguments: args(map[string]any{"path": "b.txt"})}),
		llmtest.Text("done"),
	})
	r.send("hello")
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "b.txt"), []byte("from the other project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.agent.Switch(mem.Project{Name: "other", Root: other, By: "test"}, r.registry(other))
	r.send("read b.txt")
	req := r.srv.Last()
	if !strings.Contains(req.Messages[1].Content, "Project: other") {
		t.Errorf("standing context after /switch:\n%s", req.Messages[1].Content)
	}
	if got := req.Messages[len(req.Messages)-1].Content; !strings.Contains(got, "from the other project") {
		t.Errorf("read_file after /switch read %q", got)
	}
	if req.Messages[2].Content != "hello" {
		t.Errorf("the conversation did not go on: first message %q", req.Messages[2].Content)
	}
	if turns := r.turns(); turns[len(turns)-1].Project != "other" {
		t.Errorf("new turns are stored with project %q", turns[len(turns)-1].Project)
	}
}

// /context shows the plans and the meter without storing anything.
func TestContextView(t *testing.T) {
	r := newRig(t, []llmtest.Reply{llmtest.Text("ok")})
	r.remember(&mem.Entry{Kind: mem.KindCorrection, Scope: "global", Body: "Use errors.Is, never compare error strings."})
	r.remember(&mem.Entry{Kind: mem.KindFact, Scope: "global", Body: "The parser lives in parse.go."})
	r.send("where is the parser")
	before := r.commits()
	v, err := r.agent.Context(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if r.commits() != before {
		t.Error("Context stored something")
	}
	if v.Query != "where is the parser" || v.Recall == nil || len(v.Recall.Included) != 1 {
		t.Errorf("view query %q recall %+v, want the last message and the fact", v.Query, v.Recall)
	}
	if len(v.Standing.Included) != 1 || v.Standing.Included[0].Section != "corrections" {
		t.Errorf("standing plan %+v, want the correction", v.Standing.Included)
	}
	m := v.Meter()
	for _, part := range []string{"instructions", "standing", "buffer", "(2 turns)", "recall"} {
		if !strings.Contains(m, part) {
			t.Errorf("meter %q lacks %q", m, part)
		}
	}
}

type failingSummarizer struct{ calls *int }

func (f failingSummarizer) Summarize(context.Context, string, string) error {
	*f.calls++
	return errors.New("summary model unreachable")
}

type failingLibrary struct{}

func (failingLibrary) Standing(context.Context, []string) ([]mem.Record, error) {
	return nil, errors.New("index busy")
}

func (failingLibrary) Relevant(context.Context, string, int) ([]mem.Record, error) {
	return nil, errors.New("index busy")
}

// A summary or a library that fails does not stop the conversation: the
// message is answered and the failure reported.
func TestFailuresAroundTheConversation(t *testing.T) {
	calls := 0
	var warned []string
	r := newRig(t, []llmtest.Reply{llmtest.Text("first answer, long enough to pass the tiny limit"), llmtest.Text("second")},
		withConfig(func(c *Config) {
			c.Summarizer = failingSummarizer{&calls}
			c.BufferTokens = 5
			c.Library = failingLibrary{}
			c.Warn = func(err error) { warned = append(warned, err.Error()) }
		}))
	r.send("hello there, this is a message")
	r.send("and another one")
	if calls != 2 {
		t.Errorf("the summarizer was tried %d times, want after the first answer and before the second message", calls)
	}
	var warnings int
	for _, ev := range r.events {
		if ev.Type == "warning" && strings.Contains(ev.Text, "summary model unreachable") {
			warnings++
		}
	}
	if warnings != 2 {
		t.Errorf("%d summary warnings, want 2", warnings)
	}
	if len(warned) == 0 || !strings.Contains(strings.Join(warned, "\n"), "index busy") {
		t.Errorf("library failures not reported: %q", warned)
	}
	if got := len(r.srv.Last().Messages); got != 5 {
		t.Errorf("the second request has %d messages, want instructions, standing and three turns", got)
	}
}

// The reasoning of a reply that called tools is sent back with it (as
// DeepSeek's thinking mode requires); that of a plain answer is not.
func TestReasoningSentBackWithToolCalls(t *testing.T) {
	think := llmtest.Tools(llmtest.ToolCall{ID: "g", Name: "glob", Arguments: args(map[string]any{"pattern": "*"})})
	think.Reasoning = "I should list the files first."
	answer := llmtest.Text("Nothing here.")
	answer.Reasoning = "The glob found nothing."
	r := newRig(t, []llmtest.Reply{think, answer, llmtest.Text("ok")})
	r.send("what is here?")
	r.send("thanks")
	var got []string
	for _, m := range r.srv.Last().Messages {
		if m.Role == "assistant" {
			got = append(got, m.ReasoningContent)
		}
	}
	if diff := cmp.Diff([]string{"I should list the files first.", ""}, got); diff != "" {
		t.Errorf("reasoning sent back (-want +got):\n%s", diff)
	}
}

// A secret in what the user says, in a reply, in a tool call's arguments
// or in a tool's output is stored masked, never refused: the conversation
// goes on, and no file or commit of the store holds the secret.
func TestTurnsRedactSecrets(t *testing.T) {
	token := "ghp_" + "Zq7Xw3Vr9Tn2Lp5Kd8Hs4Jf6Gb1Mc0Ya7UeQ4rT"
	if len(secretScan(token)) == 0 {
		t.Fatal("the test token is not seen as a secret")
	}
	r := newRig(t, []llmtest.Reply{
		llmtest.Tools(llmtest.ToolCall{ID: "b1", Name: "bash", Arguments: args(map[string]any{"command": "echo " + token})}),
		llmtest.Text("The token " + token + " is set."),
	})
	r.send("is my token " + token + " set?")
	turns := r.turns()
	if got := roles(turns); !slices.Equal(got, []string{"user", "assistant", "tool", "assistant"}) {
		t.Fatalf("roles = %v", got)
	}
	for _, e := range turns {
		if !strings.Contains(e.Body+fmt.Sprint(e.Fields()[FieldToolCalls]), "[REDACTED:github-token]") {
			t.Errorf("%s turn not masked: %q %v", e.Role, e.Body, e.Fields()[FieldToolCalls])
		}
	}
	out, err := exec.Command("git", "-C", r.home, "log", "-p", "--format=%B").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, out)
	}
	if strings.Contains(string(out), token) {
		t.Errorf("the secret is in the store's history:\n%s", out)
	}
	if n := r.commits(); n < 4 {
		t.Errorf("%d commits, want one a turn", n)
	}
}

// A tool call's id and name are the model's words too: a secret in them is
// masked like one in its arguments, and the call still pairs with its
// result when the conversation is read back.
func TestTurnsRedactToolCallIDAndName(t *testing.T) {
	token := "ghp_" + "Zq7Xw3Vr9Tn2Lp5Kd8Hs4Jf6Gb1Mc0Ya7UeQ4rT"
	r := newRig(t, []llmtest.Reply{
		llmtest.Tools(llmtest.ToolCall{ID: token, Name: token, Arguments: args(map[string]any{"x": 1})}),
		llmtest.Text("That tool does not exist."),
		llmtest.Text("Still here."),
	})
	r.send("call a tool")
	out, err := exec.Command("git", "-C", r.home, "log", "-p", "--format=%B").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, out)
	}
	if strings.Contains(string(out), token) {
		t.Errorf("the secret is in the store's history:\n%s", out)
	}
	// A restarted agent sends a valid conversation: the masked call is
	// answered by its masked result.
	r.agent = r.open()
	r.send("and now?")
	msgs := r.srv.Last().Messages
	var call, result string
	for _, m := range msgs {
		if len(m.ToolCalls) > 0 {
			call = m.ToolCalls[0].ID
		}
		if m.Role == "tool" {
			result = m.ToolCallID
		}
	}
	if call == "" || call != result || strings.Contains(call, token) {
		t.Errorf("after a restart the call is %q and its result answers %q", call, result)
	}
}

// SetContextMode plans the messages that follow with the new mode: off
// leaves the correction out of the standing context sent, light brings
// it back; LastPlans are the plans of the message just sent.
func TestSetContextMode(t *testing.T) {
	r := newRig(t, []llmtest.Reply{llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three")})
	r.remember(&mem.Entry{Kind: mem.KindCorrection, Scope: "global", Body: "Use errors.Is, never compare error strings."})
	if s, rc := r.agent.LastPlans(); s != nil || rc != nil {
		t.Errorf("plans before any message: %v, %v", s, rc)
	}
	if m := r.agent.ContextMode(); m != plan.ModeLight {
		t.Errorf("default mode %q, want light", m)
	}
	const correction = "never compare error strings"
	for i, step := range []struct {
		mode plan.Mode
		sent bool
	}{{plan.ModeLight, true}, {plan.ModeOff, false}, {plan.ModeHeavy, true}} {
		if err := r.agent.SetContextMode(step.mode); err != nil {
			t.Fatal(err)
		}
		r.send(fmt.Sprintf("message %d", i))
		req := r.srv.Requests()[i]
		if got := strings.Contains(req.Messages[1].Content, correction); got != step.sent {
			t.Errorf("mode %s: correction in the standing context = %v, want %v:\n%s", step.mode, got, step.sent, req.Messages[1].Content)
		}
		standing, _ := r.agent.LastPlans()
		if standing == nil || standing.Mode != step.mode {
			t.Fatalf("mode %s: last standing plan %+v", step.mode, standing)
		}
		if !step.sent && (len(standing.Excluded) != 1 || standing.Excluded[0].Reason != plan.ReasonModeOff) {
			t.Errorf("mode off: excluded %+v, want the correction, for mode off", standing.Excluded)
		}
	}
	if err := r.agent.SetContextMode("loud"); err == nil || !strings.Contains(err.Error(), `"loud"`) {
		t.Errorf("SetContextMode(loud) = %v, want an error naming it", err)
	}
	if m := r.agent.ContextMode(); m != plan.ModeHeavy {
		t.Errorf("mode after a refused change %q, want heavy", m)
	}
}
