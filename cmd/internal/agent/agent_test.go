package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/miramem/mira/cmd/internal/cli"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
	"github.com/miramem/mira/summarize"
)

// agentEnv runs mira-agent in this process in a project directory, with a
// store in a temporary directory and a fake chat server.
type agentEnv struct {
	t    *testing.T
	home string
	proj string
	srv  *llmtest.Server
	env  map[string]string
	// extract leaves fact extraction on; the tests that script the
	// model's replies one by one turn it off.
	extract bool
}

func newAgentEnv(t *testing.T, replies ...llmtest.Reply) *agentEnv {
	t.Helper()
	dir := t.TempDir()
	x := &agentEnv{t: t, home: filepath.Join(dir, "home"), proj: filepath.Join(dir, "shop"), srv: llmtest.New(t, replies...)}
	x.env = map[string]string{
		"MIRA_MODEL":      "test-model",
		"OPENAI_BASE_URL": x.srv.URL,
		"OPENAI_API_KEY":  "test-key",
		"XDG_CONFIG_HOME": filepath.Join(dir, ".config"),
		"XDG_STATE_HOME":  filepath.Join(dir, ".state"),
	}
	x.write("go.mod", "module example.com/shop\n")
	if _, err := mem.Open(t0(), x.home, "test", time.Second); err != nil {
		t.Fatal(err)
	}
	return x
}

func (x *agentEnv) write(name, content string) {
	x.t.Helper()
	p := filepath.Join(x.proj, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		x.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		x.t.Fatal(err)
	}
}

// run runs mira-agent with args and stdin (not a terminal) and returns the
// exit status, stdout and stderr.
func (x *agentEnv) run(stdin string, args ...string) (int, string, string) {
	x.t.Helper()
	var out, errb bytes.Buffer
	o := &cli.IO{
		In: strings.NewReader(stdin), Out: &out, Err: &errb,
		Getenv: func(k string) string { return x.env[k] },
		Getwd:  func() (string, error) { return x.proj, nil },
	}
	pre := []string{"--home", x.home}
	if !x.extract {
		pre = append(pre, "--no-extract")
	}
	code := Main(append(pre, args...), o)
	return code, out.String(), errb.String()
}

func (x *agentEnv) ok(stdin string, args ...string) string {
	x.t.Helper()
	code, out, errs := x.run(stdin, args...)
	if code != 0 {
		x.t.Fatalf("mira-agent %s: exit %d\n%s", strings.Join(args, " "), code, errs)
	}
	return out
}

// entries returns the store's entries that keep takes, in path order.
func (x *agentEnv) entries(keep func(*mem.Entry) bool) []*mem.Entry {
	x.t.Helper()
	st, err := mem.Open(t0(), x.home, "test", 0)
	if err != nil {
		x.t.Fatal(err)
	}
	var out []*mem.Entry
	if err := st.Walk(func(e *mem.Entry) error {
		if keep(e) {
			out = append(out, e)
		}
		return nil
	}, nil); err != nil {
		x.t.Fatal(err)
	}
	return out
}

// turns returns the conversation's turns, oldest first.
func (x *agentEnv) turns(scope string) []*mem.Entry {
	x.t.Helper()
	out := x.entries(func(e *mem.Entry) bool { return e.Kind == mem.KindTurn && e.Scope == scope })
	// Walk goes in path order; within a role directory that is time
	// order, so sort all by time and id.
	sortTurns(out)
	return out
}

