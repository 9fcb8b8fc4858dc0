package llm

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/llm/llmtest"
	openai "github.com/sashabaranov/go-openai"
)

const testKey = "sk-test"

// testClient returns a client of srv whose retry waits are recorded
// instead of spent, and the recorded waits.
func testClient(t *testing.T, srv *llmtest.Server, model string) (*Client, func() []time.Duration) {
	t.Helper()
	c, err := New(Config{BaseURL: srv.URL, APIKey: testKey, Model: model, MaxRetries: 3, Backoff: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	var (
		mu    sync.Mutex
		waits []time.Duration
	)
	c.retry.Jitter = func() float64 { return 0 }
	c.retry.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), waits...)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"ok", Config{Model: "gpt-4.1-mini"}, ""},
		{"local", Config{BaseURL: "http://localhost:11434/v1", Model: "qwen3:8b"}, ""},
		{"no model", Config{BaseURL: "http://localhost:11434/v1"}, "no model configured"},
		{"blank model", Config{Model: "  "}, "no model configured"},
		{"bad scheme", Config{BaseURL: "localhost:11434/v1", Model: "m"}, "bad base URL"},
		{"no host", Config{BaseURL: "http:///v1", Model: "m"}, "bad base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New(%+v) = %v", tt.cfg, err)
				}
				if c.Model() != strings.TrimSpace(tt.cfg.Model) {
					t.Errorf("Model() = %q, want %q", c.Model(), tt.cfg.Model)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New(%+v) error = %v, want it to mention %q", tt.cfg, err, tt.wantErr)
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Config
	}{
		{"nothing", nil, Config{}},
		{"openai", map[string]string{"OPENAI_API_KEY": "sk-1", "MIRA_MODEL": "gpt-5-mini"},
			Config{APIKey: "sk-1", Model: "gpt-5-mini"}},
		{"ollama", map[string]string{"OPENAI_BASE_URL": " http://localhost:11434/v1 ", "MIRA_MODEL": "qwen3:8b"},
			Config{BaseURL: "http://localhost:11434/v1", Model: "qwen3:8b"}},
		{"key without model", map[string]string{"OPENAI_API_KEY": "sk-1"}, Config{APIKey: "sk-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ConfigFromEnv(func(k string) string { return tt.env[k] })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ConfigFromEnv diff (-want +got):\n%s", diff)
			}
			if got.Configured() != (tt.want.Model != "") {
				t.Errorf("Configured() = %v with model %q", got.Configured(), got.Model)
			}
		})
	}
}

