package agent

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/alecthomas/kong"
	"github.com/miramem/mira"
	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// factsServer is the fake chat server of the extraction tests: the agent's
// requests (streamed) take the scripted replies in order; extraction's
// (JSON, not streamed) are answered by extract, and reconciliation's with
// ADD for every fact.
type factsServer struct {
	*llmtest.Server
	mu      sync.Mutex
	script  []llmtest.Reply
	extract func(llmtest.Request) llmtest.Reply
	asked   []string // the user messages extraction was asked about
}

// askedN returns how many times extraction was asked.
func (f *factsServer) askedN() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

func newFactsServer(t *testing.T, extract func(llmtest.Request) llmtest.Reply, replies ...llmtest.Reply) *factsServer {
	f := &factsServer{Server: llmtest.New(t), script: replies, extract: extract}
	f.Default(llmtest.Func(f.route))
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.script) > 0 && !t.Failed() {
			t.Errorf("%d scripted replies of the agent were never requested", len(f.script))
		}
	})
	return f
}

var factIDs = regexp.MustCompile(`(?m)^(f\d+) \(`)

// addEveryFact answers a reconciliation request with ADD for every fact
// it names; ok is false for any other request.
func addEveryFact(req llmtest.Request) (r llmtest.Reply, ok bool) {
	if !strings.Contains(req.System(), "keep a long-term memory consistent") {
		return llmtest.Reply{}, false
	}
	var ds []map[string]string
	for _, m := range factIDs.FindAllStringSubmatch(req.LastUser(), -1) {
		ds = append(ds, map[string]string{"fact": m[1], "action": "ADD"})
	}
	return llmtest.JSON(map[string]any{"decisions": ds}), true
}

func (f *factsServer) route(req llmtest.Request) llmtest.Reply {
	if req.Stream {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.script) == 0 {
			return llmtest.Error(400, "no scripted reply left for the agent")
		}
		r := f.script[0]
		f.script = f.script[1:]
		return r
	}
	if r, ok := addEveryFact(req); ok {
		return r
	}
	f.mu.Lock()
	f.asked = append(f.asked, req.LastUser())
	f.mu.Unlock()
	return f.extract(req)
}

// factsOf answers an extraction request with these facts, all preferences.
func factsOf(facts ...string) func(llmtest.Request) llmtest.Reply {
	return func(llmtest.Request) llmtest.Reply {
		var items []map[string]string
		for _, s := range facts {
			items = append(items, map[string]string{"text": s, "kind": "preference"})
		}
		return llmtest.JSON(map[string]any{"facts": items})
	}
}

// extracted returns the live memories extraction stored in the scope.
func (x *agentEnv) extracted(scope string) []*mem.Entry {
	x.t.Helper()
	return x.entries(func(e *mem.Entry) bool { return e.Scope == scope && e.Source == "extract" && !e.Deleted() })
}

func bodies(es []*mem.Entry) string {
	var b []string
	for _, e := range es {
		b = append(b, e.Body)
	}
	return strings.Join(b, " | ")
}

func newFactsEnv(t *testing.T, extract func(llmtest.Request) llmtest.Reply, replies ...llmtest.Reply) (*agentEnv, *factsServer) {
	x := newAgentEnv(t)
	f := newFactsServer(t, extract, replies...)
	x.srv = f.Server
	x.env["OPENAI_BASE_URL"] = f.URL
	x.extract = true
	return x, f
}

