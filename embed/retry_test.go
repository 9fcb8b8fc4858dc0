package embed

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"nil", nil, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"seconds with space", http.Header{"Retry-After": {" 2 "}}, 2 * time.Second},
		{"zero", http.Header{"Retry-After": {"0"}}, 0},
		{"negative", http.Header{"Retry-After": {"-5"}}, 0},
		{"HTTP date", http.Header{"Retry-After": {"Sat, 21 Nov 2026 12:00:30 GMT"}}, 30 * time.Second},
		{"HTTP date in the past", http.Header{"Retry-After": {"Sat, 21 Nov 2026 11:59:00 GMT"}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, 1500 * time.Millisecond},
		{"fractional milliseconds", http.Header{"Retry-After-Ms": {"0.5"}}, 500 * time.Microsecond},
		{"bad milliseconds fall back", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"2"}}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.header, now); got != tt.want {
				t.Errorf("retryAfter(%v) = %v, want %v", tt.header, got, tt.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	p := newRetryPolicy(0, 100*time.Millisecond)
	tests := []struct {
		n      int
		jitter float64
		want   time.Duration
	}{
		{0, 0, 100 * time.Millisecond},
		{1, 0, 200 * time.Millisecond},
		{3, 0, 800 * time.Millisecond},
		{3, 0.5, 600 * time.Millisecond}, // jitter takes up to half off
		{9, 0, maxBackoff},               // 51.2 s is capped
		{70, 0, maxBackoff},              // no overflow
		{70, 0.999999, maxBackoff/2 + 15*time.Microsecond},
	}
	for _, tt := range tests {
		p.jitter = func() float64 { return tt.jitter }
		got := p.backoff(tt.n)
		if d := got - tt.want; d < -time.Microsecond*20 || d > time.Microsecond*20 {
			t.Errorf("backoff(%d) with jitter %v = %v, want %v", tt.n, tt.jitter, got, tt.want)
		}
	}
}

func TestNewRetryPolicy(t *testing.T) {
	tests := []struct {
		retries int
		base    time.Duration
		wantMax int
		want    time.Duration
	}{
		{0, 0, defaultMaxRetries, defaultBackoff},
		{-1, 0, 0, defaultBackoff},
		{3, time.Second, 3, time.Second},
	}
	for _, tt := range tests {
		p := newRetryPolicy(tt.retries, tt.base)
		if p.max != tt.wantMax || p.base != tt.want {
			t.Errorf("newRetryPolicy(%d, %v) = max %d base %v, want %d %v", tt.retries, tt.base, p.max, p.base, tt.wantMax, tt.want)
		}
	}
}

func TestRetryPolicyDo(t *testing.T) {
	final := errors.New("final")
	p := newRetryPolicy(3, time.Millisecond)
	log := &sleepLog{}
	p.sleep = log.sleep
	p.jitter = func() float64 { return 0 }

	calls := 0
	err := p.do(context.Background(), func(context.Context) error {
		calls++
		if calls == 2 {
			return final
		}
		return &transientError{err: errors.New("flaky")}
	})
	if !errors.Is(err, final) || calls != 2 {
		t.Errorf("do = %v after %d calls, want the final error after 2", err, calls)
	}

	// The returned error unwraps to the last failure, not the marker.
	calls = 0
	cause := &HTTPError{StatusCode: 503}
	err = p.do(context.Background(), func(context.Context) error {
		calls++
		return &transientError{err: cause}
	})
	var te *transientError
	if !errors.Is(err, cause) || errors.As(err, &te) || calls != 4 {
		t.Errorf("do = %v after %d calls, want the 503 unmarked after 4", err, calls)
	}
}

func TestServerMessage(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"openai", `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, "Incorrect API key provided"},
		{"error string", `{"error":"model not found"}`, "model not found"},
		{"vllm", `{"object":"error","message":"too long","type":"BadRequestError","code":400}`, "too long"},
		{"fastapi detail", `{"detail":"Not authenticated"}`, "Not authenticated"},
		{"fastapi validation", `{"detail":[{"loc":["body","query"],"msg":"field required"}]}`, `[{"loc":["body","query"],"msg":"field required"}]`},
		{"message list", `{"error":{"message":["a","b"]}}`, "a, b"},
		{"plain text", "404 page not found\n", "404 page not found"},
		{"html", "<html>\n  <body>Bad   Gateway</body>\n</html>", "<html> <body>Bad Gateway</body> </html>"},
		{"empty", "", ""},
		{"long", strings.Repeat("é", 400), strings.Repeat("é", maxMessage/2) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serverMessage([]byte(tt.body)); got != tt.want {
				t.Errorf("serverMessage(%q) = %q, want %q", tt.body, got, tt.want)
			}
		})
	}
}

func TestTransportFailure(t *testing.T) {
	live := context.Background()
	expired, cancel := context.WithTimeout(live, 0)
	defer cancel()
	<-expired.Done()
	tests := []struct {
		name      string
		err       error
		ctx       context.Context
		transient bool
	}{
		{"connection refused", &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, live, true},
		{"unknown host", &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Name: "x", IsNotFound: true}}}, live, false},
		{"attempt timeout", &url.Error{Op: "Post", URL: "http://x", Err: context.DeadlineExceeded}, expired, true},
		{"other", errors.New("something else"), live, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var te *transientError
			if got := errors.As(transportFailure(tt.err, tt.ctx, time.Second), &te); got != tt.transient {
				t.Errorf("transportFailure(%v) transient = %v, want %v", tt.err, got, tt.transient)
			}
		})
	}
}

func TestRetryableStatus(t *testing.T) {
	for code, want := range map[int]bool{
		200: false, 400: false, 401: false, 403: false, 404: false, 408: false, 422: false,
		429: true, 500: true, 501: false, 502: true, 503: true, 504: true, 529: true,
	} {
		if got := retryableStatus(code); got != want {
			t.Errorf("retryableStatus(%d) = %v, want %v", code, got, want)
		}
	}
}
