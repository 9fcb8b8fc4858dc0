package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/miramem/mira/internal/text"
)

// RetryableStatus reports whether a reply with this HTTP status may
// succeed if sent again: 429 (rate limited) and the 5xx statuses of an
// overloaded, starting or failing server. 501 is left out: it is a
// permanent "not supported", llama.cpp's answer when it was started
// without embeddings or reranking enabled.
func RetryableStatus(code int) bool {
	return code == http.StatusTooManyRequests ||
		(code >= 500 && code != http.StatusNotImplemented)
}

// ParseRetryAfter reads the wait a server asks for before the next
// request: OpenAI's Retry-After-Ms (milliseconds, possibly fractional),
// which wins, or else Retry-After in seconds (fractions accepted, as some
// proxies send them) or as an HTTP date, measured from now. ok is false
// when h asks for no positive wait or cannot be read; absurd values (over
// about 30 years) count as unreadable.
func ParseRetryAfter(h http.Header, now time.Time) (wait time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		// NaN fails the comparisons, and so is ignored.
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			if d := time.Duration(ms * float64(time.Millisecond)); d > 0 {
				return d, true
			}
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s <= 1e9 {
			if d := time.Duration(s * float64(time.Second)); d > 0 {
				return d, true
			}
		}
		return 0, false
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now), true
	}
	return 0, false
}

// Reply is what a reply with a failing HTTP status said. The clients turn
// it into their own error types.
type Reply struct {
	Status  int    // the HTTP status code
	Message string // the server's explanation, shortened; possibly empty
	Type    string // the error type of an OpenAI-shaped body, if any
	Code    string // the error code of an OpenAI-shaped body, if any
}

// maxMessage bounds the part of an error body quoted in an error, so that
// an HTML error page does not flood the terminal.
const maxMessage = 300

// ParseReply reads the error body of a reply with the given status, in the
// shapes OpenAI-compatible servers use: {"error":{"message",…}} (OpenAI,
// llama.cpp, Ollama, Jina), {"error":"…"}, {"message":…} (vLLM, Cohere)
// and {"detail":…} (FastAPI-based proxies). Anything else is quoted as
// text on one line. The message is cut at 300 bytes.
func ParseReply(status int, body []byte) Reply {
	r := Reply{Status: status}
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    string          `json:"type"`
		Code    any             `json:"code"`
	}
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message json.RawMessage `json:"message"`
			Type    string          `json:"type"`
			Code    any             `json:"code"`
		}
		if json.Unmarshal(v.Error, &nested) == nil && nested.Message != nil {
			if s := jsonText(nested.Message); s != "" {
				r.Message, r.Type, r.Code = s, nested.Type, codeText(nested.Code)
				return r
			}
		}
		for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
			if s := jsonText(raw); s != "" {
				r.Message, r.Type, r.Code = s, v.Type, codeText(v.Code)
				return r
			}
		}
	}
	r.Message = clip(strings.Join(strings.Fields(string(body)), " "))
	return r
}

// codeText renders an error code, which servers send as a string, a number
// or null.
func codeText(c any) string {
	switch c := c.(type) {
	case nil:
		return ""
	case string:
		return c
	case float64:
		return strconv.FormatFloat(c, 'f', -1, 64)
	default:
		return fmt.Sprint(c)
	}
}

// jsonText renders a JSON value as message text: a string as itself, a
// list of strings joined, anything else as compact JSON.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clip(strings.TrimSpace(s))
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return clip(strings.Join(list, ", "))
	}
	return clip(string(raw))
}

// clip shortens s to maxMessage bytes on a rune boundary, marking the cut.
func clip(s string) string { return text.Shorten(s, maxMessage) }

// StatusFailure returns the error of a failing reply r: the caller's own
// error, made by wrap, marked Transient when the status is worth retrying,
// with the wait the reply's headers h ask for.
func StatusFailure(r Reply, h http.Header, wrap func(Reply) error) error {
	err := wrap(r)
	if !RetryableStatus(r.Status) {
		return err
	}
	after, _ := ParseRetryAfter(h, time.Now())
	return Transient(err, after)
}

