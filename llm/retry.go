package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

const (
	defaultMaxRetries = 4
	defaultBackoff    = time.Second
	// maxBackoff caps the doubling so a long outage is polled, not slept
	// through.
	maxBackoff = 30 * time.Second
	// maxRetryAfter is the longest wait a server may ask for. A longer one
	// is usually a spent quota: saying so at once beats a command that
	// seems to hang.
	maxRetryAfter = 2 * time.Minute
)

// ErrContextLength is matched (errors.Is) by an *HTTPError with which the
// server refused a prompt longer than the model's context window, so the
// caller can shorten the prompt and try again. OpenAI, llama.cpp, vLLM and
// Ollama word it differently; HTTPError.Is knows their wordings.
var ErrContextLength = errors.New("prompt exceeds the model's context window")

// HTTPError is a reply with a failing HTTP status. Callers tell a refused
// key (401, 403), a missing model (404) and a bad request (400) apart by
// StatusCode.
type HTTPError struct {
	StatusCode int    // the HTTP status code
	Message    string // the server's explanation, possibly empty
	Type       string // the error type of an OpenAI-shaped body, if any
	Code       string // the error code of an OpenAI-shaped body, if any
}

// Error reads "server replied 401 Unauthorized: <message>", with a hint
// for the statuses whose usual cause is the configuration.
func (e *HTTPError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server replied %d", e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteString(" " + t)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		b.WriteString(" (check the API key)")
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		b.WriteString(" (check the model name and the base URL, which usually ends in /v1)")
	}
	return b.String()
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

// retryableStatus reports whether a reply with this status may succeed if
// sent again. 501 is a permanent "not supported".
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || (code >= 500 && code != http.StatusNotImplemented)
}

// transient marks a failed attempt worth repeating.
type transient struct {
	err   error
	after time.Duration // the wait the server asked for, 0 if none
}

func (e *transient) Error() string { return e.err.Error() }
func (e *transient) Unwrap() error { return e.err }

// retrier repeats an attempt that failed with a *transient up to max more
// times, waiting base, 2·base, 4·base, … (capped at maxBackoff, each
// shortened by up to half at random so that clients that failed together
// do not come back together), or what the server's Retry-After asked.
type retrier struct {
	max  int
	base time.Duration
	// sleep waits d unless ctx ends first; tests record the waits instead.
	sleep func(ctx context.Context, d time.Duration) error
	// jitter returns a number in [0, 1).
	jitter func() float64
}

// newRetrier applies the defaults: maxRetries 0 means defaultMaxRetries,
// negative means none; base 0 means defaultBackoff.
func newRetrier(maxRetries int, base time.Duration) retrier {
	switch {
	case maxRetries == 0:
		maxRetries = defaultMaxRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	if base <= 0 {
		base = defaultBackoff
	}
	return retrier{max: maxRetries, base: base, sleep: sleepCtx, jitter: rand.Float64}
}

// sleepCtx waits d, or less if ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backoff is the wait before retry n (from 0) when the server did not say.
func (r retrier) backoff(n int) time.Duration {
	d := maxBackoff
	if n < 20 {
		if b := r.base << n; b > 0 && b < maxBackoff {
			d = b
		}
	}
	return d - time.Duration(r.jitter()*float64(d)/2)
}

// do runs attempt until it succeeds, fails for good, the retries are spent
// or ctx ends.
func (r retrier) do(ctx context.Context, attempt func(context.Context) error) error {
	for n := 0; ; n++ {
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			if errors.Is(err, ctxErr) {
				return err
			}
			return fmt.Errorf("%w (last attempt: %w)", ctxErr, err)
		}
		var te *transient
		if !errors.As(err, &te) {
			return err
		}
		if n >= r.max {
			if n == 0 {
				return te.err
			}
			return fmt.Errorf("giving up after %d attempts: %w", n+1, te.err)
		}
		wait := r.backoff(n)
		if te.after > 0 {
			if te.after > maxRetryAfter {
				return fmt.Errorf("server asks to wait %v before retrying: %w", te.after, te.err)
			}
			wait = te.after
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("next retry in %v would pass the deadline (%w): %w",
				wait.Round(time.Millisecond), context.DeadlineExceeded, te.err)
		}
		if err := r.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w while waiting to retry (last error: %w)", err, te.err)
		}
	}
}

