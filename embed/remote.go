package embed

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/miramem/mira/internal/retry"
)

// Retry defaults of the HTTP clients (OpenAI, Reranker).
const (
	defaultMaxRetries = 5
	defaultBackoff    = 500 * time.Millisecond
)

// HTTPError is a reply with a failing HTTP status from an embedding or
// rerank server. Callers can tell a refused key (401, 403) from a missing
// model (404) or a bad request (400) by its StatusCode.
type HTTPError struct {
	StatusCode int    // the HTTP status code
	Message    string // the server's own explanation, possibly empty
}

// Error reads "server replied 401 Unauthorized: <message>", with a hint on
// the usual cause of a 404 or 405.
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

// httpError makes the error of a failing reply.
func httpError(r retry.Reply) error {
	return &HTTPError{StatusCode: r.Status, Message: r.Message}
}

// checkBaseURL accepts an http or https URL with a host, which is what
// both clients append their endpoint path to.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bad base URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("bad base URL %q: want http(s)://host[:port]/path", raw)
	}
	return nil
}

// maxQuote bounds the part of a reply quoted in an error, so that an
// unexpected page does not flood the terminal.
const maxQuote = 300

// clip shortens s to maxQuote bytes on a rune boundary, marking the cut.
func clip(s string) string {
	if len(s) <= maxQuote {
		return s
	}
	n := maxQuote
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
