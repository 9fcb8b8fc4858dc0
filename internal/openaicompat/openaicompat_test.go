package openaicompat

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/internal/retry"
	openai "github.com/sashabaranov/go-openai"
)

func TestCheckBaseURL(t *testing.T) {
	const want = ": want http(s)://host[:port]/path"
	tests := []struct {
		name    string
		raw     string
		wantErr string // the whole message; "" accepts raw
	}{
		{"OpenAI", "https://api.openai.com/v1", ""},
		{"Ollama", "http://localhost:11434/v1", ""},
		{"no path", "http://127.0.0.1:8080", ""},
		{"trailing slash", "http://localhost:8080/v1/", ""},
		{"root with slash", "http://localhost:8080/", ""},
		{"path /v1 under a prefix", "https://proxy.example.com/openai/v1", ""},
		{"path without /v1", "https://api.jina.ai", ""},
		{"IPv6 host", "http://[::1]:8080/v1", ""},
		{"upper-case scheme", "HTTPS://api.openai.com/v1", ""},
		{"query kept", "https://proxy.example.com/v1?api-version=1", ""},
		{"userinfo", "http://user:secret@localhost:8080/v1", ""},
		{"user without password", "http://user@localhost:8080/v1", ""},

		{"empty", "", `bad base URL ""` + want},
		{"missing scheme, with port", "localhost:11434/v1", `bad base URL "localhost:11434/v1"` + want},
		{"missing scheme", "localhost/v1", `bad base URL "localhost/v1"` + want},
		{"path /v1 alone", "/v1", `bad base URL "/v1"` + want},
		{"scheme-relative", "//localhost:8080/v1", `bad base URL "//localhost:8080/v1"` + want},
		{"ftp", "ftp://example.com/v1", `bad base URL "ftp://example.com/v1"` + want},
		{"file", "file:///tmp/x", `bad base URL "file:///tmp/x"` + want},
		{"no host", "http:///v1", `bad base URL "http:///v1"` + want},
		{"userinfo without host", "http://user@/v1", `bad base URL "http://user@/v1"` + want},
		{"scheme only", "https://", `bad base URL "https://"` + want},
		{"userinfo, missing scheme", "user@localhost:8080/v1",
			`bad base URL "user@localhost:8080/v1": parse "user@localhost:8080/v1": first path segment in URL cannot contain colon`},
		{"leading space", " http://localhost:8080/v1",
			`bad base URL " http://localhost:8080/v1": parse " http://localhost:8080/v1": first path segment in URL cannot contain colon`},
		{"bad port", "http://localhost:port/v1",
			`bad base URL "http://localhost:port/v1": parse "http://localhost:port/v1": invalid port ":port" after host`},
		{"space in host", "http://local host/v1",
			`bad base URL "http://local host/v1": parse "http://local host/v1": invalid character " " in host name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckBaseURL(tt.raw)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("CheckBaseURL(%q) = %v, want nil", tt.raw, err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("CheckBaseURL(%q) = nil, want %q", tt.raw, tt.wantErr)
			case tt.wantErr != "" && err.Error() != tt.wantErr:
				t.Errorf("CheckBaseURL(%q) = %q, want %q", tt.raw, err, tt.wantErr)
			}
		})
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		base, path, want string
	}{
		{"http://localhost:8080/v1", "/rerank", "http://localhost:8080/v1/rerank"},
		{"http://localhost:8080/v1/", "/rerank", "http://localhost:8080/v1/rerank"},
		{"http://localhost:8080/v1//", "/rerank", "http://localhost:8080/v1/rerank"},
		{"http://localhost:8080", "/embeddings", "http://localhost:8080/embeddings"},
		{"http://localhost:8080/", "/embeddings", "http://localhost:8080/embeddings"},
		{"https://proxy.example.com/openai/v1", "/chat/completions", "https://proxy.example.com/openai/v1/chat/completions"},
		{"http://user:secret@localhost/v1/", "/rerank", "http://user:secret@localhost/v1/rerank"},
		{"", "/rerank", "/rerank"},
	}
	for _, tt := range tests {
		if got := Endpoint(tt.base, tt.path); got != tt.want {
			t.Errorf("Endpoint(%q, %q) = %q, want %q", tt.base, tt.path, got, tt.want)
		}
	}
}

func TestConfigured(t *testing.T) {
	for model, want := range map[string]bool{"": false, "  \t": false, "gpt-4.1-mini": true, " qwen3:8b ": true} {
		if got := (Config{Model: model}).Configured(); got != want {
			t.Errorf("Config{Model: %q}.Configured() = %v, want %v", model, got, want)
		}
	}
}

func TestClientConfig(t *testing.T) {
	hc := &http.Client{Timeout: time.Hour}
	tests := []struct {
		name     string
		cfg      Config
		wantBase string
		wantErr  string
	}{
		{"default base", Config{}, DefaultBaseURL, ""},
		{"base kept as given", Config{BaseURL: "http://localhost:8080/v1/"}, "http://localhost:8080/v1/", ""},
		{"userinfo kept", Config{BaseURL: "http://u:p@localhost/v1"}, "http://u:p@localhost/v1", ""},
		{"own HTTP client", Config{BaseURL: "http://localhost/v1", HTTPClient: hc}, "http://localhost/v1", ""},
		{"bad base", Config{BaseURL: "localhost:8080/v1"}, "", `bad base URL "localhost:8080/v1": want http(s)://host[:port]/path`},
		{"blank base is not empty", Config{BaseURL: " "}, "", `bad base URL " ": want http(s)://host[:port]/path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oc, err := tt.cfg.ClientConfig()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("ClientConfig() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if oc.BaseURL != tt.wantBase {
				t.Errorf("BaseURL = %q, want %q", oc.BaseURL, tt.wantBase)
			}
			d, ok := oc.HTTPClient.(retry.HeaderDoer)
			if !ok || d.Client != tt.cfg.HTTPClient {
				t.Errorf("HTTPClient = %#v, want a retry.HeaderDoer around %p", oc.HTTPClient, tt.cfg.HTTPClient)
			}
			if oc.EmptyMessagesLimit != openai.DefaultConfig("").EmptyMessagesLimit {
				t.Errorf("EmptyMessagesLimit = %d, want go-openai's default", oc.EmptyMessagesLimit)
			}
		})
	}
}

// TestClientConfigRequests sends requests through a go-openai client
// built from ClientConfig: the key (or the base URL's user information)
// is sent, a trailing slash does not double, and the reply headers reach
// the attempt.
func TestClientConfigRequests(t *testing.T) {
	type seen struct{ path, auth string }
	got := make(chan seen, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.URL.Path, r.Header.Get("Authorization")}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Test", "yes")
		json.NewEncoder(w).Encode(map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float32{1}}}})
	}))
	defer hs.Close()
	host := strings.TrimPrefix(hs.URL, "http://")
	tests := []struct {
		name string
		cfg  Config
		want seen
	}{
		{"key", Config{BaseURL: hs.URL + "/v1", APIKey: "sk-test"}, seen{"/v1/embeddings", "Bearer sk-test"}},
		{"no key", Config{BaseURL: hs.URL + "/v1"}, seen{"/v1/embeddings", ""}},
		{"trailing slash", Config{BaseURL: hs.URL + "/v1/"}, seen{"/v1/embeddings", ""}},
		{"no /v1", Config{BaseURL: hs.URL}, seen{"/embeddings", ""}},
		{"userinfo", Config{BaseURL: "http://user:secret@" + host + "/v1"}, seen{"/v1/embeddings", "Basic dXNlcjpzZWNyZXQ="}},
		{"key wins over userinfo", Config{BaseURL: "http://user:secret@" + host + "/v1", APIKey: "k"}, seen{"/v1/embeddings", "Bearer k"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oc, err := tt.cfg.ClientConfig()
			if err != nil {
				t.Fatal(err)
			}
			ctx, header := retry.RecordHeader(context.Background())
			if _, err := openai.NewClientWithConfig(oc).CreateEmbeddings(ctx, openai.EmbeddingRequest{Input: []string{"x"}, Model: "m"}); err != nil {
				t.Fatal(err)
			}
			if s := <-got; s != tt.want {
				t.Errorf("server saw %+v, want %+v", s, tt.want)
			}
			if h := header(); h.Get("X-Test") != "yes" {
				t.Errorf("recorded headers %v, want the reply's", h)
			}
		})
	}
}

func TestHTTPError(t *testing.T) {
	const hint = " (check the model name and the base URL, which usually ends in /v1)"
	tests := []struct {
		name string
		err  HTTPError
		want string
	}{
		{"bad request", HTTPError{StatusCode: 400, Message: "bad messages"}, "server replied 400 Bad Request: bad messages"},
		{"refused key", HTTPError{StatusCode: 401, Message: "Incorrect API key provided: sk-test."},
			"server replied 401 Unauthorized: Incorrect API key provided: sk-test."},
		{"forbidden, no message", HTTPError{StatusCode: 403}, "server replied 403 Forbidden"},
		{"missing model", HTTPError{StatusCode: 404, Message: `model "x" not found`}, `server replied 404 Not Found: model "x" not found` + hint},
		{"wrong path, no message", HTTPError{StatusCode: 404}, "server replied 404 Not Found" + hint},
		{"wrong method", HTTPError{StatusCode: 405, Message: "Method Not Allowed"}, "server replied 405 Method Not Allowed: Method Not Allowed" + hint},
		{"rate limited", HTTPError{StatusCode: 429, Message: "Rate limit reached"}, "server replied 429 Too Many Requests: Rate limit reached"},
		{"not implemented", HTTPError{StatusCode: 501, Message: "no embeddings"}, "server replied 501 Not Implemented: no embeddings"},
		{"status without a text", HTTPError{StatusCode: 529, Message: "Overloaded"}, "server replied 529: Overloaded"},
		{"type and code not shown", HTTPError{StatusCode: 400, Message: "too long", Type: "invalid_request_error", Code: "context_length_exceeded"},
			"server replied 400 Bad Request: too long"},
		{"no status", HTTPError{}, "server replied 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewHTTPError(t *testing.T) {
	r := retry.ParseReply(400, []byte(`{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`))
	want := HTTPError{StatusCode: 400, Message: "too long", Type: "invalid_request_error", Code: "context_length_exceeded"}
	if got := NewHTTPError(r); *got != want {
		t.Errorf("NewHTTPError(%+v) = %+v, want %+v", r, *got, want)
	}
}
