package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
)

// fakeTB records the failures the server reports instead of failing the
// test, and runs cleanups on demand.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.errs) > 0
}

func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

func (f *fakeTB) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func (f *fakeTB) errors() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.errs, "\n")
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func client(srv *Server) *openai.Client {
	cfg := openai.DefaultConfig("sk-test")
	cfg.BaseURL = srv.URL
	return openai.NewClientWithConfig(cfg)
}

func TestNonStreaming(t *testing.T) {
	srv := New(t,
		Reply{
			Content:   "Reading both.",
			Reasoning: "need files",
			ToolCalls: []ToolCall{{Name: "read_file", Arguments: `{"path":"a"}`}, {ID: "x", Name: "glob", Arguments: `{}`}},
			Usage:     &Usage{PromptTokens: 100, CompletionTokens: 20, CachedTokens: 64, ReasoningTokens: 5},
		},
		Tools(ToolCall{Name: "bash", Arguments: `{"cmd":"ls"}`}),
	)
	resp, err := client(srv).CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{
		Model:    "m",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "go"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	wantCalls := []openai.ToolCall{
		{ID: "call_0", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}},
		{ID: "x", Type: "function", Function: openai.FunctionCall{Name: "glob", Arguments: `{}`}},
	}
	if msg.Content != "Reading both." || msg.ReasoningContent != "need files" || resp.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("message = %+v, finish %q", msg, resp.Choices[0].FinishReason)
	}
	if diff := cmp.Diff(wantCalls, msg.ToolCalls); diff != "" {
		t.Errorf("tool calls diff (-want +got):\n%s", diff)
	}
	u := resp.Usage
	if u.PromptTokens != 100 || u.CompletionTokens != 20 || u.TotalTokens != 120 ||
		u.PromptTokensDetails.CachedTokens != 64 || u.CompletionTokensDetails.ReasoningTokens != 5 {
		t.Errorf("usage = %+v %+v %+v", u, u.PromptTokensDetails, u.CompletionTokensDetails)
	}
	if resp.Model != "m" || resp.Object != "chat.completion" {
		t.Errorf("model %q object %q", resp.Model, resp.Object)
	}

	// A reply with only tool calls has "content": null, as OpenAI sends.
	raw := post(t, srv.URL, `{"model":"m","messages":[{"role":"user","content":"one two three"}]}`)
	body, _ := io.ReadAll(raw.Body)
	if !strings.Contains(string(body), `"content":null`) {
		t.Errorf("tool-call reply %s lacks content null", body)
	}
	var decoded wireCompletion
	json.Unmarshal(body, &decoded)
	if decoded.Usage.PromptTokens != 3 {
		t.Errorf("made-up prompt tokens = %d, want the 3 words of the prompt", decoded.Usage.PromptTokens)
	}
}

// readSSE returns the data of each event of a stream, checking the
// framing on the way.
func readSSE(t *testing.T, r io.Reader) []string {
	t.Helper()
	var data []string
	sc := bufio.NewScanner(r)
	blank := true
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			blank = true
			continue
		}
		if !blank {
			t.Errorf("event %q not preceded by a blank line", line)
		}
		blank = false
		d, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not a data line", line)
		}
		data = append(data, d)
	}
	return data
}

