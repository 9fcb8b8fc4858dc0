// Package openaicompat holds what Mira's clients for OpenAI-compatible
// servers have in common: the chat client (package llm) and the
// embeddings and rerank clients (package embed). They are configured
// alike (Config), accept the same base URLs (CheckBaseURL, Endpoint),
// build their github.com/sashabaranov/go-openai client alike
// (Config.ClientConfig), and report a reply with a failing HTTP status
// with the same error (HTTPError), so a user who got one of them working
// against a server knows how to set up the others.
//
// Each client keeps its own defaults (timeouts, retries) and its own
// interpretation of a failure; package retry does the retrying.
package openaicompat

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/miramem/mira/internal/retry"
	openai "github.com/sashabaranov/go-openai"
)

// DefaultBaseURL is OpenAI's own API root, used by the clients that have a
// default when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a client of an OpenAI-compatible server. Zero fields
// take the client's defaults.
type Config struct {
	// BaseURL is the API root that the client's endpoint path
	// ("/chat/completions", "/embeddings", "/rerank") is appended to,
	// usually ending in /v1: "https://api.openai.com/v1",
	// "http://localhost:11434/v1" (Ollama), "http://localhost:8080/v1"
	// (llama.cpp server, vLLM). Nothing else is appended to it, so proxies
	// with other prefixes work too; a trailing slash is ignored.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends no Authorization
	// header, which local servers accept.
	APIKey string
	// Model is the model name the server knows, e.g. "gpt-4.1-mini",
	// "qwen3:8b" or "nomic-embed-text".
	Model string
	// Timeout bounds each attempt, not the whole call (the caller's
	// context does that).
	Timeout time.Duration
	// MaxRetries is how often a request that failed with 429, a 5xx other
	// than 501, a timeout or a network error (not a refused connection or
	// an unknown host, which fail at once) is repeated (0 is the
	// client's default; negative means never).
	MaxRetries int
	// Backoff is the wait before the first retry, doubled for each later
	// one up to 30 s, with jitter (0 is the client's default). A
	// Retry-After header overrides it.
	Backoff time.Duration
	// HTTPClient sends the requests (default: a plain http.Client). Its
	// own Timeout, if any, would cut long streams: leave it 0 and use
	// Timeout.
	HTTPClient *http.Client
}

// Configured reports whether c names a model.
func (c Config) Configured() bool { return strings.TrimSpace(c.Model) != "" }

// ClientConfig returns the go-openai configuration for c: c.APIKey as the
// bearer token, c.BaseURL as the API root (DefaultBaseURL when it is
// empty), which must pass CheckBaseURL, and an HTTP client that sends the
// requests with c.HTTPClient and hands each reply's headers back to the
// attempt (retry.HeaderDoer), so that Retry-After is honoured. The
// caller adjusts the rest (e.g. EmptyMessagesLimit) before
// openai.NewClientWithConfig.
func (c Config) ClientConfig() (openai.ClientConfig, error) {
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if err := CheckBaseURL(base); err != nil {
		return openai.ClientConfig{}, err
	}
	oc := openai.DefaultConfig(c.APIKey)
	oc.BaseURL = base
	oc.HTTPClient = retry.HeaderDoer{Client: c.HTTPClient}
	return oc, nil
}

// CheckBaseURL accepts an http or https URL with a host, which is what
// the clients append their endpoint path to. A path, a port, a trailing
// slash and user information (sent by net/http as basic authentication)
// are all accepted; white space is not.
func CheckBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bad base URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("bad base URL %q: want http(s)://host[:port]/path", raw)
	}
	return nil
}

// Endpoint returns the URL of the endpoint at path (e.g. "/rerank") under
// the API root base: base without its trailing slashes, then path, as
// go-openai joins them, so that every client treats ".../v1/" like
// ".../v1".
func Endpoint(base, path string) string {
	return strings.TrimRight(base, "/") + path
}
