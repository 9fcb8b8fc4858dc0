package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/llm/llmtest"
	"github.com/miramem/mira/mem"
	openai "github.com/sashabaranov/go-openai"
)

// fixture is a proxy in front of an upstream, on a fresh store.
type fixture struct {
	t       *testing.T
	url     string // the proxy's API root, ending in /v1
	m       *mira.Memory
	srv     *Server
	writer  *mira.TurnWriter
	curator *Curator
}

func openStore(t testing.TB) *mira.Memory {
	t.Helper()
	m, err := mira.Open(context.Background(), mira.Options{Home: filepath.Join(t.TempDir(), "home"), Config: &mira.Config{},
		Getenv: func(string) string { return "" }, Embedder: mira.BuiltinEmbedder, Index: index.ReaderOptions{Warm: true, Lag: true}, Command: "mira-proxy"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// newFixture starts a proxy in front of upstream (an API root). chat, when
// set, extracts facts.
func newFixture(t *testing.T, m *mira.Memory, upstream string, chat *llm.Client, edit func(*Options)) *fixture {
	t.Helper()
	if m == nil {
		m = openStore(t)
	}
	f := &fixture{t: t, m: m}
	f.writer = m.NewTurnWriter(mira.TurnWriterOptions{Delay: 20 * time.Millisecond, Source: "mira-proxy",
		Failed: func(b []*mem.Entry, err error, final bool) { t.Errorf("%d turns not stored: %v", len(b), err) }})
	f.curator = NewCurator(CuratorOptions{Memory: m, Writer: f.writer, Chat: chat, Extract: chat != nil, Extractive: true,
		Delay: 10 * time.Millisecond, Logf: t.Logf})
	opt := Options{Memory: m, Upstream: upstream, Writer: f.writer, After: f.curator, RecallK: 8, Log: true, Logf: t.Logf}
	if edit != nil {
		edit(&opt)
	}
	srv, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = srv
	hs := httptest.NewServer(srv)
	f.url = hs.URL + "/v1"
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		f.curator.Close(ctx)
		f.writer.Close(ctx)
	})
	return f
}

// idle waits until the turns are committed and the work after them done.
func (f *fixture) idle() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.writer.Flush(ctx); err != nil {
		f.t.Fatal(err)
	}
	if err := f.curator.Idle(ctx); err != nil {
		f.t.Fatal(err)
	}
	if err := f.writer.Flush(ctx); err != nil {
		f.t.Fatal(err)
	}
}

// headerRT adds headers to every request.
type headerRT struct{ h http.Header }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// client is a go-openai client of the proxy sending headers kv.
func (f *fixture) client(kv ...string) *openai.Client {
	cfg := openai.DefaultConfig("client-key")
	cfg.BaseURL = f.url
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	cfg.HTTPClient = &http.Client{Transport: headerRT{h}}
	return openai.NewClientWithConfig(cfg)
}