func jsonArgs(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The one-shot task: read, edit, run, answer; the answer on stdout, the
// file changed, every turn stored with one commit each.
func TestAgentOneShotTask(t *testing.T) {
	x := newAgentEnv(t,
		llmtest.Tools(llmtest.ToolCall{ID: "r", Name: "read_file", Arguments: jsonArgs(map[string]any{"path": "price.go"})}),
		llmtest.Tools(
			llmtest.ToolCall{ID: "e", Name: "edit_file", Arguments: jsonArgs(map[string]any{"path": "price.go", "old_string": "return 10", "new_string": "return 12"})},
			llmtest.ToolCall{ID: "b", Name: "bash", Arguments: jsonArgs(map[string]any{"command": "grep -c 'return 12' price.go"})},
		),
		llmtest.Text("The price is now 12."),
	)
	x.write("price.go", "package shop\n\nfunc Price() int {\n\treturn 10\n}\n")
	before := commitCount(t, x.home)
	out := x.ok("", "-p", "raise the price to 12", "--yes", "--output", "text")
	if out != "The price is now 12.\n" {
		t.Errorf("stdout = %q, want the answer alone", out)
	}
	data, _ := os.ReadFile(filepath.Join(x.proj, "price.go"))
	if !strings.Contains(string(data), "\treturn 12\n") {
		t.Errorf("price.go after the edit:\n%s", data)
	}
	turns := x.turns("chat")
	if diff := cmp.Diff([]string{"user", "assistant", "tool", "assistant", "tool", "tool", "assistant"}, turnRoles(turns)); diff != "" {
		t.Fatalf("turns (-want +got):\n%s", diff)
	}
	if got := commitCount(t, x.home) - before; got != 7 {
		t.Errorf("%d commits, want one per turn (7)", got)
	}
	msg := git(t, x.home, "log", "-1", "--format=%B")
	for _, want := range []string{"agent: assistant turn ", `"The price is now 12."`, "Mira-Command: mira-agent", "Mira-Source: conversation chat", "Mira-Model: test-model", "Mira-Usage: requests=1 prompt="} {
		if !strings.Contains(msg, want) {
			t.Errorf("the last commit's message lacks %q:\n%s", want, msg)
		}
	}
	if turns[0].Project != "shop" || turns[0].Source != "agent" {
		t.Errorf("user turn project %q source %q", turns[0].Project, turns[0].Source)
	}
	if got := x.srv.Last().Messages; !strings.Contains(got[len(got)-1].Content, "1") || got[len(got)-1].ToolCallID != "b" {
		t.Errorf("the last request ends with %+v, want the command's output", got[len(got)-1])
	}
}

// --output jsonl prints the events one per line.
func TestAgentJSONLEvents(t *testing.T) {
	x := newAgentEnv(t,
		llmtest.Tools(llmtest.ToolCall{ID: "g", Name: "glob", Arguments: jsonArgs(map[string]any{"pattern": "*.mod"})}),
		llmtest.Text("There is a go.mod.").WithUsage(50, 5, 32),
	)
	out := x.ok("", "-p", "what is here?", "--output", "jsonl")
	var types []string
	var text strings.Builder
	var last agentloop.Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev agentloop.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if ev.Type == "text" {
			text.WriteString(ev.Text)
			continue
		}
		types = append(types, ev.Type)
		last = ev
		if ev.Type == "tool_result" && ev.Text != "go.mod" {
			t.Errorf("tool_result text %q", ev.Text)
		}
		if ev.Type == "tool_call" && string(ev.Arguments) != `{"pattern":"*.mod"}` {
			t.Errorf("tool_call arguments %s", ev.Arguments)
		}
	}
	if diff := cmp.Diff([]string{"usage", "tool_call", "tool_result", "usage", "done"}, types); diff != "" {
		t.Errorf("event types (-want +got):\n%s", diff)
	}
	if text.String() != "There is a go.mod." {
		t.Errorf("text deltas add up to %q", text.String())
	}
	if last.Usage == nil || last.Usage.Requests != 2 || last.Usage.CachedTokens != 32 {
		t.Errorf("done usage = %+v", last.Usage)
	}
}

// Without --allow or --yes and without a terminal, writes are denied and
// the model is told how the user can allow them; the message comes from
// stdin.
func TestAgentNonInteractiveDenial(t *testing.T) {
	x := newAgentEnv(t,
		llmtest.Tools(llmtest.ToolCall{ID: "w", Name: "write_file", Arguments: jsonArgs(map[string]any{"path": "x.txt", "content": "x"})}),
		llmtest.Func(func(req llmtest.Request) llmtest.Reply {
			last := req.Messages[len(req.Messages)-1]
			if !strings.Contains(last.Content, "--allow write_file or --yes") {
				return llmtest.Text("no denial: " + last.Content)
			}
			return llmtest.Text("I may not write files here.")
		}),
	)
	out := x.ok("please create x.txt\n", "--output", "text")
	if out != "I may not write files here.\n" {
		t.Errorf("stdout = %q", out)
	}
	if _, err := os.Stat(filepath.Join(x.proj, "x.txt")); err == nil {
		t.Error("x.txt was written without permission")
	}
	if got := x.srv.Requests()[0].LastUser(); !strings.HasSuffix(got, "please create x.txt") {
		t.Errorf("the message from stdin arrived as %q", got)
	}
}

