package retry

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"
)

func TestRetryableStatus(t *testing.T) {
	for code, want := range map[int]bool{
		200: false, 400: false, 401: false, 403: false, 404: false, 408: false, 422: false,
		429: true, 500: true, 501: false, 502: true, 503: true, 504: true, 529: true,
	} {
		if got := RetryableStatus(code); got != want {
			t.Errorf("RetryableStatus(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
		wantOK bool
	}{
		{"none", http.Header{}, 0, false},
		{"nil", nil, 0, false},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second, true},
		{"other seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second, true},
		{"seconds with space", http.Header{"Retry-After": {" 2 "}}, 2 * time.Second, true},
		{"fraction", http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{"zero", http.Header{"Retry-After": {"0"}}, 0, false},
		{"negative", http.Header{"Retry-After": {"-5"}}, 0, false},
		{"other negative", http.Header{"Retry-After": {"-4"}}, 0, false},
		{"too small to count", http.Header{"Retry-After": {"1e-12"}}, 0, false},
		{"absurd", http.Header{"Retry-After": {"2e9"}}, 0, false},
		{"not a number", http.Header{"Retry-After": {"NaN"}}, 0, false},
		{"infinite", http.Header{"Retry-After": {"Inf"}}, 0, false},
		{"a day", http.Header{"Retry-After": {"86400"}}, 24 * time.Hour, true},
		{"HTTP date", http.Header{"Retry-After": {"Sat, 21 Nov 2026 12:00:30 GMT"}}, 30 * time.Second, true},
		{"formatted date", http.Header{"Retry-After": {now.Add(10 * time.Second).Format(http.TimeFormat)}}, 10 * time.Second, true},
		{"HTTP date in the past", http.Header{"Retry-After": {"Sat, 21 Nov 2026 11:59:00 GMT"}}, 0, false},
		{"formatted date in the past", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, false},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0, false},
		{"milliseconds win", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, 1500 * time.Millisecond, true},
		{"milliseconds win again", http.Header{"Retry-After": {"3"}, "Retry-After-Ms": {"250"}}, 250 * time.Millisecond, true},
		{"fractional milliseconds", http.Header{"Retry-After-Ms": {"0.5"}}, 500 * time.Microsecond, true},
		{"bad milliseconds fall back", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"2"}}, 2 * time.Second, true},
		{"NaN milliseconds fall back", http.Header{"Retry-After-Ms": {"NaN"}, "Retry-After": {"2"}}, 2 * time.Second, true},
		{"zero milliseconds fall back", http.Header{"Retry-After-Ms": {"0"}}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseRetryAfter(tt.header, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseRetryAfter(%v) = %v, %v, want %v, %v", tt.header, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestParseReply(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Reply
	}{
		{"openai", `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			Reply{Message: "Incorrect API key provided", Type: "invalid_request_error", Code: "invalid_api_key"}},
		{"llama.cpp", `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`,
			Reply{Message: "the request exceeds the available context size", Type: "exceed_context_size_error", Code: "400"}},
		{"error string", `{"error":"model not found"}`, Reply{Message: "model not found"}},
		{"vllm", `{"object":"error","message":"too long","type":"BadRequestError","code":400}`,
			Reply{Message: "too long", Type: "BadRequestError", Code: "400"}},
		{"fastapi detail", `{"detail":"Not authenticated"}`, Reply{Message: "Not authenticated"}},
		{"fastapi validation", `{"detail":[{"loc":["body","query"],"msg":"field required"}]}`,
			Reply{Message: `[{"loc":["body","query"],"msg":"field required"}]`}},
		{"message list", `{"error":{"message":["a","b"]}}`, Reply{Message: "a, b"}},
		{"null code", `{"error":{"message":"m","code":null}}`, Reply{Message: "m"}},
		{"plain text", "404 page not found\n", Reply{Message: "404 page not found"}},
		{"html", "<html>\n  <body>Bad   Gateway</body>\n</html>", Reply{Message: "<html> <body>Bad Gateway</body> </html>"}},
		{"empty", "", Reply{}},
		{"long", strings.Repeat("é", 400), Reply{Message: strings.Repeat("é", maxMessage/2) + "…"}},
		{"long message", `{"error":{"message":"` + strings.Repeat("x", 400) + `"}}`, Reply{Message: strings.Repeat("x", maxMessage) + "…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.Status = 400
			if diff := cmp.Diff(tt.want, ParseReply(400, []byte(tt.body))); diff != "" {
				t.Errorf("ParseReply(400, %q) (-want +got):\n%s", tt.body, diff)
			}
		})
	}
}

// testError is the error a client makes of a failing reply.
type testError struct{ Reply }

func (e *testError) Error() string {
	return "server replied " + http.StatusText(e.Status) + ": " + e.Message
}

func wrapTest(r Reply) error { return &testError{r} }

func TestStatusFailure(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		header     http.Header
		wantMarked bool
		wantAfter  time.Duration
	}{
		{"429 with Retry-After", 429, http.Header{"Retry-After": {"7"}}, true, 7 * time.Second},
		{"503 without", 503, nil, true, 0},
		{"400 is final", 400, http.Header{"Retry-After": {"7"}}, false, 0},
		{"501 is final", 501, nil, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := StatusFailure(Reply{Status: tt.status, Message: "m"}, tt.header, wrapTest)
			var te *testError
			if !errors.As(err, &te) || te.Status != tt.status || te.Message != "m" {
				t.Errorf("StatusFailure = %v, want the caller's error of a %d", err, tt.status)
			}
			after, marked := After(err)
			if marked != tt.wantMarked || after != tt.wantAfter {
				t.Errorf("After(StatusFailure) = %v, %v, want %v, %v", after, marked, tt.wantAfter, tt.wantMarked)
			}
		})
	}
}

func TestTransport(t *testing.T) {
	live := context.Background()
	expired, cancel := context.WithTimeout(live, 0)
	defer cancel()
	<-expired.Done()
	dial := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: err}}
	}
	tests := []struct {
		name      string
		err       error
		ctx       context.Context
		transient bool
		wantText  string // the whole error text; "" for err's own
	}{
		{"connection refused", dial(&os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}), live, false, ""},
		{"connection reset", dial(&os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}), live, true, ""},
		{"unknown host", dial(&net.DNSError{Name: "x", IsNotFound: true}), live, false, ""},
		{"DNS server trouble", dial(&net.DNSError{Name: "x", IsTemporary: true}), live, true, ""},
		{"unknown certificate authority", &url.Error{Op: "Post", URL: "https://x", Err: x509.UnknownAuthorityError{}}, live, false, ""},
		{"wrong host name", &url.Error{Op: "Post", URL: "https://x", Err: x509.HostnameError{Host: "x", Certificate: &x509.Certificate{}}}, live, false, ""},
		{"attempt timeout", &url.Error{Op: "Post", URL: "http://x", Err: context.DeadlineExceeded}, expired, true,
			`no reply within 1s: Post "http://x": context deadline exceeded`},
		{"cut reply", io.ErrUnexpectedEOF, live, true, ""},
		{"reset", syscall.ECONNRESET, live, true, ""},
		{"other", errors.New("something else"), live, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Transport(tt.err, tt.ctx, time.Second)
			if _, marked := After(got); marked != tt.transient {
				t.Errorf("Transport(%v) transient = %v, want %v", tt.err, marked, tt.transient)
			}
			want := tt.wantText
			if want == "" {
				want = tt.err.Error()
			}
			if got.Error() != want || !errors.Is(got, tt.err) {
				t.Errorf("Transport(%v) = %v, want %q wrapping the error", tt.err, got, want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	live := context.Background()
	var syn *json.SyntaxError
	if err := json.Unmarshal([]byte("<html>"), new(any)); !errors.As(err, &syn) {
		t.Fatalf("no syntax error to test with: %v", err)
	}
	tests := []struct {
		name       string
		err        error
		header     http.Header
		want       *Reply // the reply given to wrap; nil when wrap is not called
		wantMarked bool
		wantAfter  time.Duration
		wantText   string // a substring of the error, when wrap is not called
	}{
		{
			name:   "unknown body shape kept by go-openai",
			err:    &openai.RequestError{HTTPStatusCode: 503, Body: []byte(`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`)},
			header: http.Header{"Retry-After": {"2"}},
			want:   &Reply{Status: 503, Message: "Loading model", Type: "unavailable_error", Code: "503"},
			// The wait comes from the headers handed in.
			wantMarked: true, wantAfter: 2 * time.Second,
		},
		{
			name: "OpenAI's shape parsed by go-openai",
			err: &openai.APIError{HTTPStatusCode: 400, Message: "maximum context length is 8192 tokens",
				Type: "invalid_request_error", Code: "context_length_exceeded"},
			want: &Reply{Status: 400, Message: "maximum context length is 8192 tokens", Type: "invalid_request_error", Code: "context_length_exceeded"},
		},
		{
			name: "numeric code, long message",
			err:  &openai.APIError{HTTPStatusCode: 429, Message: strings.Repeat("m", 400), Code: 429.0},
			want: &Reply{Status: 429, Message: strings.Repeat("m", maxMessage) + "…", Code: "429"},
			// No headers: the policy picks the wait.
			wantMarked: true,
		},
		{
			name:     "an error inside a stream",
			err:      &openai.APIError{Message: "the model crashed"},
			wantText: "server reported an error: the model crashed",
		},
		{
			name:     "not JSON",
			err:      syn,
			wantText: "unreadable reply (is the base URL an OpenAI-compatible API?)",
		},
		{
			name:       "transport",
			err:        &url.Error{Op: "Post", URL: "http://x", Err: errors.New("connection refused")},
			wantMarked: true, wantText: "connection refused",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *Reply
			err := Classify(tt.err, tt.header, live, time.Second, func(r Reply) error {
				got = &r
				return wrapTest(r)
			})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reply given to wrap (-want +got):\n%s", diff)
			}
			var te *testError
			if tt.want != nil && !errors.As(err, &te) {
				t.Errorf("Classify = %v, want the caller's error", err)
			}
			if tt.wantText != "" && (err == nil || !strings.Contains(err.Error(), tt.wantText)) {
				t.Errorf("Classify = %v, want it to contain %q", err, tt.wantText)
			}
			if after, marked := After(err); marked != tt.wantMarked || after != tt.wantAfter {
				t.Errorf("After(Classify) = %v, %v, want %v, %v", after, marked, tt.wantAfter, tt.wantMarked)
			}
		})
	}
}

// TestHeaderDoerWithGoOpenAI follows a 429's Retry-After through go-openai,
// which keeps no headers in its errors, to the retry decision.
func TestHeaderDoerWithGoOpenAI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
	}))
	defer srv.Close()
	for _, client := range []*http.Client{nil, srv.Client()} {
		oc := openai.DefaultConfig("sk-test")
		oc.BaseURL = srv.URL + "/v1"
		oc.HTTPClient = HeaderDoer{Client: client}
		api := openai.NewClientWithConfig(oc)

		ctx, header := RecordHeader(t.Context())
		if header() != nil {
			t.Errorf("headers before the request: %v", header())
		}
		_, err := api.CreateEmbeddings(ctx, openai.EmbeddingRequest{Input: []string{"a"}, Model: "m"})
		if got := header().Get("Retry-After"); got != "3" {
			t.Errorf("recorded Retry-After = %q, want 3", got)
		}
		err = Classify(err, header(), ctx, time.Second, wrapTest)
		var te *testError
		if !errors.As(err, &te) || te.Status != 429 || te.Code != "rate_limit_exceeded" {
			t.Errorf("Classify = %v, want the caller's error of the 429", err)
		}
		if after, marked := After(err); !marked || after != 3*time.Second {
			t.Errorf("After = %v, %v, want 3s, true", after, marked)
		}

		// A request without a recording context still goes through.
		if _, err := api.CreateEmbeddings(t.Context(), openai.EmbeddingRequest{Input: []string{"a"}, Model: "m"}); err == nil {
			t.Errorf("CreateEmbeddings without a recording context succeeded, want the 429")
		}
	}
}

func TestHeaderDoerNoReply(t *testing.T) {
	ctx, header := RecordHeader(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := HeaderDoer{}.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Skip("something listens on port 1")
	}
	if header() != nil {
		t.Errorf("headers without a reply: %v", header())
	}
}
