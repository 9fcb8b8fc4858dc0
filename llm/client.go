package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miramem/mira/internal/openaicompat"
	"github.com/miramem/mira/internal/retry"
	openai "github.com/sashabaranov/go-openai"
)

// DefaultBaseURL is the API root used when Config.BaseURL is empty.
const DefaultBaseURL = openaicompat.DefaultBaseURL

// DefaultTimeout is the per-request timeout used when Config.Timeout is 0.
const DefaultTimeout = 5 * time.Minute

// streamLineLimit replaces go-openai's limit of 300 non-data lines in a
// row in a stream (keep-alive comments, blank lines), past which it
// aborts the stream. Proxies that send a comment every few seconds while
// a long prompt is processed can exceed 300; the idle timeout (Timeout
// without a chunk) is the better judge of a dead stream.
const streamLineLimit = 100_000

// Defaults of Config.MaxRetries and Config.Backoff.
const (
	defaultMaxRetries = 4
	defaultBackoff    = time.Second
)

// Config configures a Client. BaseURL is the API root that
// "/chat/completions" is appended to, usually ending in /v1:
// "https://api.openai.com/v1" (the default), "https://api.deepseek.com/v1",
// "http://localhost:11434/v1" (Ollama), "http://localhost:8080/v1"
// (llama.cpp server, vLLM); white space around it is ignored. Model is the
// model name the server knows, e.g. "gpt-4.1-mini" or "qwen3:8b", and is
// required: an empty Model means no LLM is configured (see Configured).
//
// Timeout bounds each attempt, not the whole call (the caller's context
// does that). For Chat, Complete and CompleteJSON it is the time for the
// whole reply; for Stream it is the wait for the first chunk and then
// between two chunks, so a long stream that keeps coming is never cut.
// Default DefaultTimeout, generous because a local model on a CPU can take
// minutes. MaxRetries defaults to 4 and Backoff to 1 s. The other fields
// are as for every client of an OpenAI-compatible server.
type Config = openaicompat.Config

// ConfigFromEnv reads the chat configuration from the environment through
// getenv (os.Getenv, or a map lookup in tests): OPENAI_BASE_URL,
// OPENAI_API_KEY and MIRA_MODEL. It leaves Model empty when MIRA_MODEL is
// unset, which means "no LLM configured": callers then use their offline
// fallback instead of calling New. Other fields keep their defaults; the
// command line and the config file are the caller's to merge.
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{
		BaseURL: strings.TrimSpace(getenv("OPENAI_BASE_URL")),
		APIKey:  strings.TrimSpace(getenv("OPENAI_API_KEY")),
		Model:   strings.TrimSpace(getenv("MIRA_MODEL")),
	}
}

// Client talks to one model on an OpenAI-compatible chat completions API.
// It is safe for concurrent use.
type Client struct {
	api     *openai.Client
	model   string
	timeout time.Duration
	retry   retry.Policy

	// Parameters the server refused once are not sent again for the
	// client's lifetime: every later request would be refused too.
	noJSONMode      atomic.Bool
	noStreamOptions atomic.Bool

	mu    sync.Mutex
	usage Usage
}

// New returns a client for cfg. It does not contact the server.
func New(cfg Config) (*Client, error) {
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, errors.New("llm: no model configured (set MIRA_MODEL)")
	}
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	oc, err := cfg.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("llm: %w", err)
	}
	oc.EmptyMessagesLimit = streamLineLimit
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{
		api:     openai.NewClientWithConfig(oc),
		model:   model,
		timeout: timeout,
		retry:   retry.New(defaultMaxRetries, defaultBackoff).Override(cfg.MaxRetries, cfg.Backoff),
	}, nil
}

// Model returns the configured model name.
func (c *Client) Model() string { return c.model }

// Usage counts requests and tokens.
type Usage struct {
	// Requests is the number of replies received (failed attempts that
	// were retried are not counted).
	Requests int
	// PromptTokens and CompletionTokens are as the server reported them.
	PromptTokens     int
	CompletionTokens int
	// CachedTokens is the part of PromptTokens served from the provider's
	// prompt cache (usage.prompt_tokens_details.cached_tokens).
	CachedTokens int
	// ReasoningTokens is the part of CompletionTokens spent thinking
	// (usage.completion_tokens_details.reasoning_tokens).
	ReasoningTokens int
}

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.Requests += v.Requests
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.CachedTokens += v.CachedTokens
	u.ReasoningTokens += v.ReasoningTokens
}