func (f *fixture) turns(conv string) []*mem.Entry {
	f.t.Helper()
	got, err := f.m.Turns(context.Background(), conv, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	return got
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

var messageRe = regexp.MustCompile(`(?s)Message:\n(.*)$`)

// memoryModel answers as a chat server that also extracts facts: a
// sentence "My X is Y" in a user message is the fact "The user's X is Y.".
func memoryModel(answer func(llmtest.Request) llmtest.Reply) llmtest.Reply {
	return llmtest.Func(func(r llmtest.Request) llmtest.Reply {
		sys := r.System()
		switch {
		case strings.HasPrefix(sys, "You pick out what is worth remembering"):
			var facts []map[string]string
			if m := messageRe.FindStringSubmatch(r.LastUser()); m != nil {
				for _, s := range regexp.MustCompile(`My ([a-z]+) is ([A-Z][a-z]+)`).FindAllStringSubmatch(m[1], -1) {
					facts = append(facts, map[string]string{"text": fmt.Sprintf("The user's %s is %s.", s[1], s[2]), "kind": "fact"})
				}
			}
			return llmtest.JSON(map[string]any{"facts": facts})
		case strings.HasPrefix(sys, "You keep a long-term memory consistent"):
			var ds []map[string]string
			for _, id := range regexp.MustCompile(`(?m)^(f\d+) `).FindAllStringSubmatch(r.LastUser(), -1) {
				ds = append(ds, map[string]string{"fact": id[1], "action": "ADD"})
			}
			return llmtest.JSON(map[string]any{"decisions": ds})
		}
		return answer(r)
	})
}

func chatModel(t *testing.T, url string) *llm.Client {
	c, err := llm.New(llm.Config{BaseURL: url, Model: "test-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// chatRequests are the requests the upstream got from the proxy's clients
// (not the extraction the proxy asked for itself).
func chatRequests(up *llmtest.Server) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range up.Requests() {
		if r.Model != "test-model" {
			out = append(out, r)
		}
	}
	return out
}

// TestMemoryAcrossRequests: a fact from the first request of a
// conversation reaches the upstream with the second one, in a system
// message just before the last user message; everything before it is the
// client's bytes; the plan is named in X-Mira-Plan and logged; the turns,
// streamed or not, are stored in order.
func TestMemoryAcrossRequests(t *testing.T) {
	up := llmtest.New(t)
	up.Default(memoryModel(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Text("Noted: "+r.LastUser()).WithUsage(20, 5, 0)
	}))
	f := newFixture(t, nil, up.URL, chatModel(t, up.URL), nil)
	ctx := context.Background()
	c := f.client(HeaderConversation, "alice")

	first := []openai.ChatCompletionMessage{
		{Role: "system", Content: "You are terse."},
		{Role: "user", Content: "My wife is Anne. Remember it."},
	}
	res, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "client-model", Messages: first})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Choices[0].Message.Content; got != "Noted: My wife is Anne. Remember it." {
		t.Errorf("answer = %q", got)
	}
	if res.Usage.PromptTokens != 20 {
		t.Errorf("usage = %+v, want the upstream's", res.Usage)
	}
	f.idle()

	second := append(first,
		openai.ChatCompletionMessage{Role: "assistant", Content: res.Choices[0].Message.Content},
		openai.ChatCompletionMessage{Role: "user", Content: "What is my wife called?"})
	stream, err := c.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: "client-model", Messages: second, Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	sawUsage := false
	for {
		ch, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(ch.Choices) > 0 {
			text.WriteString(ch.Choices[0].Delta.Content)
		}
		if ch.Usage != nil {
			sawUsage = true
		}
	}
	planID := stream.Header().Get(HeaderPlan)
	stream.Close()
	if text.String() != "Noted: What is my wife called?" || !sawUsage {
		t.Errorf("streamed answer %q, usage chunk %v", text.String(), sawUsage)
	}

	reqs := chatRequests(up)
	if len(reqs) != 2 {
		t.Fatalf("upstream got %d chat requests, want 2", len(reqs))
	}
	last := reqs[1]
	n := len(last.Messages)
	if n != 5 || last.Messages[3].Role != "system" || last.Messages[4].Content != "What is my wife called?" {
		t.Fatalf("upstream messages: %+v", last.Messages)
	}
	if block := last.Messages[3].Content; !strings.Contains(block, "The user's wife is Anne.") {
		t.Errorf("the injected block does not hold the first request's fact:\n%s", block)
	}
	// The messages before the block are the client's own bytes: the
	// request up to the block is what a request without it would be.
	clientBody, _ := json.Marshal(openai.ChatCompletionRequest{Model: "client-model", Messages: second, Stream: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true}})
	prefix := clientBody[:bytes.Index(clientBody, []byte(`{"role":"user","content":"What is my wife called?"`))]
	if !bytes.HasPrefix(last.Body, prefix) {
		t.Errorf("the upstream body does not start with the client's bytes up to the last user message:\n%s\n%s", last.Body, prefix)
	}
	if planID == "" {
		t.Errorf("no %s header", HeaderPlan)
	} else if _, err := os.Stat(filepath.Join(f.m.Root(), "plans", planID+".json")); err != nil {
		t.Errorf("plan %s not logged: %v", planID, err)
	}

	f.idle()
	turns := f.turns("alice")
	var roles, bodies []string
	for _, e := range turns {
		roles = append(roles, e.Role)
		bodies = append(bodies, e.Body)
	}
	want := []string{"My wife is Anne. Remember it.", "Noted: My wife is Anne. Remember it.", "What is my wife called?", "Noted: What is my wife called?"}
	if strings.Join(bodies, "|") != strings.Join(want, "|") || strings.Join(roles, ",") != "user,assistant,user,assistant" {
		t.Errorf("stored turns = %q (%v), want %q", bodies, roles, want)
	}
	git(t, f.m.Root(), "fsck", "--strict")
	if st := git(t, f.m.Root(), "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
}

// TestTransparency: tools, response_format, stream_options, unknown fields
// and the layout of the request reach the upstream byte for byte but for
// the one inserted message; the reply reaches the client byte for byte;
// streamed tool calls are stored with the answer.
func TestTransparency(t *testing.T) {
	var mu sync.Mutex
	var got [][]byte
	reply := `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":"m-1","system_fingerprint":"fp_x","x_vendor":{"k":[1, 2]},` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Lisbon\"}"}}]},"finish_reason":"tool_calls","logprobs":null}],` +
		`"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":8}}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req-42")
		io.WriteString(w, reply)
	}))
	defer up.Close()
	m := openStore(t)
	if _, err := m.Remember(context.Background(), []*mem.Entry{{Body: "Always answer in British English", Kind: mem.KindPreference, Pin: mem.PinSticky}}, mira.RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, m, up.URL+"/v1", nil, nil)
	body := `{ "model" : "m-1",
  "messages": [ {"role":"system","content":"sys"},
    {"role":"user","content":[{"type":"text","text":"weather in Lisbon?"}], "x_part": true} ],
  "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],
  "tool_choice":"auto", "response_format":{"type":"text"}, "stream_options":null, "x_unknown": {"nested": [1,2,3], "s":"<&>"}, "temperature": 0.10
}`
	resp, err := http.Post(f.url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(out) != reply || resp.Header.Get("X-Request-Id") != "req-42" {
		t.Errorf("reply changed on the way:\n%s\nwant\n%s", out, reply)
	}
	if len(got) != 1 {
		t.Fatalf("upstream got %d requests", len(got))
	}
	sent := got[0]
	at := strings.Index(body, `{"role":"user"`)
	inserted := sent[at : len(sent)-(len(body)-at)]
	if string(sent[:at]) != body[:at] || string(sent[len(sent)-(len(body)-at):]) != body[at:] {
		t.Fatalf("the request changed beyond one inserted message:\n%s", sent)
	}
	var msg struct{ Role, Content string }
	if err := json.Unmarshal(bytes.TrimSuffix(inserted, []byte(",")), &msg); err != nil || msg.Role != "system" || !strings.Contains(msg.Content, "British English") {
		t.Errorf("inserted %q (%v), want a system message with the pinned preference", inserted, err)
	}
	if resp.Header.Get(HeaderPlan) == "" {
		t.Errorf("no plan header")
	}
	if st := serverTiming(resp.Header.Get("Server-Timing")); st["mira-recall"] <= 0 || st["mira-plan"] <= 0 ||
		st["mira-recall"]+st["mira-plan"]+st["mira-store"] > st["mira-added"] {
		t.Errorf("Server-Timing: %q", resp.Header.Get("Server-Timing"))
	}

	// The same through go-openai: the tool call arrives parsed.
	res, err := f.client().CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "m-1",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "and in Porto?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if tc := res.Choices[0].Message.ToolCalls; len(tc) != 1 || tc[0].Function.Arguments != `{"city": "Lisbon"}` {
		t.Errorf("tool calls = %+v", tc)
	}
	f.idle()
	turns := f.turns("proxy")
	if len(turns) != 4 {
		t.Fatalf("%d turns stored, want 4", len(turns))
	}
	calls, _ := json.Marshal(turns[1].Fields()["tool_calls"])
	if !strings.Contains(string(calls), "get_weather") || !strings.Contains(string(calls), `{\"city\": \"Lisbon\"}`) {
		t.Errorf("the stored answer's tool calls: %s", calls)
	}
}