func TestCompleteRetries(t *testing.T) {
	tests := []struct {
		name      string
		replies   []llmtest.Reply
		want      string
		wantErr   string // substring of the error; "" for success
		status    int    // HTTPError status expected in the error chain
		wantWaits []time.Duration
	}{
		{
			name:      "500 then success",
			replies:   []llmtest.Reply{llmtest.Error(500, "overloaded"), llmtest.Text("hello")},
			want:      "hello",
			wantWaits: []time.Duration{100 * time.Millisecond},
		},
		{
			name: "backoff doubles",
			replies: []llmtest.Reply{
				llmtest.Error(502, "bad gateway"), llmtest.Error(503, "unavailable"),
				llmtest.Raw(500, "text/html", "<html>oops</html>"), llmtest.Text("ok"),
			},
			want:      "ok",
			wantWaits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond},
		},
		{
			name:      "429 with Retry-After",
			replies:   []llmtest.Reply{llmtest.Error(429, "slow down").WithHeader("Retry-After", "7"), llmtest.Text("done")},
			want:      "done",
			wantWaits: []time.Duration{7 * time.Second},
		},
		{
			name:      "429 with retry-after-ms",
			replies:   []llmtest.Reply{llmtest.Error(429, "slow down").WithHeader("Retry-After-Ms", "1500"), llmtest.Text("done")},
			want:      "done",
			wantWaits: []time.Duration{1500 * time.Millisecond},
		},
		{
			name:    "429 asking for too long a wait fails at once",
			replies: []llmtest.Reply{llmtest.Error(429, "quota exhausted").WithHeader("Retry-After", "86400")},
			wantErr: "server asks to wait 24h0m0s",
			status:  429,
		},
		{
			name:    "no retry on 400",
			replies: []llmtest.Reply{llmtest.Error(400, "bad messages")},
			wantErr: "server replied 400 Bad Request: bad messages",
			status:  400,
		},
		{
			name:    "no retry on 401, with a hint",
			replies: []llmtest.Reply{llmtest.Error(401, "invalid api key")},
			wantErr: "invalid api key (check the API key)",
			status:  401,
		},
		{
			name:    "no retry on 404, with a hint",
			replies: []llmtest.Reply{llmtest.Raw(404, "text/plain", "404 page not found")},
			wantErr: "404 page not found (check the model name and the base URL",
			status:  404,
		},
		{
			name:    "no retry on 501",
			replies: []llmtest.Reply{llmtest.Error(501, "not implemented")},
			wantErr: "501",
			status:  501,
		},
		{
			name: "gives up after the retries",
			replies: []llmtest.Reply{
				llmtest.Error(500, "a"), llmtest.Error(500, "b"), llmtest.Error(500, "c"), llmtest.Error(500, "d"),
			},
			wantErr:   "giving up after 4 attempts: server replied 500 Internal Server Error: d",
			status:    500,
			wantWaits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond},
		},
		{
			name:      "dropped connection is retried",
			replies:   []llmtest.Reply{{Drop: true}, llmtest.Text("back")},
			want:      "back",
			wantWaits: []time.Duration{100 * time.Millisecond},
		},
		{
			name:    "not an OpenAI API",
			replies: []llmtest.Reply{llmtest.Raw(200, "text/html", "<html>welcome</html>")},
			wantErr: "unreadable reply",
		},
		{
			name:    "empty reply",
			replies: []llmtest.Reply{llmtest.Text("").WithFinish("length")},
			wantErr: `empty reply (finish reason "length")`,
		},
		{
			name:    "thinking is removed",
			replies: []llmtest.Reply{llmtest.Text("<think>\nThe user wants a greeting.\n</think>\n\nHi there.")},
			want:    "Hi there.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.replies...)
			c, waits := testClient(t, srv, "test-model")
			got, err := c.Complete(t.Context(), "be brief", "say hello")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Complete error = %v, want it to contain %q", err, tt.wantErr)
				}
				var he *HTTPError
				if tt.status != 0 && (!errors.As(err, &he) || he.StatusCode != tt.status) {
					t.Errorf("Complete error %v: want an *HTTPError with status %d", err, tt.status)
				}
			} else if err != nil || got != tt.want {
				t.Fatalf("Complete = %q, %v, want %q", got, err, tt.want)
			}
			if diff := cmp.Diff(tt.wantWaits, waits()); diff != "" {
				t.Errorf("retry waits diff (-want +got):\n%s", diff)
			}
			if n := len(srv.Requests()); n != len(tt.replies) {
				t.Errorf("server got %d requests, want %d", n, len(tt.replies))
			}
		})
	}
}

