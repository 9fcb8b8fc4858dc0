package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miramem/mira/cmd/internal/clitest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bin is the mira-mcp binary built for the tests: the hosts start the
// real program, so the tests do too.
var bin string

func TestMain(m *testing.M) { clitest.RunBuilt(m, "mira-mcp", &bin) }

// env is a clean environment for one store: nothing of the user's.
func env(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(home), "MIRA_HOME=" + home,
		"MIRA_CONFIG=" + filepath.Join(filepath.Dir(home), "none.yaml"), "XDG_CONFIG_HOME=" + filepath.Join(filepath.Dir(home), "cfg"),
		"MIRA_PROJECT=", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
	}
}

func newStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "none.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "home")
}

func stdioSession(t *testing.T, home string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = env(home)
	cmd.Dir = filepath.Dir(home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("mira-mcp stderr:\n%s", stderr.String())
		}
	})
	return cs
}

// httpServer starts mira-mcp --http on a free loopback port and returns
// its endpoint.
func httpServer(t *testing.T, home string, args ...string) (endpoint string, cmd *exec.Cmd) {
	t.Helper()
	cmd = exec.Command(bin, append([]string{"--http", "127.0.0.1:0", "-v"}, args...)...)
	cmd.Env = env(home)
	cmd.Dir = filepath.Dir(home)
	errp, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	sc := bufio.NewScanner(errp)
	re := regexp.MustCompile(`serving MCP on (http://\S+)`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return m[1], cmd
		}
		t.Logf("mira-mcp: %s", sc.Text())
	}
	t.Fatal("mira-mcp --http exited before it served")
	return "", nil
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func httpSession(t *testing.T, endpoint, token string) (*mcp.ClientSession, error) {
	t.Helper()
	hc := &http.Client{}
	if token != "" {
		hc.Transport = bearerRT{token}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// call calls a tool and returns its result; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", textOf(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

type memory struct {
	ID    string   `json:"id"`
	Kind  string   `json:"kind"`
	Scope string   `json:"scope"`
	Text  string   `json:"text"`
	Tags  []string `json:"tags"`
	URI   string   `json:"uri"`
}

type memories struct {
	Memories []memory `json:"memories"`
}

func git(t *testing.T, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", home}, args...)...)
	cmd.Env = env(home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// scenario is what every transport must do.
func scenario(t *testing.T, cs *mcp.ClientSession, home string) {
	ctx := t.Context()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Description == "" || tl.InputSchema == nil {
			t.Errorf("tool %s has no description or schema", tl.Name)
		}
		if tl.Name == "recall" && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
			t.Errorf("recall is not annotated read-only")
		}
		if tl.Name == "forget" && (tl.Annotations == nil || tl.Annotations.DestructiveHint == nil || !*tl.Annotations.DestructiveHint) {
			t.Errorf("forget is not annotated destructive")
		}
	}
	slices.Sort(names)
	if want := []string{"code_map", "code_search", "code_symbol", "context", "forget", "list", "pin", "recall", "remember", "task_done", "unpin"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}

	// Remember, then recall finds it.
	var rem struct {
		Memories  []memory `json:"memories"`
		Duplicate bool     `json:"duplicate"`
	}
	structured(t, call(t, cs, "remember", map[string]any{"text": "We chose PostgreSQL for JSONB", "kind": "decision", "tags": []string{"db"}}), &rem)
	if len(rem.Memories) != 1 || rem.Memories[0].Kind != "decision" || rem.Duplicate {
		t.Fatalf("remember = %+v", rem)
	}
	id := rem.Memories[0].ID
	structured(t, call(t, cs, "remember", map[string]any{"text": "We chose PostgreSQL for JSONB", "kind": "decision"}), &rem)
	if !rem.Duplicate || rem.Memories[0].ID != id {
		t.Errorf("the same text again = %+v, want the duplicate %s", rem, id)
	}
	var got memories
	res := call(t, cs, "recall", map[string]any{"query": "PostgreSQL JSONB", "k": 5})
	structured(t, res, &got)
	if len(got.Memories) == 0 || got.Memories[0].ID != id {
		t.Fatalf("recall = %+v, want %s first", got, id)
	}
	if !strings.Contains(textOf(res), id) || !strings.Contains(textOf(res), "We chose PostgreSQL") {
		t.Errorf("recall's text does not show the memory:\n%s", textOf(res))
	}

	// The memory as a resource.
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mira://memory/" + id})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "id: "+id) || !strings.Contains(rr.Contents[0].Text, "We chose PostgreSQL") {
		t.Errorf("resource = %+v", rr.Contents)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mira://memory/01NOSUCHMEMORY0000000000000"}); err == nil {
		t.Errorf("reading an unknown memory succeeded")
	}

	// Context: the block holds the pinned rule and the recalled memory.
	structured(t, call(t, cs, "remember", map[string]any{"text": "Always answer in British English", "kind": "preference", "pin": "sticky"}), &rem)
	var cx struct {
		Prompt string `json:"prompt"`
		PlanID string `json:"plan_id"`
		Tokens int    `json:"tokens"`
		Budget int    `json:"budget"`
	}
	structured(t, call(t, cs, "context", map[string]any{"query": "PostgreSQL JSONB", "budget": 2000}), &cx)
	if !strings.Contains(cx.Prompt, "British English") || !strings.Contains(cx.Prompt, "PostgreSQL") || cx.PlanID == "" || cx.Tokens > cx.Budget || cx.Budget != 2000 {
		t.Errorf("context = %+v", cx)
	}

	// A hand edit is seen by the next recall.
	files, _ := filepath.Glob(filepath.Join(home, "entries", "global", "decisions", "*"+id+".md"))
	if len(files) != 1 {
		t.Fatalf("entry file of %s: %v", id, files)
	}
	data, _ := os.ReadFile(files[0])
	if err := os.WriteFile(files[0], []byte(strings.Replace(string(data), "PostgreSQL", "CockroachDB", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	structured(t, call(t, cs, "recall", map[string]any{"query": "CockroachDB"}), &got)
	if len(got.Memories) == 0 || got.Memories[0].ID != id || !strings.Contains(got.Memories[0].Text, "CockroachDB") {
		t.Errorf("recall after a hand edit = %+v", got)
	}

	// A secret is a tool error, and nothing is written.
	head := git(t, home, "rev-parse", "HEAD")
	res = call(t, cs, "remember", map[string]any{"text": "deploy key AKIAZ7QW3ERTYUIOP4AB for prod"})
	if !res.IsError || !strings.Contains(textOf(res), "secret") {
		t.Errorf("a secret: IsError %v, %q", res.IsError, textOf(res))
	}
	if git(t, home, "rev-parse", "HEAD") != head {
		t.Errorf("a refused secret made a commit")
	}

	// Bad arguments: a clear message naming the problem.
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"remember", map[string]any{"kind": "note"}, "text"},
		{"remember", map[string]any{"text": "x", "kind": "banana"}, "kind"},
		{"recall", map[string]any{"query": "x", "k": 100000}, "k"},
		{"forget", map[string]any{"ids": []string{"no such id!"}}, "not a memory id"},
		{"forget", map[string]any{"ids": []string{"01NOSUCHMEMORY0000000000000"}}, "no memory with id"},
		{"recall", map[string]any{"query": "x", "since": "last tuesday-ish"}, "since"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		msg := ""
		if err != nil {
			msg = err.Error()
		} else if res.IsError {
			msg = textOf(res)
		} else {
			t.Errorf("%s(%v) succeeded", tc.tool, tc.args)
			continue
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s(%v) = %q, want it to mention %q", tc.tool, tc.args, msg, tc.want)
		}
	}

	// Forget: gone from recall, kept as a tombstone.
	var fg struct {
		Forgotten []memory `json:"forgotten"`
	}
	structured(t, call(t, cs, "forget", map[string]any{"ids": []string{id}, "reason": "wrong"}), &fg)
	if len(fg.Forgotten) != 1 || fg.Forgotten[0].ID != id {
		t.Errorf("forget = %+v", fg)
	}
	structured(t, call(t, cs, "recall", map[string]any{"query": "CockroachDB PostgreSQL"}), &got)
	for _, m := range got.Memories {
		if m.ID == id {
			t.Errorf("recall still finds the forgotten %s", id)
		}
	}
	if tomb, _ := filepath.Glob(filepath.Join(home, "entries", "global", "deleted", "decisions", "*"+id+".md")); len(tomb) != 1 {
		t.Errorf("no tombstone for %s", id)
	}

	// 20 recalls and 5 remembers at once: all answered, each memory
	// committed exactly once.
	var wg sync.WaitGroup
	errs := make(chan string, 25)
	for i := range 20 {
		wg.Go(func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"query": fmt.Sprintf("parallel memory %d", i%5)}})
			if err != nil || res.IsError {
				errs <- fmt.Sprintf("recall %d: %v %s", i, err, textOfSafe(res))
			}
		})
	}
	for i := range 5 {
		wg.Go(func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"text": fmt.Sprintf("parallel memory %d about the cache layer", i)}})
			if err != nil || res.IsError {
				errs <- fmt.Sprintf("remember %d: %v %s", i, err, textOfSafe(res))
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	for i := range 5 {
		out := git(t, home, "grep", "-l", fmt.Sprintf("parallel memory %d about", i), "HEAD", "--", "entries")
		if n := strings.Count(strings.TrimSpace(out), "\n") + 1; n != 1 {
			t.Errorf("memory %d is in %d files:\n%s", i, n, out)
		}
	}
	if log := git(t, home, "log", "--oneline"); strings.Count(log, "parallel memory") != 5 {
		t.Errorf("want 5 commits of the parallel memories:\n%s", log)
	}
	git(t, home, "fsck", "--strict")
	if st := git(t, home, "status", "--porcelain"); strings.TrimSpace(st) != "M "+mustRel(t, home, files[0]) && strings.TrimSpace(st) != "" {
		// Only the hand edit may be left uncommitted.
		if !strings.Contains(st, "decisions") || strings.Count(strings.TrimSpace(st), "\n") > 0 {
			t.Errorf("git status:\n%s", st)
		}
	}
}

