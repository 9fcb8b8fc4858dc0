package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/miramem/mira/internal/openaicompat"
	"github.com/miramem/mira/internal/retry"
)

// ErrContextLength is matched (errors.Is) by an *HTTPError with which the
// server refused a prompt longer than the model's context window, so the
// caller can shorten the prompt and try again. OpenAI, llama.cpp, vLLM and
// Ollama word it differently; HTTPError.Is knows their wordings.
var ErrContextLength = errors.New("prompt exceeds the model's context window")

// HTTPError is a reply with a failing HTTP status. Callers tell a refused
// key (401, 403), a missing model (404) and a bad request (400) apart by
// StatusCode; Message, Type and Code are what the server said.
type HTTPError struct {
	openaicompat.HTTPError
}

// Error reads "server replied 401 Unauthorized: <message>", with a hint
// for the statuses whose usual cause is the configuration.
func (e *HTTPError) Error() string {
	msg := e.HTTPError.Error()
	if e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden {
		msg += " (check the API key)"
	}
	return msg
}

// Is reports whether e is the refusal of an over-long prompt when target
// is ErrContextLength.
func (e *HTTPError) Is(target error) bool {
	if target != ErrContextLength {
		return false
	}
	if e.StatusCode != http.StatusBadRequest && e.StatusCode != http.StatusRequestEntityTooLarge {
		return false
	}
	if e.Code == "context_length_exceeded" || e.Type == "exceed_context_size_error" {
		return true
	}
	msg := strings.ToLower(e.Message)
	for _, w := range []string{"context length", "context_length", "context window", "context size", "maximum context"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// mentions reports whether a 400 or 422 reply names one of words: how a
// server says it does not support a request parameter.
func mentions(err error, words ...string) bool {
	var he *HTTPError
	if !errors.As(err, &he) || (he.StatusCode != http.StatusBadRequest && he.StatusCode != http.StatusUnprocessableEntity) {
		return false
	}
	msg := strings.ToLower(he.Message + " " + he.Code)
	for _, w := range words {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// httpError makes the error of a failing reply.
func httpError(r retry.Reply) error {
	return &HTTPError{*openaicompat.NewHTTPError(r)}
}

// classify turns an error of go-openai into a final or transient one.
// attempt is the context of the attempt, which has the per-request
// timeout; h holds the headers of the reply, if there was one.
func classify(err error, h http.Header, attempt context.Context, timeout time.Duration) error {
	return retry.Classify(err, h, attempt, timeout, httpError)
}
