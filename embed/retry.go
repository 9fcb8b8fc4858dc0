package embed

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
)

// Retry defaults shared by the HTTP clients (OpenAI, Reranker).
const (
	defaultMaxRetries = 5
	defaultBackoff    = 500 * time.Millisecond
	// maxBackoff caps the exponential wait so a long outage is polled
	// rather than waited out in one ever-growing sleep.
	maxBackoff = 30 * time.Second
	// maxRetryAfter is the longest server-requested wait that is honoured.
	// A longer one is usually a spent quota that resets hours later: failing
	// at once with the reason beats a command that hangs.
	maxRetryAfter = 2 * time.Minute
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

// retryableStatus reports whether a reply with this status may succeed if
// sent again: rate limiting and server trouble. 501 is excluded because it
// is a permanent "not supported" (llama.cpp's answer when it was started
// without embeddings or reranking enabled).
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests ||
		(code >= 500 && code != http.StatusNotImplemented)
}

// transientError marks a failed attempt that is worth repeating.
type transientError struct {
	err   error
	after time.Duration // wait the server asked for; 0 when it did not say
}

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// retryPolicy repeats an attempt that failed with a transientError up to
// max more times, waiting base, 2·base, 4·base, … (capped at maxBackoff,
// each reduced by up to half at random so that clients that failed together
// do not retry together) or exactly what the server's Retry-After asked.
type retryPolicy struct {
	max  int
	base time.Duration
	// sleep waits d or until ctx is done. Tests replace it to record the
	// waits without spending them.
	sleep func(ctx context.Context, d time.Duration) error
	// jitter returns a number in [0, 1).
	jitter func() float64
}

// newRetryPolicy applies the defaults: maxRetries 0 means
// defaultMaxRetries and a negative value means no retries; base 0 means
// defaultBackoff.
func newRetryPolicy(maxRetries int, base time.Duration) retryPolicy {
	switch {
	case maxRetries == 0:
		maxRetries = defaultMaxRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	if base <= 0 {
		base = defaultBackoff
	}
	return retryPolicy{max: maxRetries, base: base, sleep: sleepCtx, jitter: rand.Float64}
}

// sleepCtx waits d, or less if ctx is done first.
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

// backoff is the wait before retry number n (0-based) when the server did
// not say how long to wait.
func (p retryPolicy) backoff(n int) time.Duration {
	d := maxBackoff
	if n < 30 && p.base<<n < maxBackoff && p.base<<n > 0 {
		d = p.base << n
	}
	return d - time.Duration(p.jitter()*float64(d)/2)
}

// do runs attempt until it succeeds, fails for good, the retries are spent
// or ctx is done.
func (p retryPolicy) do(ctx context.Context, attempt func(context.Context) error) error {
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
		var te *transientError
		if !errors.As(err, &te) {
			return err
		}
		if n >= p.max {
			return fmt.Errorf("giving up after %d attempts: %w", n+1, te.err)
		}
		wait := p.backoff(n)
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
		if err := p.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w while waiting to retry (last error: %w)", err, te.err)
		}
	}
}

// statusFailure turns a failing HTTP reply into an *HTTPError, marked
// transient when the status is retryable, with the Retry-After wait from
// the reply's headers.
func statusFailure(code int, msg string, h http.Header) error {
	err := &HTTPError{StatusCode: code, Message: msg}
	if !retryableStatus(code) {
		return err
	}
	return &transientError{err: err, after: retryAfter(h, time.Now())}
}

// retryAfter reads the wait a server asks for: Retry-After in seconds or as
// an HTTP date (RFC 9110), or OpenAI's retry-after-ms. It returns 0 when
// there is none or it cannot be read.
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
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 || s > 1e9 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// transportFailure classifies an error that came with no HTTP status:
// connection trouble is transient, and so is an attempt that ran out of its
// own time (attemptCtx) while the caller's context is still live. An
// unknown host or a certificate the client refuses will not fix itself.
func transportFailure(err error, attemptCtx context.Context, timeout time.Duration) error {
	if attemptCtx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		return &transientError{err: fmt.Errorf("no reply within %v: %w", timeout, err)}
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
		return &transientError{err: err}
	}
	return err
}

// maxMessage bounds the part of an error body quoted in an error, so an
// HTML error page does not flood the terminal.
const maxMessage = 300

// serverMessage extracts the explanation from an error reply in the shapes
// the supported servers use: {"error":{"message":…}} (OpenAI, llama.cpp,
// Ollama, Jina), {"error":"…"}, {"message":…} (vLLM, Cohere) and
// {"detail":…} (FastAPI-based proxies). Anything else is quoted as text.
func serverMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var nested struct {
			Message json.RawMessage `json:"message"`
		}
		if json.Unmarshal(v.Error, &nested) == nil && nested.Message != nil {
			if s := jsonText(nested.Message); s != "" {
				return s
			}
		}
		for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
			if s := jsonText(raw); s != "" {
				return s
			}
		}
	}
	return clip(strings.Join(strings.Fields(string(body)), " "))
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
func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
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
