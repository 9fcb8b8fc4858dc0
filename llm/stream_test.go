package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/llm/llmtest"
	openai "github.com/sashabaranov/go-openai"
)

// recorder collects the events of a stream.
type recorder struct{ events []Event }

func (r *recorder) on(e Event) { r.events = append(r.events, e) }

// text joins the Text of the events of a kind (and tool call index, for
// tool events).
func (r *recorder) text(kind EventKind, index int) string {
	var b strings.Builder
	for _, e := range r.events {
		if e.Kind == kind && (kind != EventToolArgs || e.Index == index) {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func (r *recorder) kinds() []string {
	var out []string
	for _, e := range r.events {
		out = append(out, e.Kind.String())
	}
	return out
}

func agentRequest() openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "You are a coding agent."},
			{Role: "user", Content: "Look at the repository and fix the build."},
		},
		Tools: []openai.Tool{
			{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read_file", Parameters: map[string]any{"type": "object"}}},
			{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "glob", Parameters: map[string]any{"type": "object"}}},
		},
	}
}

func TestStreamAccumulates(t *testing.T) {
	reply := llmtest.Reply{
		Reasoning: "The build fails; look at go.mod and the main package.",
		Content:   "Let me look at a few files first. ✓",
		ToolCalls: []llmtest.ToolCall{
			{ID: "call_mod", Name: "read_file", Arguments: `{"path": "go.mod"}`},
			{ID: "call_main", Name: "read_file", Arguments: `{"path": "cmd/mira-agent/main.go", "limit": 200}`},
			{ID: "call_glob", Name: "glob", Arguments: ""},
		},
		SplitNames: true,
		ChunkSize:  3,
		Usage:      &llmtest.Usage{PromptTokens: 1200, CompletionTokens: 80, CachedTokens: 1024, ReasoningTokens: 30},
	}
	srv := llmtest.New(t, reply)
	c, _ := testClient(t, srv, "agent-model")
	var rec recorder
	got, err := c.Stream(t.Context(), agentRequest(), rec.on)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	wantCalls := []openai.ToolCall{
		{ID: "call_mod", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path": "go.mod"}`}},
		{ID: "call_main", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path": "cmd/mira-agent/main.go", "limit": 200}`}},
		{ID: "call_glob", Type: "function", Function: openai.FunctionCall{Name: "glob", Arguments: "{}"}},
	}
	wantUsage := Usage{Requests: 1, PromptTokens: 1200, CompletionTokens: 80, CachedTokens: 1024, ReasoningTokens: 30}
	want := &Reply{
		Content:      reply.Content,
		Reasoning:    reply.Reasoning,
		ToolCalls:    wantCalls,
		FinishReason: "tool_calls",
		Usage:        wantUsage,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stream reply diff (-want +got):\n%s", diff)
	}

	// The events add up to the reply.
	if s := rec.text(EventText, 0); s != reply.Content {
		t.Errorf("text events = %q, want %q", s, reply.Content)
	}
	if s := rec.text(EventReasoning, 0); s != reply.Reasoning {
		t.Errorf("reasoning events = %q, want %q", s, reply.Reasoning)
	}
	for i, tc := range reply.ToolCalls {
		if s := rec.text(EventToolArgs, i); s != tc.Arguments {
			t.Errorf("argument events of call %d = %q, want %q", i, s, tc.Arguments)
		}
	}
	var started, done []string
	for _, e := range rec.events {
		switch e.Kind {
		case EventToolStart:
			started = append(started, e.ToolCall.ID+" "+e.ToolCall.Function.Name)
			if e.ToolCall.Function.Arguments != "" {
				t.Errorf("start of call %d already has arguments %q", e.Index, e.ToolCall.Function.Arguments)
			}
		case EventToolDone:
			done = append(done, e.ToolCall.ID)
			if diff := cmp.Diff(wantCalls[e.Index], e.ToolCall); diff != "" {
				t.Errorf("done event of call %d diff (-want +got):\n%s", e.Index, diff)
			}
		}
	}
	// Parallel calls interleave, so the first two start before the third,
	// which has no arguments and starts only when the reply finishes.
	if diff := cmp.Diff([]string{"call_mod read_file", "call_main read_file", "call_glob glob"}, started); diff != "" {
		t.Errorf("tool starts diff (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"call_mod", "call_main", "call_glob"}, done); diff != "" {
		t.Errorf("tool dones diff (-want +got):\n%s", diff)
	}
	last := rec.events[len(rec.events)-1]
	if last.Kind != EventUsage || last.Usage != wantUsage {
		t.Errorf("last event = %+v, want the usage", last)
	}
	if diff := cmp.Diff(wantUsage, c.Usage()); diff != "" {
		t.Errorf("client Usage diff (-want +got):\n%s", diff)
	}

	r := srv.Last()
	if !r.Stream || !r.IncludeUsage() || r.Model != "agent-model" || len(r.Tools) != 2 {
		t.Errorf("request: stream %v usage %v model %q tools %d", r.Stream, r.IncludeUsage(), r.Model, len(r.Tools))
	}
}

func TestStreamEventOrder(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply{
		Content: "Hello world",
		ToolCalls: []llmtest.ToolCall{
			{ID: "a", Name: "f", Arguments: `{"x":1}`},
			{ID: "b", Name: "g", Arguments: `[]`},
		},
	})
	c, _ := testClient(t, srv, "m")
	var rec recorder
	if _, err := c.Stream(t.Context(), agentRequest(), rec.on); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rec.events {
		got = append(got, e.Kind.String()+":"+e.Text)
	}
	want := []string{
		"text:Hell", "text:o wo", "text:rld",
		"tool-start:", "tool-args:{\"x\"", "tool-start:", "tool-args:[]", "tool-args::1}",
		"tool-done:", "tool-done:", "usage:",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events diff (-want +got):\n%s", diff)
	}
}

func TestStreamRetriesBeforeFirstChunk(t *testing.T) {
	tests := []struct {
		name  string
		first llmtest.Reply
	}{
		{"500", llmtest.Error(500, "overloaded")},
		{"429", llmtest.Error(429, "slow down").WithHeader("Retry-After", "1")},
		{"connection dropped before headers", llmtest.Reply{Drop: true}},
		{"connection dropped after headers", llmtest.Reply{Content: "lost", DropBeforeChunk: 1}},
		{"no chunk within the timeout", llmtest.Reply{Content: "lost", HangBeforeChunk: 1}},
		{"no headers within the timeout", llmtest.Hang()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.first, llmtest.Text("fine"))
			c, waits := testClient(t, srv, "m")
			c.timeout = 200 * time.Millisecond
			var rec recorder
			got, err := c.Stream(t.Context(), agentRequest(), rec.on)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if got.Content != "fine" || rec.text(EventText, 0) != "fine" {
				t.Errorf("reply %q, text events %q, want only the retried reply", got.Content, rec.text(EventText, 0))
			}
			if len(waits()) != 1 || len(srv.Requests()) != 2 {
				t.Errorf("waits %v, %d requests; want one retry", waits(), len(srv.Requests()))
			}
		})
	}
}