// --allow lets one tool run; the others are still denied.
func TestAgentAllowOneTool(t *testing.T) {
	x := newAgentEnv(t,
		llmtest.Tools(
			llmtest.ToolCall{ID: "b", Name: "bash", Arguments: jsonArgs(map[string]any{"command": "echo ran > ran.txt"})},
			llmtest.ToolCall{ID: "w", Name: "write_file", Arguments: jsonArgs(map[string]any{"path": "w.txt", "content": "x"})},
		),
		llmtest.Text("done"),
	)
	x.ok("", "-p", "go", "--allow", "bash", "--output", "text")
	if _, err := os.Stat(filepath.Join(x.proj, "ran.txt")); err != nil {
		t.Errorf("the allowed bash call did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(x.proj, "w.txt")); err == nil {
		t.Error("write_file ran without being allowed")
	}
}

// The remember tool stores into the project's scope; recall finds it
// again with the hybrid search; a restarted agent continues the
// conversation.
func TestAgentRememberRecallRestart(t *testing.T) {
	x := newAgentEnv(t,
		llmtest.Tools(llmtest.ToolCall{ID: "m", Name: "remember", Arguments: jsonArgs(map[string]any{"text": "Prices are kept in cents as integers.", "kind": "decision"})}),
		llmtest.Text("Noted."),
		llmtest.Tools(llmtest.ToolCall{ID: "q", Name: "recall", Arguments: jsonArgs(map[string]any{"query": "how are prices kept"})}),
		llmtest.Text("In cents."),
	)
	x.ok("", "-p", "remember: prices in cents", "--output", "text")
	st, err := mem.Open(t0(), x.home, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	var stored []*mem.Entry
	st.Walk(func(e *mem.Entry) error {
		if e.Kind == mem.KindDecision {
			stored = append(stored, e)
		}
		return nil
	}, nil)
	if len(stored) != 1 || stored[0].Scope != "shop" || stored[0].Project != "shop" {
		t.Fatalf("remembered %+v, want one decision in scope shop", stored)
	}
	x.ok("", "-p", "how do we keep prices?", "--output", "text")
	reqs := x.srv.Requests()
	msgs := reqs[3].Messages
	if res := msgs[len(msgs)-1].Content; !strings.Contains(res, "Prices are kept in cents") || !strings.Contains(res, stored[0].ID) {
		t.Errorf("recall returned %q", res)
	}
	// The second run's first request holds the first run's exchange.
	first := reqs[2].Messages
	var roles []string
	for _, m := range first[2:] {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"user", "assistant", "tool", "assistant", "user"}, roles); diff != "" {
		t.Errorf("the restarted conversation (-want +got):\n%s", diff)
	}
	// The recalled decision is in front of the new message.
	if got := reqs[2].LastUser(); !strings.Contains(got, "Prices are kept in cents") {
		t.Errorf("the new message does not carry the recalled decision:\n%s", got)
	}
}

// Slash commands run one-shot without a model.
func TestAgentSlashOneShot(t *testing.T) {
	x := newAgentEnv(t)
	delete(x.env, "MIRA_MODEL")
	out := x.ok("", "-p", "/remember goal: ship the agent", "--output", "jsonl")
	var rec mem.Record
	if err := json.Unmarshal([]byte(out), &rec); err != nil || rec.Kind != "goal" || rec.Scope != "shop" || rec.Status != "open" {
		t.Fatalf("/remember printed %q (%v)", out, err)
	}
	if out := x.ok("", "-p", "/goals", "--output", "text"); !strings.Contains(out, "ship the agent") {
		t.Errorf("/goals = %q", out)
	}
	if out := x.ok("", "-p", "/tasks", "--output", "text"); !strings.Contains(out, "No tasks.") {
		t.Errorf("/tasks = %q", out)
	}
	out = x.ok("", "-p", "/status", "--output", "jsonl")
	var status map[string]any
	if err := json.Unmarshal([]byte(out), &status); err != nil || status["project"] != "shop" || status["model"] != "none" {
		t.Errorf("/status = %q (%v)", out, err)
	}
	out = x.ok("", "-p", "/context ship", "--output", "text")
	for _, want := range []string{"standing", "goals", rec.ID, "buffer 0/24,000"} {
		if !strings.Contains(out, want) {
			t.Errorf("/context lacks %q:\n%s", want, out)
		}
	}
	if out := x.ok("", "-p", "/forget "+rec.ID, "--output", "text"); !strings.Contains(out, "Forgot "+rec.ID) {
		t.Errorf("/forget = %q", out)
	}
	if out := x.ok("", "-p", "/goals", "--output", "text"); !strings.Contains(out, "No goals.") {
		t.Errorf("/goals after /forget = %q", out)
	}
	if code, _, errs := x.run("", "-p", "/nope"); code != cli.ExitUsage || !strings.Contains(errs, "unknown command /nope") {
		t.Errorf("/nope: exit %d, %q", code, errs)
	}
	if code, _, errs := x.run("", "-p", "hello"); code != cli.ExitUsage || !strings.Contains(errs, "no chat model configured") {
		t.Errorf("a message without a model: exit %d, %q", code, errs)
	}
}

func TestAgentUsageErrors(t *testing.T) {
	x := newAgentEnv(t)
	for _, args := range [][]string{
		{"-p", "x", "--allow", "read_file"},
		{"-p", "x", "--max-steps", "0"},
		{"-p", "x", "--conversation", "../up"},
		{"-p", "x", "--effort", "extreme"},
		{"--output", "text"}, // empty stdin
	} {
		if code, _, errs := x.run("", args...); code != cli.ExitUsage {
			t.Errorf("mira-agent %v: exit %d, want 2\n%s", args, code, errs)
		}
	}
}

// A limit below 1 is refused by agentloop's check and named by its flag,
// before a model is asked for.
func TestAgentLimitErrors(t *testing.T) {
	x := newAgentEnv(t)
	for _, flag := range []string{"--max-steps", "--buffer-tokens", "--context-budget"} {
		for _, v := range []string{"0", "-1"} {
			code, _, errs := x.run("", "-p", "x", flag+"="+v)
			want := "mira-agent: " + flag + ": must be at least 1\n"
			if code != cli.ExitUsage || !strings.HasPrefix(errs, want) {
				t.Errorf("mira-agent %s %s: exit %d, %q, want exit 2, %q", flag, v, code, errs, want)
			}
		}
	}
	if code, _, errs := x.run("", "-p", "x", "--conversation", "../up"); code != cli.ExitUsage || !strings.HasPrefix(errs, "mira-agent: --conversation: ") {
		t.Errorf("mira-agent --conversation ../up: exit %d, %q", code, errs)
	}
}

// The built-in defaults of the flags are agentloop's.
func TestAgentFlagDefaults(t *testing.T) {
	var c Cmd
	o := &cli.IO{In: strings.NewReader(""), Out: new(bytes.Buffer), Err: new(bytes.Buffer), Getenv: func(string) string { return "" }, Getwd: os.Getwd}
	cli.Main("mira-agent", "", &c, []string{"--home", t.TempDir(), "-p", "/help", "--output", "text"}, o)
	if c.Conversation != agentloop.DefaultConversation || c.MaxSteps != agentloop.DefaultMaxSteps || c.BufferTokens != agentloop.DefaultBufferTokens ||
		c.ContextBudget != agentloop.DefaultContextBudget || c.RecallK != agentloop.DefaultRecallK {
		t.Errorf("flag defaults %+v differ from agentloop's", c)
	}
}

func t0() context.Context { return context.Background() }

// sortTurns orders turns as the conversation: by time, then id.
func sortTurns(es []*mem.Entry) {
	slices.SortFunc(es, func(a, b *mem.Entry) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

func turnRoles(es []*mem.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Role
	}
	return out
}

// commitCount counts the commits of the store at home.
func commitCount(t *testing.T, home string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(git(t, home, "rev-list", "--count", "HEAD")))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Past --buffer-tokens the older conversation is summarized between runs;
// the summary and a pinned memory are in the standing context, and every
// turn is covered by the summary or still sent.
func TestAgentRollingSummary(t *testing.T) {
	var replies []llmtest.Reply
	for i := range 5 {
		replies = append(replies, llmtest.Text(fmt.Sprintf("Reply %d: the invoice total is computed from the line items, rounded per line, then summed in cents.", i)))
	}
	x := newAgentEnv(t, replies...)
	var out, errb bytes.Buffer
	o := &cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return x.env[k] }, Getwd: func() (string, error) { return x.proj, nil }}
	if code := cli.Remember([]string{"--home", x.home, "--pin", "sticky", "--kind", "preference", "Spell it British: colour, centre."}, o); code != 0 {
		t.Fatalf("mira-remember --pin: %s", errb.String())
	}
	for i := range 5 {
		x.ok("", "-p", fmt.Sprintf("Question %d: how is the invoice total computed when a line has a discount?", i),
			"--buffer-tokens", "100", "--summarizer", "extractive", "--output", "text")
	}
	st, err := mem.Open(t0(), x.home, "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	state, err := summarize.Load(st, "chat", []string{mem.KindTurn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Summaries) == 0 {
		t.Fatal("no summary was written")
	}
	// Turns are covered through L1 summaries, which stay live when an
	// L3 folds them.
	covered := map[string]bool{}
	st.Walk(func(e *mem.Entry) error {
		if e.Kind == mem.KindSummary && e.Level == "L1" && e.Scope == "chat" {
			list, _ := e.Fields()["covers"].([]any)
			for _, v := range list {
				id, _ := v.(string)
				covered[id] = true
			}
		}
		return nil
	}, nil)
	buffered := map[string]bool{}
	for _, e := range state.Buffer {
		buffered[e.ID] = true
	}
	for _, e := range x.turns("chat") {
		if !covered[e.ID] && !buffered[e.ID] {
			t.Errorf("turn %s (%s) is neither summarized nor in the buffer", e.ID, e.Role)
		}
	}
	standing := x.srv.Last().Messages[1].Content
	if !strings.Contains(standing, "## Summary") || !strings.Contains(standing, "Spell it British") {
		t.Errorf("the last request's standing context lacks the summary or the pin:\n%s", standing)
	}
}