// TestStreamedToolCalls: tool-call deltas streamed in pieces reach a
// go-openai client whole and are stored whole; the tool result of the
// client's next request is stored as a tool turn, and the block sent with
// it is the same bytes as before, so the prompt prefix stays the same.
func TestStreamedToolCalls(t *testing.T) {
	up := llmtest.New(t,
		llmtest.Tools(llmtest.ToolCall{ID: "call_9", Name: "lookup", Arguments: `{"query":"opening hours of the museum"}`}),
		llmtest.Text("It opens at nine."),
	)
	m := openStore(t)
	if _, err := m.Remember(context.Background(), []*mem.Entry{{Body: "The user lives in Porto", Kind: mem.KindFact}}, mira.RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, m, up.URL, nil, nil)
	c := f.client(HeaderConversation, "bob")
	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "When does the museum in Porto open?"}}
	stream, err := c.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{Model: "m", Messages: msgs, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	var call openai.ToolCall
	for {
		ch, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ch.Choices[0].Delta.ToolCalls {
			if d.ID != "" {
				call.ID = d.ID
			}
			call.Function.Name += d.Function.Name
			call.Function.Arguments += d.Function.Arguments
		}
	}
	stream.Close()
	if call.ID != "call_9" || call.Function.Name != "lookup" || call.Function.Arguments != `{"query":"opening hours of the museum"}` {
		t.Fatalf("tool call through the proxy = %+v", call)
	}
	call.Type = "function"
	msgs = append(msgs, openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{call}},
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: "call_9", Content: "9:00-18:00"})
	if _, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "m", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	reqs := up.Requests()
	b0, b1 := reqs[0].Body, reqs[1].Body
	i0 := bytes.Index(b0, []byte(`{"role":"user"`))
	i1 := bytes.Index(b1, []byte(`{"role":"user"`))
	if i0 < 0 || i1 < 0 || !bytes.Equal(b0[:i0], b1[:i1]) || !strings.Contains(string(b0[:i0]), "Porto") {
		t.Errorf("the block differs between the tool loop's requests:\n%s\n%s", b0, b1)
	}
	f.idle()
	turns := f.turns("bob")
	var roles []string
	for _, e := range turns {
		roles = append(roles, e.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,tool,assistant" {
		t.Fatalf("roles = %v", roles)
	}
	calls, _ := json.Marshal(turns[1].Fields()["tool_calls"])
	if !strings.Contains(string(calls), `opening hours of the museum`) || turns[2].Fields()["tool_call_id"] != "call_9" || turns[3].Body != "It opens at nine." {
		t.Errorf("stored: %s / %v / %q", calls, turns[2].Fields(), turns[3].Body)
	}
}