// classify turns an error of go-openai into a final or transient one.
// attempt is the context of the attempt, which has the per-request
// timeout; h holds the headers of the reply, if there was one.
func classify(err error, h http.Header, attempt context.Context, timeout time.Duration) error {
	var (
		reqErr *openai.RequestError
		apiErr *openai.APIError
		syn    *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &reqErr) && reqErr.HTTPStatusCode != 0:
		he := &HTTPError{StatusCode: reqErr.HTTPStatusCode}
		he.Message, he.Type, he.Code = serverMessage(reqErr.Body)
		return statusFailure(he, h)
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode != 0:
		return statusFailure(&HTTPError{
			StatusCode: apiErr.HTTPStatusCode, Message: clip(apiErr.Message),
			Type: apiErr.Type, Code: codeText(apiErr.Code),
		}, h)
	case errors.As(err, &apiErr):
		// An error sent inside a stream, after a 200.
		return fmt.Errorf("server reported an error: %s", clip(apiErr.Message))
	case errors.As(err, &syn), errors.As(err, &typ):
		return fmt.Errorf("unreadable reply (is the base URL an OpenAI-compatible API?): %w", err)
	}
	return transportFailure(err, attempt, timeout)
}

// statusFailure marks he transient when its status is worth retrying,
// with the wait from the reply's headers.
func statusFailure(he *HTTPError, h http.Header) error {
	if !retryableStatus(he.StatusCode) {
		return he
	}
	return &transient{err: he, after: retryAfter(h, time.Now())}
}

// transportFailure classifies an error without an HTTP status. Trouble
// with the connection is transient, and so is an attempt that ran out of
// its own time; an unknown host or a refused certificate will not fix
// itself.
func transportFailure(err error, attempt context.Context, timeout time.Duration) error {
	if errors.Is(attempt.Err(), context.DeadlineExceeded) && errors.Is(err, context.DeadlineExceeded) {
		return &transient{err: fmt.Errorf("no reply within %v: %w", timeout, err)}
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
		return &transient{err: err}
	}
	return err
}

// retryAfter reads the wait a server asks for: OpenAI's retry-after-ms, or
// Retry-After in seconds or as an HTTP date. It returns 0 when there is
// none or it cannot be read.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || s > 1e9 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// maxMessage bounds the part of an error body quoted in an error, so an
// HTML error page does not flood the terminal.
const maxMessage = 300

// serverMessage extracts the message, type and code of an error body in
// the shapes OpenAI-compatible servers use: {"error":{"message",…}}
// (OpenAI, llama.cpp, Ollama), {"error":"…"}, {"message":…} (vLLM) and
// {"detail":…} (FastAPI-based proxies). Anything else is quoted as text.
func serverMessage(body []byte) (msg, typ, code string) {
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
				return s, nested.Type, codeText(nested.Code)
			}
		}
		for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
			if s := jsonText(raw); s != "" {
				return s, v.Type, codeText(v.Code)
			}
		}
	}
	return clip(strings.Join(strings.Fields(string(body)), " ")), "", ""
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

// clip shortens s to maxMessage bytes on a rune boundary.
func clip(s string) string { return clipTo(s, maxMessage) }

// clipTo shortens s to at most n bytes on a rune boundary, marking the cut.
func clipTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// replyHeaderKey is the context key under which an attempt leaves a
// *replyHeader for headerDoer to fill.
type replyHeaderKey struct{}

// replyHeader receives the headers of an attempt's reply.
type replyHeader struct{ h http.Header }

// withReplyHeader returns a context whose request's reply headers are
// recorded in h.
func withReplyHeader(ctx context.Context, h *replyHeader) context.Context {
	return context.WithValue(ctx, replyHeaderKey{}, h)
}

// headerDoer hands the reply's headers back to the attempt that sent the
// request: go-openai's errors keep the status and body of a failed reply
// but not its headers, and Retry-After is a header.
type headerDoer struct{ c *http.Client }

// Do sends req and records the reply's headers.
func (d headerDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.c.Do(req)
	if resp != nil {
		if rh, ok := req.Context().Value(replyHeaderKey{}).(*replyHeader); ok {
			rh.h = resp.Header
		}
	}
	return resp, err
}