func mustRel(t *testing.T, base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func textOfSafe(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return textOf(res)
}

func TestStdio(t *testing.T) {
	home := newStore(t)
	cs := stdioSession(t, home)
	scenario(t, cs, home)
}

func TestHTTP(t *testing.T) {
	home := newStore(t)
	endpoint, _ := httpServer(t, home)
	cs, err := httpSession(t, endpoint, "")
	if err != nil {
		t.Fatal(err)
	}
	scenario(t, cs, home)
}

// TestHTTPToken: with a token, a request without it is refused.
func TestHTTPToken(t *testing.T) {
	home := newStore(t)
	endpoint, _ := httpServer(t, home, "--token", "s3cret-token-0123456789")
	if _, err := httpSession(t, endpoint, ""); err == nil {
		t.Errorf("connected without the token")
	}
	if _, err := httpSession(t, endpoint, "wrong"); err == nil {
		t.Errorf("connected with a wrong token")
	}
	cs, err := httpSession(t, endpoint, "s3cret-token-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	call(t, cs, "remember", map[string]any{"text": "tokens guard the HTTP server"})
}

// TestHTTPNeedsToken: another address than loopback needs a token.
func TestHTTPNeedsToken(t *testing.T) {
	home := newStore(t)
	cmd := exec.Command(bin, "--http", "0.0.0.0:0")
	cmd.Env = env(home)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "--token") {
		t.Errorf("--http 0.0.0.0:0 without a token: %v\n%s", err, out)
	}
	if _, err := os.Stat(home); err == nil {
		t.Errorf("a refused start created the store")
	}
}

// TestTwoServers: two servers on one store (two agents open at once) both
// write and each sees the other's memories.
func TestTwoServers(t *testing.T) {
	home := newStore(t)
	a := stdioSession(t, home)
	b := stdioSession(t, home)
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Go(func() { call(t, a, "remember", map[string]any{"text": fmt.Sprintf("server a memory %d on queues", i)}) })
		wg.Go(func() { call(t, b, "remember", map[string]any{"text": fmt.Sprintf("server b memory %d on queues", i)}) })
	}
	wg.Wait()
	var got memories
	structured(t, call(t, b, "recall", map[string]any{"query": "server a memory queues", "k": 20}), &got)
	n := 0
	for _, m := range got.Memories {
		if strings.HasPrefix(m.Text, "server a memory") {
			n++
		}
	}
	if n != 5 {
		t.Errorf("server b recalls %d of server a's 5 memories: %+v", n, got)
	}
	git(t, home, "fsck", "--strict")
	if log := git(t, home, "log", "--oneline"); strings.Count(log, "on queues") != 10 {
		t.Errorf("want 10 commits:\n%s", log)
	}
}

// TestSIGTERM: a server told to stop ends cleanly, leaving a clean store.
func TestSIGTERM(t *testing.T) {
	home := newStore(t)
	endpoint, cmd := httpServer(t, home)
	cs, err := httpSession(t, endpoint, "")
	if err != nil {
		t.Fatal(err)
	}
	call(t, cs, "remember", map[string]any{"text": "stopping is clean"})
	cs.Close()
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGINT: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit 15 s after SIGINT")
	}
	if st := git(t, home, "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	_ = context.Background
}