// usageOf converts the usage of one reply.
func usageOf(u *openai.Usage) Usage {
	out := Usage{Requests: 1}
	if u == nil {
		return out
	}
	out.PromptTokens = u.PromptTokens
	out.CompletionTokens = u.CompletionTokens
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

// Usage returns the usage of all requests made with c so far.
func (c *Client) Usage() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usage
}

func (c *Client) count(u Usage) {
	c.mu.Lock()
	c.usage.Add(u)
	c.mu.Unlock()
}

// Reply is the assistant's answer to a chat request.
type Reply struct {
	// Content is the assistant text.
	Content string
	// Reasoning is the model's thinking, when the server sends it apart
	// (reasoning_content or reasoning).
	Reasoning string
	// ToolCalls are the requested tool calls, in order, each with an ID
	// (one is made up when the server sends none), type "function" and
	// arguments ("{}" when the server sends none).
	ToolCalls []openai.ToolCall
	// FinishReason is "stop", "length", "tool_calls", …, or "" when the
	// server did not say (also a stream the server ended early).
	FinishReason string
	// Usage is the usage of this reply (Requests is 1).
	Usage Usage
}

// Message returns the reply as the assistant message to append to the
// conversation before the tool results. Reasoning is left out: most
// servers refuse or ignore it in a request.
func (r *Reply) Message() openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{
		Role:      openai.ChatMessageRoleAssistant,
		Content:   r.Content,
		ToolCalls: r.ToolCalls,
	}
}

// Chat sends req and returns the complete reply. An empty req.Model is
// the client's model; req.Stream and req.StreamOptions are cleared. See
// Stream for how parameters are adjusted for reasoning models.
func (c *Client) Chat(ctx context.Context, req openai.ChatCompletionRequest) (*Reply, error) {
	req = c.prepare(req)
	req.Stream = false
	req.StreamOptions = nil
	var resp openai.ChatCompletionResponse
	err := c.retry.Do(ctx, func(ctx context.Context) error {
		hctx, header := retry.RecordHeader(ctx)
		actx, cancel := context.WithTimeout(hctx, c.timeout)
		defer cancel()
		r, err := c.api.CreateChatCompletion(actx, req)
		if err != nil {
			if ctx.Err() != nil {
				// The caller gave up: say so rather than blame the server.
				return fmt.Errorf("request interrupted: %w", context.Cause(ctx))
			}
			return classify(err, header(), actx, c.timeout)
		}
		resp = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chat with model %q: %w", req.Model, err)
	}
	u := usageOf(&resp.Usage)
	c.count(u)
	var choice *openai.ChatCompletionChoice
	for i := range resp.Choices {
		if resp.Choices[i].Index == 0 {
			choice = &resp.Choices[i]
			break
		}
	}
	if choice == nil {
		return nil, fmt.Errorf("chat with model %q: the reply has no choices", req.Model)
	}
	return &Reply{
		Content:      choice.Message.Content,
		Reasoning:    choice.Message.ReasoningContent,
		ToolCalls:    finishCalls(choice.Message.ToolCalls),
		FinishReason: string(choice.FinishReason),
		Usage:        u,
	}, nil
}

// Complete sends a system prompt (left out when empty) and a user message
// and returns the reply's text, trimmed, with a leading <think>…</think>
// block removed (local reasoning models put their thinking there). An
// empty reply is an error.
func (c *Client) Complete(ctx context.Context, system, user string) (string, error) {
	r, err := c.Chat(ctx, openai.ChatCompletionRequest{Messages: messages(system, user)})
	if err != nil {
		return "", err
	}
	text := strings.TrimSpace(stripThinking(r.Content))
	if text == "" {
		return "", fmt.Errorf("model %q returned an empty reply (finish reason %q)", c.model, r.FinishReason)
	}
	return text, nil
}

// messages builds a system and user conversation.
func messages(system, user string) []openai.ChatCompletionMessage {
	var msgs []openai.ChatCompletionMessage
	if strings.TrimSpace(system) != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: system})
	}
	return append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: user})
}