// TestUpstreamError: a 429 reaches the client as a 429 with its body and
// Retry-After; the answer is stored as failed.
func TestUpstreamError(t *testing.T) {
	up := llmtest.New(t, llmtest.Error(429, "Rate limit reached for requests").WithHeader("Retry-After", "7"))
	f := newFixture(t, nil, up.URL, nil, nil)
	_, err := f.client().CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hello there"}}})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Message != "Rate limit reached for requests" {
		t.Fatalf("err = %v, want the upstream's 429", err)
	}
	up.Push(llmtest.Raw(503, "text/plain", "upstream is down for maintenance\n").WithHeader("Retry-After", "7"))
	resp, err := http.Post(f.url+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"again"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || string(b) != "upstream is down for maintenance\n" || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("got %d %q %v, want the upstream's 503 as it was", resp.StatusCode, b, resp.Header)
	}
	f.idle()
	turns := f.turns("proxy")
	// The user turns are kept; the errors are no answers to remember.
	if len(turns) != 2 || turns[0].Role != "user" || turns[1].Role != "user" {
		t.Errorf("stored %d turns: %+v", len(turns), turns)
	}
}

// TestDisconnect: a client that goes away mid-stream cancels the upstream
// call, and what came of the answer is stored as interrupted.
func TestDisconnect(t *testing.T) {
	cancelled := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"The first half"},"finish_reason":null}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(20 * time.Second):
		}
	}))
	defer up.Close()
	f := newFixture(t, nil, up.URL+"/v1", nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := f.client().CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{Model: "m", Stream: true,
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "tell me a long story"}}})
	if err != nil {
		t.Fatal(err)
	}
	if ch, err := stream.Recv(); err != nil || ch.Choices[0].Delta.Content != "The first half" {
		t.Fatalf("first chunk: %+v %v", ch, err)
	}
	cancel()
	stream.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call was not cancelled when the client went away")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(f.turns("proxy")) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		f.idle()
	}
	turns := f.turns("proxy")
	if len(turns) != 2 || !strings.HasPrefix(turns[1].Body, "The first half") || turns[1].Fields()["interrupted"] != true {
		t.Fatalf("stored: %d turns, answer %+v", len(turns), turns)
	}
}