func TestCompleteRequest(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("fine"), llmtest.Text("fine"))
	c, _ := testClient(t, srv, "test-model")
	if _, err := c.Complete(t.Context(), "system words", "user words"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(t.Context(), "", "only user"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	r := reqs[0]
	if r.Model != "test-model" || r.Stream || r.ResponseFormat != nil || r.StreamOptions != nil {
		t.Errorf("request = model %q stream %v format %v options %v, want a plain request for test-model",
			r.Model, r.Stream, r.ResponseFormat, r.StreamOptions)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if r.System() != "system words" || r.LastUser() != "user words" {
		t.Errorf("messages = %+v", r.Messages)
	}
	if n := len(reqs[1].Messages); n != 1 || reqs[1].Messages[0].Role != "user" {
		t.Errorf("without a system prompt the messages are %+v, want only the user's", reqs[1].Messages)
	}
}

func TestNoKeyNoAuthorization(t *testing.T) {
	srv := llmtest.New(t, llmtest.Text("ok"))
	c, err := New(Config{BaseURL: srv.URL, Model: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(t.Context(), "", "hi"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Last().Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q with no key, want none", got)
	}
}

func TestCancelWhileWaitingToRetry(t *testing.T) {
	srv := llmtest.New(t, llmtest.Error(429, "slow down").WithHeader("Retry-After", "60"))
	c, err := New(Config{BaseURL: srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err = c.Complete(ctx, "", "hi")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Complete error = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Complete returned after %v, want promptly after cancellation", d)
	}
}

func TestDeadlineShorterThanRetryAfter(t *testing.T) {
	srv := llmtest.New(t, llmtest.Error(503, "busy").WithHeader("Retry-After", "30"))
	c, _ := testClient(t, srv, "m")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := c.Complete(ctx, "", "hi")
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "would pass the deadline") {
		t.Fatalf("Complete error = %v, want a deadline error without waiting", err)
	}
}

func TestAttemptTimeout(t *testing.T) {
	srv := llmtest.New(t, llmtest.Hang(), llmtest.Text("second try"))
	c, waits := testClient(t, srv, "m")
	c.timeout = 100 * time.Millisecond
	got, err := c.Complete(t.Context(), "", "hi")
	if err != nil || got != "second try" {
		t.Fatalf("Complete = %q, %v, want the retried reply", got, err)
	}
	if len(waits()) != 1 {
		t.Errorf("waits = %v, want one retry", waits())
	}
}

func TestUsage(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Text("one").WithUsage(100, 10, 0),
		llmtest.Error(500, "retried, not counted"),
		llmtest.Text("two").WithUsage(120, 20, 96),
		llmtest.Text("three").WithUsage(50, 5, 32),
	)
	c, _ := testClient(t, srv, "m")
	for range 3 {
		if _, err := c.Complete(t.Context(), "", "hi"); err != nil {
			t.Fatal(err)
		}
	}
	want := Usage{Requests: 3, PromptTokens: 270, CompletionTokens: 35, CachedTokens: 128}
	if diff := cmp.Diff(want, c.Usage()); diff != "" {
		t.Errorf("Usage diff (-want +got):\n%s", diff)
	}
}

func TestUsageConcurrent(t *testing.T) {
	srv := llmtest.New(t)
	srv.Default(llmtest.Text("x").WithUsage(10, 2, 4))
	c, _ := testClient(t, srv, "m")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.Complete(t.Context(), "", "hi"); err != nil {
				t.Error(err)
			}
			_ = c.Usage()
		})
	}
	wg.Wait()
	want := Usage{Requests: 8, PromptTokens: 80, CompletionTokens: 16, CachedTokens: 32}
	if diff := cmp.Diff(want, c.Usage()); diff != "" {
		t.Errorf("Usage diff (-want +got):\n%s", diff)
	}
}