func TestStreamingWire(t *testing.T) {
	srv := New(t, Reply{
		Content: "abcdefgh",
		ToolCalls: []ToolCall{
			{ID: "c0", Name: "read_file", Arguments: `{"p":"xy"}`},
			{ID: "c1", Name: "glob", Arguments: `{}`},
		},
		Usage: &Usage{PromptTokens: 9, CompletionTokens: 4, CachedTokens: 8},
	}, Text("hi"))

	resp := post(t, srv.URL, `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true}}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	data := readSSE(t, resp.Body)
	if data[len(data)-1] != "[DONE]" {
		t.Fatalf("last event %q, want [DONE]", data[len(data)-1])
	}
	want := []string{
		`{"role":"assistant","content":""}`,
		`{"content":"abcd"}`,
		`{"content":"efgh"}`,
		`{"tool_calls":[{"index":0,"id":"c0","type":"function","function":{"name":"read_file","arguments":""}}]}`,
		`{"tool_calls":[{"index":1,"id":"c1","type":"function","function":{"name":"glob","arguments":""}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":"{\"p\""}}]}`,
		`{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":":\"xy"}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}`,
		`{} tool_calls`,
		`usage`,
	}
	var got []string
	for _, d := range data[:len(data)-1] {
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta        json.RawMessage `json:"delta"`
				FinishReason *string         `json:"finish_reason"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %s: %v", d, err)
		}
		if c.Object != "chat.completion.chunk" {
			t.Errorf("chunk object %q", c.Object)
		}
		switch {
		case len(c.Choices) == 0:
			got = append(got, "usage")
			var u wireUsage
			json.Unmarshal(c.Usage, &u)
			if u.PromptTokens != 9 || u.CompletionTokens != 4 || u.PromptTokensDetails.CachedTokens != 8 {
				t.Errorf("usage chunk %s", c.Usage)
			}
		case c.Choices[0].FinishReason != nil:
			got = append(got, string(c.Choices[0].Delta)+" "+*c.Choices[0].FinishReason)
		default:
			got = append(got, string(c.Choices[0].Delta))
			if string(c.Usage) != "null" {
				t.Errorf("chunk %s: usage %q, want null before the last chunk", d, c.Usage)
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks diff (-want +got):\n%s", diff)
	}

	// Without include_usage there is no usage chunk and no usage field.
	resp = post(t, srv.URL, `{"model":"m","messages":[{"role":"user","content":"x"}],"stream":true}`)
	data = readSSE(t, resp.Body)
	for _, d := range data {
		if strings.Contains(d, "usage") {
			t.Errorf("chunk %s mentions usage, which was not asked for", d)
		}
	}
}

func TestStreamThroughGoOpenAI(t *testing.T) {
	srv := New(t, Reply{Reasoning: "think", Content: "answer", SplitNames: true,
		ToolCalls: []ToolCall{{Name: "read_file", Arguments: `{"a":1}`}}})
	stream, err := client(srv).CreateChatCompletionStream(t.Context(), openai.ChatCompletionRequest{
		Model:         "m",
		Messages:      []openai.ChatCompletionMessage{{Role: "user", Content: "x"}},
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var reasoning, content, name, args strings.Builder
	var usage *openai.Usage
	for {
		c, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if c.Usage != nil {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			reasoning.WriteString(ch.Delta.ReasoningContent)
			content.WriteString(ch.Delta.Content)
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == nil || *tc.Index != 0 {
					t.Errorf("tool call delta without index 0: %+v", tc)
				}
				name.WriteString(tc.Function.Name)
				args.WriteString(tc.Function.Arguments)
			}
		}
	}
	got := []string{reasoning.String(), content.String(), name.String(), args.String()}
	if diff := cmp.Diff([]string{"think", "answer", "read_file", `{"a":1}`}, got); diff != "" {
		t.Errorf("assembled diff (-want +got):\n%s", diff)
	}
	if usage == nil || usage.PromptTokens != 1 {
		t.Errorf("usage = %+v, want the made-up count", usage)
	}
}

func TestRequestsRecorded(t *testing.T) {
	srv := New(t, Text("a"))
	_, err := client(srv).CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{
		Model: "m",
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "sys"},
			{Role: "user", Content: "first"},
			{Role: "assistant", Content: "reply"},
			{Role: "user", Content: "second"},
		},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Last()
	if r.Method != "POST" || r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("request %s %s auth %q", r.Method, r.Path, r.Header.Get("Authorization"))
	}
	if !r.JSONMode() || r.Stream || r.System() != "sys" || r.LastUser() != "second" || r.Text() != "sys\n\nfirst\n\nreply\n\nsecond" {
		t.Errorf("request = %+v", r)
	}
	if !strings.Contains(string(r.Body), `"response_format":{"type":"json_object"}`) {
		t.Errorf("raw body %s", r.Body)
	}
}