func TestStreamNoRetryOnceStarted(t *testing.T) {
	tests := []struct {
		name    string
		reply   llmtest.Reply
		wantErr string
	}{
		{"connection cut", llmtest.Reply{Content: "Hello world, and more", DropBeforeChunk: 4}, "stream cut after 3 chunks"},
		{"stalled", llmtest.Reply{Content: "Hello world, and more", HangBeforeChunk: 4}, "stalled: no data for 200ms after 3 chunks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.reply)
			c, waits := testClient(t, srv, "m")
			c.timeout = 200 * time.Millisecond
			got, err := c.Stream(t.Context(), agentRequest(), nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Stream error = %v, want %q", err, tt.wantErr)
			}
			if got == nil || got.Content != "Hello wo" {
				t.Errorf("partial reply = %+v, want the text that arrived", got)
			}
			if len(waits()) != 0 {
				t.Errorf("retried after the stream started (waits %v)", waits())
			}
			if c.Usage().Requests != 0 {
				t.Errorf("an unfinished stream was counted: %+v", c.Usage())
			}
		})
	}
}

func TestStreamNoRetryOn400(t *testing.T) {
	srv := llmtest.New(t, llmtest.Error(400, "tools[0] is invalid"))
	c, waits := testClient(t, srv, "m")
	r, err := c.Stream(t.Context(), agentRequest(), nil)
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 400 || r != nil {
		t.Fatalf("Stream = %v, %v; want a 400 *HTTPError and no reply", r, err)
	}
	if len(waits()) != 0 {
		t.Errorf("retried a 400")
	}
}