// After a message the facts the user stated are stored, reconciled, in
// the conversation's scope, as mira-proxy stores them: the model need not
// call remember, and a fact it did remember (in the global or project
// scope) is reconciled with and stored once. The user turn is marked read; the commit records
// the model and what the round cost.
func TestAgentExtractsFacts(t *testing.T) {
	x, f := newFactsEnv(t, factsOf("The user's favourite editor is Helix.", "The user prefers tabs over spaces."),
		llmtest.Tools(llmtest.ToolCall{ID: "m", Name: "remember", Arguments: jsonArgs(map[string]any{"text": "The user's favourite editor is Helix.", "kind": "preference"})}),
		llmtest.Text("Noted."))
	out := x.ok("", "-p", "My favourite editor is Helix. I prefer tabs over spaces.", "--output", "text")
	if out != "Noted.\n" {
		t.Errorf("stdout = %q", out)
	}
	// The fact the model remembered (a preference: global scope) is
	// reconciled with, not stored a second time in the conversation's.
	got := x.extracted("chat")
	if len(got) != 1 || !strings.Contains(bodies(got), "tabs over spaces") {
		t.Fatalf("extracted memories: %q", bodies(got))
	}
	if n := x.countBody("The user's favourite editor is Helix."); n != 1 {
		t.Errorf("the remembered fact is stored %d times, want once", n)
	}
	user := x.turns("chat")[0]
	for _, e := range got {
		if e.Kind != mem.KindPreference || e.Fields()["extracted_from"] != user.ID {
			t.Errorf("memory %s: kind %s, extracted_from %v, want preference from %s", e.ID, e.Kind, e.Fields()["extracted_from"], user.ID)
		}
	}
	if _, ok := user.Fields()["extracted_at"]; !ok {
		t.Errorf("the user turn is not marked read: %v", user.Extra)
	}
	if f.askedN() != 1 || !strings.Contains(f.asked[0], "I prefer tabs over spaces.") {
		t.Errorf("extraction was asked about %q", f.asked)
	}
	msg := git(t, x.home, "log", "-1", "--format=%B")
	for _, want := range []string{`extract: preference`, `"The user prefers tabs over spaces."`, "Mira-Model: test-model", "Mira-Source: chat", "Mira-Usage: requests="} {
		if !strings.Contains(msg, want) {
			t.Errorf("last commit lacks %q:\n%s", want, msg)
		}
	}

	// --no-extract (and agent.extract: false) leave the facts alone.
	f.mu.Lock()
	f.script = append(f.script, llmtest.Text("Noted too."))
	f.mu.Unlock()
	x.extract = false
	x.ok("", "-p", "I also like Go.", "--output", "text")
	if f.askedN() != 1 {
		t.Errorf("--no-extract: extraction was asked %d times", f.askedN())
	}
}

// session opens a mira-agent session in this process as Run does, with
// args parsed as mira-agent parses them, printing text into out.
func (x *agentEnv) session(out *bytes.Buffer, args ...string) *agentSession {
	x.t.Helper()
	o := &cli.IO{In: strings.NewReader(""), Out: out, Err: out,
		Getenv: func(k string) string { return x.env[k] },
		Getwd:  func() (string, error) { return x.proj, nil }}
	var c Cmd
	p, err := kong.New(&c, cli.KongVars(o.Config(), o.Getenv))
	if err != nil {
		x.t.Fatal(err)
	}
	if _, err := p.Parse(append([]string{"--home", x.home, "--output", "text"}, args...)); err != nil {
		x.t.Fatal(err)
	}
	if err := c.check(); err != nil {
		x.t.Fatal(err)
	}
	client, err := mira.NewChatModel(c.Model, o.Config(), o.Getenv)
	if err != nil {
		x.t.Fatal(err)
	}
	s, err := c.open(x.t.Context(), o, client, false)
	if err != nil {
		x.t.Fatal(err)
	}
	return s
}

// A slow extraction never holds up the conversation: while the model
// still extracts from the first message (its reply held on a channel only
// the test releases), the second message is answered. Once released, the
// session ends by waiting for it, and the facts of both messages are
// stored.
func TestAgentExtractionDoesNotDelayReplies(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 8)
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	x, f := newFactsEnv(t, func(req llmtest.Request) llmtest.Reply {
		started <- struct{}{}
		<-release
		if strings.Contains(req.LastUser(), "Helix") {
			return factsOf("The user's favourite editor is Helix.")(req)
		}
		return factsOf("The user prefers tabs over spaces.")(req)
	}, llmtest.Text("Noted the editor."), llmtest.Text("Noted the tabs."))
	var out bytes.Buffer
	s := x.session(&out)
	ctx := t.Context()
	if _, err := s.send(ctx, "My favourite editor is Helix."); err != nil {
		t.Fatal(err)
	}
	if !s.extract.pending() {
		t.Fatal("no extraction under way after the first message")
	}
	<-started // the first extraction is under way, and held
	ans, err := s.send(ctx, "I prefer tabs over spaces.")
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != "Noted the tabs." {
		t.Errorf("second answer = %q", ans.Text)
	}
	if len(x.extracted("chat")) != 0 {
		t.Fatalf("facts stored before the extraction was released")
	}
	once.Do(func() { close(release) })
	s.endExtraction(ctx, true)
	got := x.extracted("chat")
	if len(got) != 2 {
		t.Fatalf("extracted after the session: %q", bodies(got))
	}
	if f.askedN() != 2 {
		t.Errorf("extraction asked %d times, want once per message", f.askedN())
	}
}

