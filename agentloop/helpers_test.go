package agentloop_test

import (
	"context"
	"encoding/json"
	. "github.com/miramem/mira/agentloop"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/agentloop/tools"
	"github.com/miramem/mira/internal/secret"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
)

// rig is an agent over a temporary store and project, talking to a fake
// chat server.
type rig struct {
	t       *testing.T
	home    string
	root    string
	st      *mem.Store
	m       *mira.Memory
	srv     *llmtest.Server
	client  *llm.Client
	policy  *tools.Policy
	reg     *tools.Registry
	lib     *testLibrary
	cfg     Config
	agent   *Agent
	events  []Event
	limits  tools.Limits
	artSeq  int
	summary bool
}

type rigOpt func(*rig)

// withConfig adjusts the agent's configuration.
func withConfig(f func(*Config)) rigOpt { return func(r *rig) { f(&r.cfg) } }

// withPolicy replaces the permission policy (default: --yes).
func withPolicy(p *tools.Policy) rigOpt { return func(r *rig) { r.policy = p } }

// withLimits sets the tools' limits.
func withLimits(l tools.Limits) rigOpt { return func(r *rig) { r.limits = l } }

// withSummaries gives the agent the extractive store summarizer.
func withSummaries() rigOpt { return func(r *rig) { r.summary = true } }