// TestOptOut: X-Mira: off passes the request through untouched and stores
// nothing; X-Mira-Remember: off adds memory and stores nothing; neither
// header reaches the upstream.
func TestOptOut(t *testing.T) {
	up := llmtest.New(t)
	up.Default(llmtest.Text("ok"))
	m := openStore(t)
	if _, err := m.Remember(context.Background(), []*mem.Entry{{Body: "Always answer in British English", Kind: mem.KindPreference, Pin: mem.PinSticky}}, mira.RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	head := git(t, m.Root(), "rev-parse", "HEAD")
	f := newFixture(t, m, up.URL, nil, nil)
	body := `{"model":"m","messages":[{"role":"user","content":"private: my diagnosis"}]}`
	for _, h := range []string{HeaderMira, HeaderRemember} {
		req, _ := http.NewRequest("POST", f.url+"/chat/completions", strings.NewReader(body))
		req.Header.Set(h, "off")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: off: status %d", h, resp.StatusCode)
		}
	}
	reqs := up.Requests()
	if string(reqs[0].Body) != body {
		t.Errorf("X-Mira: off changed the request:\n%s", reqs[0].Body)
	}
	if !strings.Contains(reqs[1].System(), "British English") {
		t.Errorf("X-Mira-Remember: off added no memory")
	}
	for _, r := range reqs {
		for k := range r.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-mira") {
				t.Errorf("header %s reached the upstream", k)
			}
		}
	}
	f.idle()
	if got := git(t, m.Root(), "rev-parse", "HEAD"); got != head {
		t.Errorf("an opted-out request made a commit: %s", git(t, m.Root(), "log", "--oneline", "-3"))
	}
	if n := len(f.turns("proxy")); n != 0 {
		t.Errorf("%d turns stored", n)
	}
}

// TestPlainAnswerStoredBeforeReply: a plain (not streamed) answer is
// stored before the client has the reply, so that the client's next
// message, sent at once, comes after it in the conversation.
func TestPlainAnswerStoredBeforeReply(t *testing.T) {
	up := llmtest.New(t)
	up.Default(llmtest.Text("Noted."))
	f := newFixture(t, nil, up.URL, nil, nil)
	// A store that takes a while, as on a busy machine: an answer stored
	// after the reply went out would be missed below every time.
	f.srv.testHookStore = func() { time.Sleep(20 * time.Millisecond) }
	var msgs []string
	for i := range 5 {
		text := fmt.Sprintf("question %d about the queue", i)
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%q}`, text))
		req, _ := http.NewRequest("POST", f.url+"/chat/completions",
			strings.NewReader(fmt.Sprintf(`{"model":"m","messages":[%s]}`, strings.Join(msgs, ","))))
		req.Header.Set(HeaderConversation, "plain")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// What was added before this Flush is what the client's next
		// message would come after.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := f.writer.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		got := f.turns("plain")
		if len(got) != 2*(i+1) || got[2*i+1].Role != "assistant" {
			t.Fatalf("call %d: %d turns stored when the client had the reply, want %d with the answer last", i, len(got), 2*(i+1))
		}
		var reply struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if err := json.Unmarshal(b, &reply); err != nil || len(reply.Choices) == 0 {
			t.Fatalf("reply %s: %v", b, err)
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":"assistant","content":%q}`, reply.Choices[0].Message.Content))
	}
}

// TestSecretNotStored: a user message holding a credential is forwarded
// (the client chose to send it to its server) but not stored, and the
// reply says so.
func TestSecretNotStored(t *testing.T) {
	up := llmtest.New(t, llmtest.Text("Rotate it now."))
	f := newFixture(t, nil, up.URL, nil, nil)
	resp, err := http.Post(f.url+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"is AKIAZ7QW3ERTYUIOP4AB a valid key?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get(HeaderWarning), "secret") {
		t.Errorf("status %d, warning %q", resp.StatusCode, resp.Header.Get(HeaderWarning))
	}
	f.idle()
	if n := len(f.turns("proxy")); n != 0 {
		t.Errorf("%d turns stored from a message with a secret", n)
	}
}