// The file tools stay in the project unless --allow-path lets them out.
func TestAgentAllowPath(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(outside, []byte("shared notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := llmtest.Tools(llmtest.ToolCall{ID: "r", Name: "read_file", Arguments: jsonArgs(map[string]any{"path": outside})})
	x := newAgentEnv(t, read, llmtest.Text("no"), read, llmtest.Text("yes"))
	x.ok("", "-p", "read my notes", "--output", "text")
	msgs := x.srv.Last().Messages
	if got := msgs[len(msgs)-1].Content; strings.Contains(got, "shared notes") {
		t.Errorf("read a file outside the project without --allow-path: %q", got)
	}
	x.ok("", "-p", "read my notes", "--output", "text", "--allow-path", filepath.Dir(outside))
	msgs = x.srv.Last().Messages
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, "shared notes") {
		t.Errorf("--allow-path did not let read_file out: %q", got)
	}
}

// With the chat model as summarizer, a summary's commit says which model
// wrote it and what it cost, apart from the conversation's own requests.
func TestAgentModelSummaryCommit(t *testing.T) {
	x := newAgentEnv(t)
	x.srv.Default(llmtest.Func(func(req llmtest.Request) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Text("The user asked how invoices are totalled; the answer: per line, in cents.")
		}
		return llmtest.Text("Invoices are totalled per line, rounded, then summed in cents, as the billing code has always done.")
	}))
	for i := range 5 {
		x.ok("", "-p", fmt.Sprintf("Question %d: how are invoices totalled when lines carry discounts and taxes?", i), "--buffer-tokens", "60", "--output", "text")
	}
	log := git(t, x.home, "log", "--format=%B%x00")
	var found bool
	for _, msg := range strings.Split(log, "\x00") {
		if strings.Contains(msg, "summarize: chat:") {
			found = true
			for _, want := range []string{"Mira-Model: test-model", "Mira-Usage: requests="} {
				if !strings.Contains(msg, want) {
					t.Errorf("summary commit lacks %q:\n%s", want, msg)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no summary commit in:\n%s", log)
	}
}

// The tools' notices reach the user once a session, although /switch
// builds the tools again and they tell again.
func TestAgentNoticeOnce(t *testing.T) {
	var errb bytes.Buffer
	s := &agentSession{o: &cli.IO{Err: &errb}}
	const msg = "bash is not confined: this kernel has no Landlock (needs Linux 5.13+); commands can write anywhere you can"
	for range 3 {
		s.notice(msg)
	}
	s.notice("another notice")
	if got := errb.String(); strings.Count(got, msg) != 1 || strings.Count(got, "another notice") != 1 || strings.Count(got, "\n") != 2 {
		t.Errorf("stderr = %q, want each notice once, on a line of its own", got)
	}
}

// The file tools leave git's files alone unless --allow-git-config or
// agent.allow_git_config says otherwise, and never write the store.
func TestAgentAllowGitConfig(t *testing.T) {
	hook := llmtest.Tools(llmtest.ToolCall{ID: "w", Name: "write_file", Arguments: jsonArgs(map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch /tmp/x\n"})})
	x := newAgentEnv(t, hook, llmtest.Text("done"), hook, llmtest.Text("done"), hook, llmtest.Text("done"))
	git(t, x.proj, "init", "-q")
	p := filepath.Join(x.proj, ".git", "hooks", "pre-commit")
	x.ok("", "-p", "add a hook", "--yes")
	if _, err := os.Stat(p); err == nil {
		t.Fatal("write_file wrote a hook without --allow-git-config")
	}
	msgs := x.srv.Last().Messages
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, "--allow-git-config") {
		t.Errorf("the refusal does not say how to allow it: %q", got)
	}
	x.ok("", "-p", "add a hook", "--yes", "--allow-git-config")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("--allow-git-config: %v", err)
	}
	os.Remove(p)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("agent:\n  allow_git_config: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	x.env["MIRA_CONFIG"] = cfg
	x.ok("", "-p", "add a hook", "--yes")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("agent.allow_git_config: %v", err)
	}
}

// Run in the store itself, the agent's file tools do not write memories:
// those go through remember, signed as the agent's.
func TestAgentStoreProtected(t *testing.T) {
	w := llmtest.Tools(llmtest.ToolCall{ID: "w", Name: "write_file", Arguments: jsonArgs(map[string]any{"path": "entries/global/notes/x.md", "content": "---\nkind: note\n---\nobey\n"})})
	x := newAgentEnv(t, w, llmtest.Text("done"))
	x.proj = x.home
	x.ok("", "-p", "write a memory", "--yes")
	if _, err := os.Stat(filepath.Join(x.home, "entries", "global", "notes", "x.md")); err == nil {
		t.Fatal("write_file wrote into the store")
	}
	msgs := x.srv.Last().Messages
	if got := msgs[len(msgs)-1].Content; !strings.Contains(got, "memory store") {
		t.Errorf("tool result = %q", got)
	}
}

// The agent's summaries evict as mira-summarize's do: a conversation past
// summarize.max_entries loses its oldest covered turns.
func TestAgentSummaryEvicts(t *testing.T) {
	var replies []llmtest.Reply
	for i := range 8 {
		replies = append(replies, llmtest.Text(fmt.Sprintf("Reply %d: the invoice total is computed from the line items, rounded per line, then summed in cents.", i)))
	}
	x := newAgentEnv(t, replies...)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("summarize:\n  max_entries: 6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	x.env["MIRA_CONFIG"] = cfg
	for i := range 8 {
		x.ok("", "-p", fmt.Sprintf("Question %d: how is the invoice total computed when a line has a discount?", i),
			"--buffer-tokens", "100", "--summarizer", "extractive", "--output", "text")
	}
	if n := len(x.turns("chat")); n >= 16 {
		t.Errorf("%d live turns of 16 after summaries with summarize.max_entries 6: nothing was evicted", n)
	}
}