func TestScript(t *testing.T) {
	srv := New(t, Text("one"))
	srv.Push(Func(func(r Request) Reply { return Text("echo " + r.LastUser()) }), Error(503, "busy"))
	c := client(srv)
	ask := func(q string) (string, error) {
		resp, err := c.CreateChatCompletion(t.Context(), openai.ChatCompletionRequest{
			Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: q}},
		})
		if err != nil {
			return "", err
		}
		return resp.Choices[0].Message.Content, nil
	}
	for _, want := range []string{"one", "echo two"} {
		q := strings.Fields(want)[len(strings.Fields(want))-1]
		if got, err := ask(q); err != nil || got != want {
			t.Fatalf("ask(%q) = %q, %v, want %q", q, got, err, want)
		}
	}
	if _, err := ask("three"); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("third request error = %v, want the scripted 503", err)
	}
	if srv.Pending() != 0 {
		t.Errorf("Pending = %d", srv.Pending())
	}
	srv.Default(Func(func(r Request) Reply { return Text(strings.ToUpper(r.LastUser())) }))
	for _, q := range []string{"x", "y"} {
		if got, err := ask(q); err != nil || got != strings.ToUpper(q) {
			t.Errorf("default reply to %q = %q, %v", q, got, err)
		}
	}
	if n := len(srv.Requests()); n != 5 {
		t.Errorf("%d requests recorded, want 5", n)
	}
}

func TestScriptMisuse(t *testing.T) {
	tests := []struct {
		name    string
		replies []Reply
		do      func(t *testing.T, url string)
		wantErr string
	}{
		{
			name: "no reply left",
			do: func(t *testing.T, url string) {
				resp := post(t, url, `{"model":"m","messages":[{"role":"user","content":"hello there"}]}`)
				if resp.StatusCode != 400 {
					t.Errorf("status %d, want 400 so that clients do not retry", resp.StatusCode)
				}
			},
			wantErr: `request 1 has no scripted reply (push more replies or set a Default); last user message: "hello there"`,
		},
		{
			name:    "replies left over",
			replies: []Reply{Text("a"), Text("b")},
			do:      func(t *testing.T, url string) {},
			wantErr: "2 scripted replies were never requested (0 requests received)",
		},
		{
			name:    "wrong endpoint",
			replies: nil,
			do: func(t *testing.T, url string) {
				resp, err := http.Get(url + "/models")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 404 {
					t.Errorf("status %d, want 404", resp.StatusCode)
				}
			},
			wantErr: "unexpected request GET /v1/models",
		},
		{
			name: "not a chat request",
			do: func(t *testing.T, url string) {
				post(t, url, `{"messages": "nope"}`)
			},
			wantErr: "request body is not a chat request",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeTB{TB: t}
			srv := New(ft, tt.replies...)
			tt.do(t, srv.URL)
			ft.cleanup()
			if got := ft.errors(); !strings.Contains(got, tt.wantErr) {
				t.Errorf("reported %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestDelayAndHang(t *testing.T) {
	srv := New(t, Text("late").WithDelay(50*time.Millisecond), Hang())
	start := time.Now()
	resp := post(t, srv.URL, `{"model":"m","messages":[]}`)
	io.ReadAll(resp.Body)
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("delayed reply came after %v", d)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/chat/completions", strings.NewReader(`{"model":"m","messages":[]}`))
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Error("a hanging reply answered")
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		s    string
		size int
		want []string
	}{
		{"", 4, nil},
		{"abc", 4, []string{"abc"}},
		{"abcdefghi", 4, []string{"abcd", "efgh", "i"}},
		{"héllo wörld", 3, []string{"hél", "lo ", "wör", "ld"}},
		{"🦀🦀🦀", 2, []string{"🦀🦀", "🦀"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, split(tt.s, tt.size)); diff != "" {
			t.Errorf("split(%q, %d) diff (-want +got):\n%s", tt.s, tt.size, diff)
		}
	}
}