// An extraction model that fails loses nothing: the answer is printed and
// the exit status is 0, the failure is on stderr, the user's turn stays
// unread, and the next session, with a model that works, takes it up
// first thing.
func TestAgentExtractionFailureLosesNothing(t *testing.T) {
	var fail sync.Mutex
	failing := true
	x, f := newFactsEnv(t, func(req llmtest.Request) llmtest.Reply {
		fail.Lock()
		defer fail.Unlock()
		if failing {
			return llmtest.Error(400, "the model is out of order")
		}
		return factsOf("The user's favourite editor is Helix.")(req)
	}, llmtest.Text("Noted."))
	code, out, errs := x.run("", "-p", "My favourite editor is Helix.", "--output", "text")
	if code != 0 || out != "Noted.\n" {
		t.Fatalf("exit %d, stdout %q\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "facts not extracted") || !strings.Contains(errs, "out of order") {
		t.Errorf("stderr does not report the failure:\n%s", errs)
	}
	turns := x.turns("chat")
	if len(turns) != 2 {
		t.Fatalf("turns: %v", turnRoles(turns))
	}
	if _, ok := turns[0].Fields()["extracted_at"]; ok {
		t.Fatalf("a turn whose extraction failed is marked read")
	}
	if got := x.extracted("chat"); len(got) != 0 {
		t.Fatalf("memories after a failed extraction: %q", bodies(got))
	}

	fail.Lock()
	failing = false
	fail.Unlock()
	var buf bytes.Buffer
	s := x.session(&buf)
	s.extract.kick() // as an interactive session does when it starts
	s.endExtraction(t.Context(), true)
	if got := x.extracted("chat"); len(got) != 1 || got[0].Fields()["extracted_from"] != turns[0].ID {
		t.Fatalf("the next session did not take the turn up: %q", bodies(got))
	}
	if n := f.askedN(); n != 2 {
		t.Errorf("extraction asked %d times, want 2", n)
	}
}

// A session ended by a signal (or whose wait ran out) does not wait for
// the extraction under way: it is cancelled, nothing of it is written, the
// turn stays unread, and the next session takes it up.
func TestAgentExtractionCutShortResumes(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	started := make(chan struct{}, 8)
	hold := true
	var mu sync.Mutex
	x, f := newFactsEnv(t, func(req llmtest.Request) llmtest.Reply {
		mu.Lock()
		h := hold
		mu.Unlock()
		if h {
			started <- struct{}{}
			<-release
			return llmtest.Error(400, "too late")
		}
		return factsOf("The user's favourite editor is Helix.")(req)
	}, llmtest.Text("Noted."))
	var out bytes.Buffer
	s := x.session(&out)
	if _, err := s.send(t.Context(), "My favourite editor is Helix."); err != nil {
		t.Fatal(err)
	}
	if !s.extract.pending() {
		t.Fatal("no extraction under way after the message")
	}
	<-started
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // SIGTERM
	s.endExtraction(ctx, false)
	if !strings.Contains(out.String(), "the next session takes them up") {
		t.Errorf("no word of the extraction left undone:\n%s", out.String())
	}
	turns := x.turns("chat")
	if _, ok := turns[0].Fields()["extracted_at"]; ok {
		t.Fatalf("a turn whose extraction was cut short is marked read")
	}
	mu.Lock()
	hold = false
	mu.Unlock()
	once.Do(func() { close(release) })

	s = x.session(&out)
	s.extract.kick()
	s.endExtraction(t.Context(), true)
	got := x.extracted("chat")
	if len(got) != 1 || got[0].Fields()["extracted_from"] != turns[0].ID {
		t.Fatalf("the next session did not take the turn up: %q", bodies(got))
	}
	if f.askedN() != 2 {
		t.Errorf("extraction asked %d times", f.askedN())
	}
}

// countBody counts the live memories of every scope with this text.
func (x *agentEnv) countBody(body string) int {
	x.t.Helper()
	return len(x.entries(func(e *mem.Entry) bool { return e.Kind != mem.KindTurn && !e.Deleted() && e.Body == body }))
}