func TestStreamCancel(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		// cancelOnText cancels from the event callback at the first text;
		// otherwise a timer cancels.
		cancelOnText bool
		wantText     string
	}{
		{"while waiting for headers", llmtest.Hang(), false, ""},
		{"while waiting for the first chunk", llmtest.Reply{Content: "never", HangBeforeChunk: 1}, false, ""},
		{"in the middle of the stream", llmtest.Reply{Content: "Hello world", HangBeforeChunk: 3}, true, "Hell"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.reply)
			c, _ := testClient(t, srv, "m")
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var canceled time.Time
			on := func(e Event) {
				if tt.cancelOnText && e.Kind == EventText && canceled.IsZero() {
					canceled = time.Now()
					cancel()
				}
			}
			if !tt.cancelOnText {
				time.AfterFunc(100*time.Millisecond, func() { cancel() })
			}
			start := time.Now()
			got, err := c.Stream(ctx, agentRequest(), on)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Stream error = %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Stream returned %v after it started, want promptly after cancellation", d)
			}
			if tt.wantText != "" && (got == nil || got.Content != tt.wantText) {
				t.Errorf("partial reply = %+v, want text %q", got, tt.wantText)
			}
		})
	}
}

func TestStreamOptionsRefused(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Error(400, "Unrecognized request argument supplied: stream_options"),
		llmtest.Text("one"),
		llmtest.Text("two"),
	)
	c, waits := testClient(t, srv, "m")
	for _, want := range []string{"one", "two"} {
		r, err := c.Stream(t.Context(), agentRequest(), nil)
		if err != nil || r.Content != want {
			t.Fatalf("Stream = %+v, %v; want %q", r, err, want)
		}
	}
	var got []bool
	for _, r := range srv.Requests() {
		got = append(got, r.IncludeUsage())
	}
	if diff := cmp.Diff([]bool{true, false, false}, got); diff != "" {
		t.Errorf("include_usage per request (-want +got):\n%s", diff)
	}
	if len(waits()) != 0 {
		t.Errorf("the refusal was retried as a failure")
	}
}