func TestChatToolCalls(t *testing.T) {
	srv := llmtest.New(t, llmtest.Tools(
		llmtest.ToolCall{ID: "call_a", Name: "read_file", Arguments: `{"path":"go.mod"}`},
		llmtest.ToolCall{Name: "glob", Arguments: ""},
	).WithUsage(30, 8, 0))
	c, _ := testClient(t, srv, "m")
	r, err := c.Chat(t.Context(), openai.ChatCompletionRequest{
		Messages: messages("", "look around"),
		Tools:    []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read_file"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := &Reply{
		ToolCalls: []openai.ToolCall{
			{ID: "call_a", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"go.mod"}`}},
			{ID: "call_1", Type: "function", Function: openai.FunctionCall{Name: "glob", Arguments: "{}"}},
		},
		FinishReason: "tool_calls",
		Usage:        Usage{Requests: 1, PromptTokens: 30, CompletionTokens: 8},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Chat diff (-want +got):\n%s", diff)
	}
	if got := srv.Last().Tools; len(got) != 1 || got[0].Function.Name != "read_file" {
		t.Errorf("tools sent = %+v", got)
	}
}

func TestFinishCallsMakesIDs(t *testing.T) {
	calls := finishCalls([]openai.ToolCall{{Function: openai.FunctionCall{Name: "x"}}})
	id := calls[0].ID
	if len(id) != 9 || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
		t.Errorf("made-up ID %q, want 9 alphanumerics", id)
	}
	if calls[0].Type != openai.ToolTypeFunction || calls[0].Function.Arguments != "{}" {
		t.Errorf("finishCalls = %+v", calls[0])
	}
}

// TestReasoningModelRequests checks that requests for models go-openai
// validates as reasoning models pass its checks and reach the server with
// max_completion_tokens, and that other models are left alone.
func TestReasoningModelRequests(t *testing.T) {
	tests := []struct {
		model     string
		adjusted  bool
		wantField string // the token limit field that must be sent
	}{
		{"gpt-5", true, "max_completion_tokens"},
		{"gpt-5-mini", true, "max_completion_tokens"},
		{"o3-mini", true, "max_completion_tokens"},
		{"o4-mini", true, "max_completion_tokens"},
		{"o1", true, "max_completion_tokens"},
		{"gpt-4.1-mini", false, "max_tokens"},
		{"qwen3:8b", false, "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Text("ok"), llmtest.Text("streamed"))
			c, _ := testClient(t, srv, tt.model)
			req := openai.ChatCompletionRequest{
				Messages:         messages("sys", "hi"),
				MaxTokens:        256,
				Temperature:      0.2,
				TopP:             0.9,
				PresencePenalty:  0.5,
				FrequencyPenalty: 0.5,
				ReasoningEffort:  "low",
			}
			if _, err := c.Chat(t.Context(), req); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if _, err := c.Stream(t.Context(), req, nil); err != nil {
				t.Fatalf("Stream: %v", err)
			}
			for _, got := range srv.Requests() {
				if !strings.Contains(string(got.Body), `"`+tt.wantField+`":256`) {
					t.Errorf("body %s lacks %s", got.Body, tt.wantField)
				}
				if got.ReasoningEffort != "low" {
					t.Errorf("reasoning_effort = %q, want it passed as is", got.ReasoningEffort)
				}
				if sampled := got.Temperature != 0 || got.TopP != 0; sampled == tt.adjusted {
					t.Errorf("temperature %v top_p %v: want them dropped only for reasoning models", got.Temperature, got.TopP)
				}
			}
		})
	}
}

func TestReasoningValidationStillApplies(t *testing.T) {
	// go-openai refuses tools with gpt-6 models that reason; the request
	// must fail before reaching the server, with the library's reason.
	srv := llmtest.New(t)
	c, _ := testClient(t, srv, openai.GPT6Sol)
	_, err := c.Chat(t.Context(), openai.ChatCompletionRequest{
		Messages: messages("", "hi"),
		Tools:    []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "x"}}},
	})
	if !errors.Is(err, openai.ErrReasoningToolsRequireResponses) {
		t.Fatalf("Chat error = %v, want go-openai's refusal", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
}

func TestAcceptsEffort(t *testing.T) {
	tests := map[string]bool{
		"o1":                  true,
		"o1-2024-12-17":       true,
		"o1-mini":             false,
		"o1-preview":          false,
		"o3":                  true,
		"o3-mini":             true,
		"o3-pro":              true,
		"o4-mini":             true,
		"o4-mini-2025-04-16":  true,
		"gpt-5":               true,
		"gpt-5-mini":          true,
		"gpt-5.1-codex":       true,
		"gpt-5-chat-latest":   false,
		"gpt-5.1-chat-latest": false,
		"gpt-6-sol":           true,
		"openai/gpt-5":        true,
		"GPT-5":               true,
		"gpt-oss:20b":         true,
		"gpt-oss-120b":        true,
		"gpt-4o":              false,
		"gpt-4.1-mini":        false,
		"deepseek-reasoner":   false,
		"deepseek-chat":       false,
		"qwen3:8b":            false,
		"o1x":                 false,
		"":                    false,
	}
	for model, want := range tests {
		if got := AcceptsEffort(model); got != want {
			t.Errorf("AcceptsEffort(%q) = %v, want %v", model, got, want)
		}
	}
}

func TestContextLengthError(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  bool
	}{
		{"openai", llmtest.Raw(400, "application/json",
			`{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`), true},
		{"llama.cpp", llmtest.Raw(400, "application/json",
			`{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`), true},
		{"vllm", llmtest.Raw(400, "application/json",
			`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","code":400}`), true},
		{"other 400", llmtest.Error(400, "messages must not be empty"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.reply)
			c, _ := testClient(t, srv, "m")
			_, err := c.Complete(t.Context(), "", "hi")
			if err == nil {
				t.Fatal("Complete succeeded, want an error")
			}
			if got := errors.Is(err, ErrContextLength); got != tt.want {
				t.Errorf("errors.Is(%v, ErrContextLength) = %v, want %v", err, got, tt.want)
			}
		})
	}
}

func TestRetryDefaults(t *testing.T) {
	tests := []struct {
		retries  int
		backoff  time.Duration
		wantMax  int
		wantBase time.Duration
	}{
		{0, 0, defaultMaxRetries, defaultBackoff},
		{-1, -time.Second, 0, defaultBackoff},
		{2, 50 * time.Millisecond, 2, 50 * time.Millisecond},
	}
	for _, tt := range tests {
		c, err := New(Config{Model: "m", MaxRetries: tt.retries, Backoff: tt.backoff})
		if err != nil {
			t.Fatal(err)
		}
		if c.retry.Max != tt.wantMax || c.retry.Base != tt.wantBase {
			t.Errorf("New(MaxRetries %d, Backoff %v): retries %d, base %v, want %d, %v",
				tt.retries, tt.backoff, c.retry.Max, c.retry.Base, tt.wantMax, tt.wantBase)
		}
	}
}