// TestRoutesAndAuth: other /v1 routes pass through; with a token, a
// request without it is refused and the upstream gets the configured key,
// never the client's token; a body over the limit is refused with 413.
func TestRoutesAndAuth(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization")+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		io.WriteString(w, `{"object":"list","data":[{"id":"m-1","object":"model"}]}`)
	}))
	defer up.Close()
	f := newFixture(t, nil, up.URL+"/v1", nil, func(o *Options) { o.Token = "proxy-token"; o.APIKey = "upstream-key"; o.MaxBody = 1000 })
	do := func(method, path, token, body string) (int, string) {
		req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, _ := do("GET", "/models", "", ""); code != 401 {
		t.Errorf("no token: %d, want 401", code)
	}
	if code, _ := do("GET", "/models", "wrong", ""); code != 401 {
		t.Errorf("wrong token: %d, want 401", code)
	}
	code, b := do("GET", "/models?limit=2", "proxy-token", "")
	if code != 201 || !strings.Contains(b, `"m-1"`) {
		t.Errorf("GET /v1/models: %d %s", code, b)
	}
	if code, _ := do("POST", "/embeddings", "proxy-token", `{"model":"e","input":"hi"}`); code != 201 {
		t.Errorf("POST /v1/embeddings: %d", code)
	}
	if code, _ := do("POST", "/chat/completions", "proxy-token", `{"model":"m","messages":[{"role":"user","content":"`+strings.Repeat("x", 2000)+`"}]}`); code != 413 {
		t.Errorf("a body over --max-body: %d, want 413", code)
	}
	want := []string{"GET /v1/models?limit=2 Bearer upstream-key ", `POST /v1/embeddings Bearer upstream-key {"model":"e","input":"hi"}`}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("upstream saw:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// TestDrain: a server shut down while a streamed answer is under way lets
// it finish, stores both turns and leaves a clean store.
func TestDrain(t *testing.T) {
	long := "slow but complete. " + strings.Repeat("The museum opens at nine and closes at six, except on Mondays. ", 20)
	long = strings.TrimSpace(long)
	up := llmtest.New(t, llmtest.Text(long).WithDelay(500*time.Millisecond))
	m := openStore(t)
	f := &fixture{t: t, m: m}
	f.writer = m.NewTurnWriter(mira.TurnWriterOptions{Delay: 200 * time.Millisecond})
	f.curator = NewCurator(CuratorOptions{Memory: m, Writer: f.writer, Extractive: true, Delay: time.Hour})
	srv, err := New(Options{Memory: m, Upstream: up.URL, Writer: f.writer, After: f.curator})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	f.url = hs.URL + "/v1"
	done := make(chan string)
	go func() {
		s, err := f.client().CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{Model: "m", Stream: true,
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "take your time"}}})
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		var b strings.Builder
		for {
			ch, err := s.Recv()
			if err != nil {
				break
			}
			b.WriteString(ch.Choices[0].Delta.Content)
		}
		done <- b.String()
	}()
	time.Sleep(200 * time.Millisecond) // the call is under way
	hs.Config.SetKeepAlivesEnabled(false)
	if err := drain(hs.Config, f.writer, f.curator, 10*time.Second, t.Logf); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got != long {
		t.Errorf("answer during shutdown = %q", got)
	}
	hs.Close()
	turns := f.turns("proxy")
	if len(turns) != 2 || turns[1].Body != long {
		t.Errorf("stored after drain: %+v", turns)
	}
	if st := git(t, m.Root(), "status", "--porcelain"); st != "" {
		t.Errorf("git status:\n%s", st)
	}
	// The rolling summary (there is enough to summarize) was written at
	// once, not an hour later.
	if !strings.Contains(git(t, m.Root(), "log", "--format=%s"), "summar") {
		t.Errorf("no summary commit after drain:\n%s", git(t, m.Root(), "log", "--format=%s"))
	}
}