// prepare fills in the model and makes the request pass go-openai's own
// checks for reasoning models, which refuse before sending what those
// models' servers would refuse anyway: max_tokens is sent as
// max_completion_tokens, and the sampling parameters they fix
// (temperature and top_p other than 1, n, penalties, log probabilities)
// are dropped, so one configuration works with every model.
func (c *Client) prepare(req openai.ChatCompletionRequest) openai.ChatCompletionRequest {
	if req.Model == "" {
		req.Model = c.model
	}
	if !checkedAsReasoning(req.Model) {
		return req
	}
	if req.MaxTokens > 0 {
		if req.MaxCompletionTokens == 0 {
			req.MaxCompletionTokens = req.MaxTokens
		}
		req.MaxTokens = 0
	}
	if req.Temperature != 1 {
		req.Temperature = 0
	}
	if req.TopP != 1 {
		req.TopP = 0
	}
	if req.N > 1 {
		req.N = 0
	}
	req.PresencePenalty = 0
	req.FrequencyPenalty = 0
	req.LogProbs = false
	req.TopLogProbs = 0
	return req
}

// checkedAsReasoning reports whether go-openai applies its reasoning
// model checks to this model name: the o1, o3, o4 and gpt-5 prefixes and
// the gpt-6 names it knows, matched exactly as it does.
func checkedAsReasoning(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	switch model {
	case openai.GPT6Astra, openai.GPT6Dot1Sol, openai.GPT6Sol, openai.GPT6Luna:
		return true
	}
	return false
}

// AcceptsEffort reports whether the model is known to accept the
// reasoning_effort parameter, so the caller sends it only there: OpenAI
// refuses it for other models. It is conservative, true only for OpenAI's
// reasoning families (o1 but not o1-mini or o1-preview, o3, o4-mini,
// gpt-5 and later except the -chat models, gpt-6) and the open-weight
// gpt-oss models, whose servers (vLLM, Ollama) map it to their thinking
// levels. A provider prefix ("openai/gpt-5" on OpenRouter) is ignored.
// DeepSeek's reasoner thinks without being asked and has no effort
// parameter.
func AcceptsEffort(model string) bool {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	family := func(name string) bool {
		return m == name || strings.HasPrefix(m, name+"-") || strings.HasPrefix(m, name+".") || strings.HasPrefix(m, name+":")
	}
	switch {
	case family("o1"):
		return !strings.HasPrefix(m, "o1-mini") && !strings.HasPrefix(m, "o1-preview")
	case family("o3"), family("o4-mini"), family("gpt-oss"):
		return true
	case family("gpt-5"), family("gpt-6"):
		return !strings.Contains(m, "-chat")
	}
	return false
}

// finishCalls completes the tool calls of a reply: no index (it belongs to
// stream deltas and servers refuse it in requests), type "function", an ID
// when the server sent none and "{}" for missing arguments.
func finishCalls(calls []openai.ToolCall) []openai.ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]openai.ToolCall, len(calls))
	for i, tc := range calls {
		tc.Index = nil
		if tc.Type == "" {
			tc.Type = openai.ToolTypeFunction
		}
		if tc.ID == "" {
			tc.ID = newCallID()
		}
		if strings.TrimSpace(tc.Function.Arguments) == "" {
			tc.Function.Arguments = "{}"
		}
		out[i] = tc
	}
	return out
}

// newCallID makes up a tool call ID for servers that send none (older
// Ollama and llama.cpp builds), so tool results can still refer to their
// call. Nine alphanumerics, since Mistral's chat templates accept no
// other shape.
func newCallID() string {
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 9)
	for i := range b {
		b[i] = alnum[rand.IntN(len(alnum))]
	}
	return string(b)
}

// String is the usage in the form recorded in commit trailers
// ("Mira-Usage: requests=2 prompt=1840 completion=212 cached=1024").
func (u Usage) String() string {
	s := fmt.Sprintf("requests=%d prompt=%d completion=%d cached=%d", u.Requests, u.PromptTokens, u.CompletionTokens, u.CachedTokens)
	if u.ReasoningTokens > 0 {
		s += fmt.Sprintf(" reasoning=%d", u.ReasoningTokens)
	}
	return s
}