func newRig(t *testing.T, replies []llmtest.Reply, opts ...rigOpt) *rig {
	t.Helper()
	dir := t.TempDir()
	r := &rig{t: t, home: filepath.Join(dir, "home"), root: filepath.Join(dir, "proj"), policy: &tools.Policy{Yes: true}}
	if err := os.MkdirAll(r.root, 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := mem.Open(context.Background(), r.home, "mira-agent", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	st.Author, st.Email = "Test", "test@example.com"
	r.st = st
	r.srv = llmtest.New(t, replies...)
	r.client, err = llm.New(llm.Config{BaseURL: r.srv.URL, Model: "test-model", MaxRetries: -1, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r.lib = &testLibrary{st: st}
	r.cfg = Config{
		Model: r.client, Library: r.lib,
		Project: mem.Project{Name: "proj", Root: r.root, By: "test"},
		Warn:    func(err error) { t.Logf("warning: %v", err) },
	}
	r.cfg.Store = r.memory()
	for _, o := range opts {
		o(r)
	}
	if r.summary {
		r.cfg.Summarizer = memorySummarizer{r.memory()}
	}
	r.reg = r.registry(r.root)
	r.cfg.Tools = r.reg
	r.agent = r.open()
	return r
}

// registry builds the tools over root.
func (r *rig) registry(root string) *tools.Registry {
	r.t.Helper()
	reg, err := tools.New(tools.Config{
		Root: root, Policy: r.policy, Limits: r.limits,
		Artifacts: &tools.Artifacts{Store: r.home, Scope: "chat"},
	})
	if err != nil {
		r.t.Fatal(err)
	}
	return reg
}

// open starts an agent on the rig's store, as a restarted process would.
func (r *rig) open() *Agent {
	r.t.Helper()
	a, err := New(r.cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	return a
}

// send sends a message and fails the test on an error.
func (r *rig) send(text string) *Answer {
	r.t.Helper()
	ans, err := r.agent.Send(context.Background(), text, r.record)
	if err != nil {
		r.t.Fatalf("Send(%q): %v", text, err)
	}
	return ans
}

func (r *rig) record(ev Event) { r.events = append(r.events, ev) }

// write creates a file in the project.
func (r *rig) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) read(name string) string {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.root, name))
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

// turns returns the live turns of the conversation, in order.
func (r *rig) turns() []*mem.Entry {
	r.t.Helper()
	var out []*mem.Entry
	err := r.st.Walk(func(e *mem.Entry) error {
		if e.Kind == mem.KindTurn && e.Scope == "chat" {
			out = append(out, e)
		}
		return nil
	}, func(err error) { r.t.Errorf("broken file: %v", err) })
	if err != nil {
		r.t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b *mem.Entry) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// roles lists the roles of turns.
func roles(es []*mem.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Role
	}
	return out
}

// commits counts the store's commits.
func (r *rig) commits() int {
	r.t.Helper()
	out, err := exec.Command("git", "-C", r.home, "rev-list", "--count", "HEAD").Output()
	if err != nil {
		r.t.Fatalf("git rev-list: %v", err)
	}
	n := 0
	for _, c := range strings.TrimSpace(string(out)) {
		n = n*10 + int(c-'0')
	}
	return n
}

// remember stores a memory directly, as mira-remember would.
func (r *rig) remember(e *mem.Entry) *mem.Entry {
	r.t.Helper()
	l, err := r.st.Lock(context.Background(), 5*time.Second)
	if err != nil {
		r.t.Fatal(err)
	}
	defer l.Unlock()
	tx := r.st.Begin(false)
	if e.Source == "" {
		e.Source = "cli"
	}
	if err := tx.Add(e); err != nil {
		r.t.Fatal(err)
	}
	if _, err := tx.Commit("remember: test"); err != nil {
		r.t.Fatal(err)
	}
	return e
}

// rawRequest is a captured request with its messages as sent, byte for
// byte.
type rawRequest struct {
	Messages []json.RawMessage `json:"messages"`
	Tools    json.RawMessage   `json:"tools"`
	Effort   string            `json:"reasoning_effort"`
}

func raw(t *testing.T, req llmtest.Request) rawRequest {
	t.Helper()
	var rr rawRequest
	if err := json.Unmarshal(req.Body, &rr); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return rr
}

// args encodes tool arguments.
func args(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// testLibrary is a Library over the store that walks its files: pins and
// standing kinds for Standing, shared words for Relevant.
type testLibrary struct {
	st      *mem.Store
	queries []string
}

func (l *testLibrary) Standing(_ context.Context, scopes []string) ([]mem.Record, error) {
	var out []mem.Record
	err := l.st.Walk(func(e *mem.Entry) error {
		if !slices.Contains(scopes, e.Scope) {
			return nil
		}
		if e.Pin != "" || e.Kind == mem.KindCorrection || e.Kind == mem.KindGoal || e.Kind == mem.KindTask {
			out = append(out, e.Record())
		}
		return nil
	}, nil)
	return out, err
}

func (l *testLibrary) Relevant(_ context.Context, text string, k int) ([]mem.Record, error) {
	l.queries = append(l.queries, text)
	words := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(text)) {
		if len(w) > 3 {
			words[w] = true
		}
	}
	var out []mem.Record
	err := l.st.Walk(func(e *mem.Entry) error {
		if e.Kind == mem.KindTurn || e.Kind == mem.KindSummary {
			return nil
		}
		n := 0
		for _, w := range strings.Fields(strings.ToLower(e.Body)) {
			if words[strings.Trim(w, ".,")] {
				n++
			}
		}
		if n > 0 {
			rec := e.Record()
			s := float64(n)
			rec.Score = &s
			out = append(out, rec)
		}
		return nil
	}, nil)
	if len(out) > k {
		out = out[:k]
	}
	return out, err
}

// secretScan is the scan that decides what is a secret.
func secretScan(s string) []secret.Finding { return secret.Scan(s) }

// memory opens the rig's store as mira-agent does, closed with the test.
func (r *rig) memory() *mira.Memory {
	r.t.Helper()
	if r.m == nil {
		env := map[string]string{"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com"}
		m, err := mira.Open(context.Background(), mira.Options{Home: r.home, Command: "mira-agent", Config: &mira.Config{},
			LockTimeout: 5 * time.Second, Getenv: func(k string) string { return env[k] }})
		if err != nil {
			r.t.Fatal(err)
		}
		r.t.Cleanup(func() { m.Close() })
		r.m = m
	}
	return r.m
}

// memorySummarizer summarizes the conversation's turns offline, as
// mira-agent --summarizer extractive does.
type memorySummarizer struct{ m *mira.Memory }

func (s memorySummarizer) Summarize(ctx context.Context, scope, through string) error {
	_, err := s.m.Summarize(ctx, mira.SummarizeOptions{Scopes: []string{scope}, Kinds: []string{mem.KindTurn}, Through: through, Extractive: true})
	return err
}