func TestStreamWireVariants(t *testing.T) {
	keepAlive := strings.Repeat(": keep-alive\n\n", 400)
	tests := []struct {
		name    string
		body    string
		want    *Reply
		wantErr string
	}{
		{
			// Servers that send no index (older Ollama), "reasoning"
			// instead of "reasoning_content", no ID and no usage.
			name: "no index, reasoning field",
			body: llmtest.SSE(
				`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning":"hmm "}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning":"ok"}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"type":"function","function":{"name":"bash","arguments":"{\"cmd\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"ls\"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			),
			want: &Reply{
				Reasoning:    "hmm ok",
				ToolCalls:    []openai.ToolCall{{Type: "function", Function: openai.FunctionCall{Name: "bash", Arguments: `{"cmd":"ls"}`}}},
				FinishReason: "tool_calls",
				Usage:        Usage{Requests: 1},
			},
		},
		{
			name: "whole calls by ID without index, name repeated",
			body: llmtest.SSE(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c1","function":{"name":"glob","arguments":"{\"p\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c1","function":{"name":"glob","arguments":"1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"c2","function":{"name":"grep","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`,
			),
			want: &Reply{
				ToolCalls: []openai.ToolCall{
					{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "glob", Arguments: `{"p":1}`}},
					{ID: "c2", Type: "function", Function: openai.FunctionCall{Name: "grep", Arguments: `{}`}},
				},
				FinishReason: "tool_calls",
				Usage:        Usage{Requests: 1, PromptTokens: 5, CompletionTokens: 3},
			},
		},
		{
			name: "many keep-alive comments",
			body: keepAlive + llmtest.SSE(
				`{"choices":[{"index":0,"delta":{"content":"still here"},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			),
			want: &Reply{Content: "still here", FinishReason: "stop", Usage: Usage{Requests: 1}},
		},
		{
			name: "other choices ignored",
			body: llmtest.SSE(
				`{"choices":[{"index":1,"delta":{"content":"B"}},{"index":0,"delta":{"content":"A"}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			),
			want: &Reply{Content: "A", FinishReason: "stop", Usage: Usage{Requests: 1}},
		},
		{
			name:    "error inside the stream",
			body:    "data: {\"error\":{\"message\":\"model overloaded\",\"type\":\"server_error\"}}\n\n",
			wantErr: "server reported an error: model overloaded",
		},
		{
			name:    "not a stream",
			body:    `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}`,
			wantErr: "the stream ended before any data",
		},
		{
			name: "garbled chunk",
			body: llmtest.SSE(
				`{"choices":[{"index":0,"delta":{"content":"a"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":`,
			),
			wantErr: "unreadable stream chunk",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Raw(200, "text/event-stream", tt.body))
			c, _ := testClient(t, srv, "m")
			got, err := c.Stream(t.Context(), agentRequest(), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Stream error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			// Made-up IDs are random: check their presence, then compare
			// the rest.
			for i := range got.ToolCalls {
				if got.ToolCalls[i].ID == "" {
					t.Errorf("call %d has no ID", i)
				}
				if tt.want.ToolCalls[i].ID == "" {
					got.ToolCalls[i].ID = ""
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Stream diff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamMessageRoundTrip(t *testing.T) {
	// The agent appends the reply and the tool results and sends again:
	// the second request must carry the calls the way servers expect.
	srv := llmtest.New(t,
		llmtest.Tools(llmtest.ToolCall{ID: "call_1", Name: "read_file", Arguments: `{"path":"a"}`}),
		llmtest.Text("done"),
	)
	c, _ := testClient(t, srv, "m")
	req := agentRequest()
	r, err := c.Stream(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, r.Message(), openai.ChatCompletionMessage{
		Role: openai.ChatMessageRoleTool, ToolCallID: r.ToolCalls[0].ID, Content: "contents of a",
	})
	if _, err := c.Stream(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := string(srv.Last().Body)
	if !strings.Contains(body, `"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]`) {
		t.Errorf("assistant tool calls not sent back as expected:\n%s", body)
	}
	if strings.Contains(body, `"index"`) {
		t.Errorf("stream-only index field sent back:\n%s", body)
	}
}

func TestStreamAndChatUsageAddUp(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Text("a").WithUsage(10, 1, 0),
		llmtest.Text("b").WithUsage(20, 2, 16),
		llmtest.Text("c").WithUsage(30, 3, 16),
	)
	c, _ := testClient(t, srv, "m")
	if _, err := c.Stream(t.Context(), agentRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(t.Context(), agentRequest()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(t.Context(), agentRequest(), nil); err != nil {
		t.Fatal(err)
	}
	want := Usage{Requests: 3, PromptTokens: 60, CompletionTokens: 6, CachedTokens: 32}
	if diff := cmp.Diff(want, c.Usage()); diff != "" {
		t.Errorf("Usage diff (-want +got):\n%s", diff)
	}
}
