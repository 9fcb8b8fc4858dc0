package openaicompat

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/miramem/mira/internal/retry"
)

// HTTPError is a reply with a failing HTTP status. Callers tell a refused
// key (401, 403), a missing model (404) and a bad request (400) apart by
// StatusCode.
type HTTPError struct {
	StatusCode int    // the HTTP status code
	Message    string // the server's explanation, possibly empty
	Type       string // the error type of an OpenAI-shaped body, if any
	Code       string // the error code of an OpenAI-shaped body, if any
}

// NewHTTPError returns the error of a failing reply r, as parsed by
// retry.ParseReply or retry.Classify.
func NewHTTPError(r retry.Reply) *HTTPError {
	return &HTTPError{StatusCode: r.Status, Message: r.Message, Type: r.Type, Code: r.Code}
}

// Error reads "server replied 404 Not Found: <message>", with a hint on
// the usual cause of a 404 or 405: a wrong model name or base URL.
func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server replied %d", e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteString(" " + t)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.StatusCode == http.StatusNotFound || e.StatusCode == http.StatusMethodNotAllowed {
		b.WriteString(" (check the model name and the base URL, which usually ends in /v1)")
	}
	return b.String()
}