// Classify turns an error of a go-openai client into a final or Transient
// one. A failing status becomes the caller's error, made by wrap from what
// the reply said (go-openai keeps the body when it is not OpenAI's error
// shape, and the parsed message when it is); an error sent inside a stream
// after a 200 and a reply that is not JSON are final; anything else goes
// to Transport. h holds the reply's headers (see HeaderDoer), attempt is
// the context of the attempt, with its own timeout.
func Classify(err error, h http.Header, attempt context.Context, timeout time.Duration, wrap func(Reply) error) error {
	var (
		reqErr *openai.RequestError
		apiErr *openai.APIError
		syn    *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &reqErr) && reqErr.HTTPStatusCode != 0:
		return StatusFailure(ParseReply(reqErr.HTTPStatusCode, reqErr.Body), h, wrap)
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0:
		return StatusFailure(Reply{
			Status: apiErr.HTTPStatusCode, Message: clip(apiErr.Message),
			Type: apiErr.Type, Code: codeText(apiErr.Code),
		}, h, wrap)
	case errors.As(err, &apiErr):
		return fmt.Errorf("server reported an error: %s", clip(apiErr.Message))
	case errors.As(err, &syn), errors.As(err, &typ):
		return fmt.Errorf("unreadable reply (is the base URL an OpenAI-compatible API?): %w", err)
	}
	return Transport(err, attempt, timeout)
}

// Transport classifies an error that came with no HTTP status. Trouble
// with the connection is Transient, and so is an attempt that ran out of
// its own time (attempt's deadline, timeout, passed) while the caller's
// context lives on. An unknown host, a refused connection and a
// certificate the client refuses will not fix themselves in the seconds
// a retry waits: a server configured on a port where nothing listens (a
// local model server that is not running) fails at once instead of
// holding the command up through every retry. Other errors are returned
// as they are.
func Transport(err error, attempt context.Context, timeout time.Duration) error {
	if errors.Is(attempt.Err(), context.DeadlineExceeded) && errors.Is(err, context.DeadlineExceeded) {
		return Transient(fmt.Errorf("no reply within %v: %w", timeout, err), 0)
	}
	var (
		dnsErr   *net.DNSError
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound,
		refused(err),
		errors.As(err, &verify), errors.As(err, &unknown),
		errors.As(err, &hostname), errors.As(err, &invalid):
		return err
	}
	var (
		urlErr *url.Error
		netErr net.Error
	)
	if errors.As(err, &urlErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) {
		return Transient(err, 0)
	}
	return err
}

// HeaderDoer is the HTTP client to give go-openai (as
// openai.ClientConfig.HTTPClient): it sends requests with Client (nil
// means http.DefaultClient) and hands each reply's headers back to the
// attempt that sent the request, through a context made by RecordHeader.
// go-openai's errors keep the status and body of a failed reply but not
// its headers, and Retry-After is a header.
type HeaderDoer struct {
	Client *http.Client
}

// Do sends req and records the reply's headers when req's context came
// from RecordHeader.
func (d HeaderDoer) Do(req *http.Request) (*http.Response, error) {
	c := d.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if resp != nil {
		if rec, ok := req.Context().Value(headerKey{}).(*headerRecord); ok {
			rec.h = resp.Header
		}
	}
	return resp, err
}

// headerKey is the context key of a *headerRecord.
type headerKey struct{}

// headerRecord receives the headers of a request's reply.
type headerRecord struct{ h http.Header }

// RecordHeader returns a context for one request sent through a
// HeaderDoer, and a function that returns the headers of its reply once
// the request has returned (nil when no reply came).
func RecordHeader(ctx context.Context) (context.Context, func() http.Header) {
	rec := &headerRecord{}
	return context.WithValue(ctx, headerKey{}, rec), func() http.Header { return rec.h }
}
