package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/miramem/mira/internal/retry"
	"github.com/miramem/mira/internal/retry/retrytest"
)

var _ Embedder = (*OpenAI)(nil)

const testKey = "sk-test"

// embedCall is one request received by fakeEmbedServer.
type embedCall struct {
	Model      string
	Input      []string
	Dimensions int
}

// fakeEmbedServer speaks the OpenAI embeddings API. It checks every
// request the way a strict server would and hands it to reply, with n
// counting requests from 0.
type fakeEmbedServer struct {
	t     *testing.T
	url   string
	reply func(n int, c embedCall, w http.ResponseWriter, r *http.Request)

	mu    sync.Mutex
	calls []embedCall
}

func newFakeEmbedServer(t *testing.T, reply func(n int, c embedCall, w http.ResponseWriter, r *http.Request)) *fakeEmbedServer {
	t.Helper()
	f := &fakeEmbedServer{t: t, reply: reply}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fakeEmbedServer) serve(w http.ResponseWriter, r *http.Request) {
	c, err := checkEmbedRequest(r)
	if err != nil {
		f.t.Errorf("bad request: %v", err)
		http.Error(w, err.Error(), http.StatusTeapot)
		return
	}
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	f.reply(n, c, w, r)
}

// checkEmbedRequest checks the method, path, headers and body shape of an
// embeddings request and decodes it.
func checkEmbedRequest(r *http.Request) (embedCall, error) {
	var c embedCall
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		return c, fmt.Errorf("%s %s, want POST /v1/embeddings", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		return c, fmt.Errorf("Authorization %q, want %q", got, "Bearer "+testKey)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		return c, fmt.Errorf("Content-Type %q", got)
	}
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return c, fmt.Errorf("body: %v", err)
	}
	for k := range body {
		if k != "model" && k != "input" && k != "dimensions" {
			return c, fmt.Errorf("unexpected field %q in %v", k, body)
		}
	}
	if err := json.Unmarshal(body["model"], &c.Model); err != nil || c.Model == "" {
		return c, fmt.Errorf("model %s: %v", body["model"], err)
	}
	// The input must be a list even for one text: a bare string is a
	// different request shape.
	if err := json.Unmarshal(body["input"], &c.Input); err != nil || len(c.Input) == 0 {
		return c, fmt.Errorf("input %s: %v", body["input"], err)
	}
	for i, s := range c.Input {
		if strings.TrimSpace(s) == "" {
			return c, fmt.Errorf("blank input %d sent", i)
		}
	}
	if raw, ok := body["dimensions"]; ok {
		if err := json.Unmarshal(raw, &c.Dimensions); err != nil {
			return c, fmt.Errorf("dimensions %s: %v", raw, err)
		}
	}
	return c, nil
}

// callSizes returns the number of inputs of each request received.
func (f *fakeEmbedServer) callSizes() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var sizes []int
	for _, c := range f.calls {
		sizes = append(sizes, len(c.Input))
	}
	return sizes
}

func (f *fakeEmbedServer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// textVector is the fake model: a deterministic vector of the text, not of
// unit length, so the client's normalisation is tested too.
func textVector(s string, dim int) []float32 {
	v := make([]float32, dim)
	for k := range v {
		h := fnv.New32a()
		fmt.Fprintf(h, "%d:%s", k, s)
		v[k] = float32(int(h.Sum32()%2001)-1000) / 100
	}
	return v
}

func unitVector(v []float32) []float32 {
	v = slices.Clone(v)
	normalize(v)
	return v
}

type embeddingItem struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

// writeEmbeddings replies with the fake model's vectors in reverse order,
// as a server that finishes inputs out of order may.
func writeEmbeddings(w http.ResponseWriter, c embedCall, dim int) {
	data := make([]embeddingItem, len(c.Input))
	for i, s := range c.Input {
		data[len(data)-1-i] = embeddingItem{Object: "embedding", Index: i, Embedding: textVector(s, dim)}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   data,
		"model":  c.Model,
		"usage":  map[string]int{"prompt_tokens": 5 * len(c.Input), "total_tokens": 5 * len(c.Input)},
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	writeRaw(w, code, b)
}

func writeRaw(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(body)
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const testBackoff = 10 * time.Millisecond

// newTestOpenAI returns a client of the fake server at url with recorded,
// unjittered retry waits.
func newTestOpenAI(t *testing.T, url string, cfg OpenAIConfig) (*OpenAI, *retrytest.SleepLog) {
	t.Helper()
	cfg.BaseURL = url + "/v1"
	cfg.APIKey = testKey
	if cfg.Model == "" {
		cfg.Model = "text-embedding-3-small"
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = testBackoff
	}
	o, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	log := &retrytest.SleepLog{}
	o.retry.Sleep = log.Sleep
	o.retry.Jitter = func() float64 { return 0 }
	return o, log
}

func numberedTexts(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory %03d: the build uses make", i)
	}
	return texts
}

var approx = cmpopts.EquateApprox(0, 1e-6)

func TestOpenAIRecordedReplies(t *testing.T) {
	tests := []struct {
		name       string
		file       string
		model      string
		dim        int
		requestDim bool
		texts      []string
	}{
		{
			name: "openai with dimensions", file: "openai_embeddings.json",
			model: "text-embedding-3-small", dim: 8, requestDim: true,
			texts: []string{"prefers tabs", "deploys on Fridays are banned", "staging first"},
		},
		{
			name: "llama.cpp learns dimension", file: "llamacpp_embeddings.json",
			model: "all-MiniLM-L6-v2",
			texts: []string{"prefers tabs", "staging first"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := readTestdata(t, tt.file)
			var rec struct{ Data []embeddingItem }
			if err := json.Unmarshal(body, &rec); err != nil {
				t.Fatal(err)
			}
			srv := newFakeEmbedServer(t, func(_ int, c embedCall, w http.ResponseWriter, _ *http.Request) {
				if c.Model != tt.model || len(c.Input) != len(tt.texts) {
					t.Errorf("request for %s with %d inputs, want %s with %d", c.Model, len(c.Input), tt.model, len(tt.texts))
				}
				if tt.requestDim && c.Dimensions != tt.dim {
					t.Errorf("dimensions = %d, want %d", c.Dimensions, tt.dim)
				}
				writeRaw(w, http.StatusOK, body)
			})
			o, _ := newTestOpenAI(t, srv.url, OpenAIConfig{Model: tt.model, Dim: tt.dim, RequestDim: tt.requestDim})
			got, err := o.Embed(context.Background(), tt.texts)
			if err != nil {
				t.Fatal(err)
			}
			want := make([][]float32, len(rec.Data))
			for _, d := range rec.Data {
				want[d.Index] = unitVector(d.Embedding)
			}
			if diff := cmp.Diff(want, got, approx); diff != "" {
				t.Errorf("vectors (-want +got):\n%s", diff)
			}
			dim := len(rec.Data[0].Embedding)
			if o.Dim() != dim {
				t.Errorf("Dim() = %d, want %d", o.Dim(), dim)
			}
			if want := fmt.Sprintf("openai:%s/%d", tt.model, dim); o.ID() != want {
				t.Errorf("ID() = %q, want %q", o.ID(), want)
			}
		})
	}
}

func TestOpenAIBatching(t *testing.T) {
	const dim = 6
	tests := []struct {
		name      string
		texts     []string
		batch     int
		wantSizes []int
	}{
		{"150 at 64", numberedTexts(150), 0, []int{64, 64, 22}},
		{"exact multiple", numberedTexts(8), 4, []int{4, 4}},
		{"one text", numberedTexts(1), 0, []int{1}},
		{"none", nil, 0, nil},
		{
			"blanks are not sent",
			[]string{"", "alpha", "   ", "beta", "\n\t", "gamma", "delta", ""},
			2, []int{2, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeEmbedServer(t, func(_ int, c embedCall, w http.ResponseWriter, _ *http.Request) {
				writeEmbeddings(w, c, dim)
			})
			o, _ := newTestOpenAI(t, srv.url, OpenAIConfig{Dim: dim, BatchSize: tt.batch})
			got, err := o.Embed(context.Background(), tt.texts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantSizes, srv.callSizes()); diff != "" {
				t.Errorf("request sizes (-want +got):\n%s", diff)
			}
			want := make([][]float32, len(tt.texts))
			for i, s := range tt.texts {
				if strings.TrimSpace(s) == "" {
					want[i] = make([]float32, dim)
				} else {
					want[i] = unitVector(textVector(s, dim))
				}
			}
			if diff := cmp.Diff(want, got, approx); diff != "" {
				t.Errorf("vectors (-want +got):\n%s", diff)
			}
			for i, v := range got {
				if n := norm(v); strings.TrimSpace(tt.texts[i]) != "" && math.Abs(n-1) > 1e-6 {
					t.Errorf("|vector %d| = %v, want 1", i, n)
				}
			}
		})
	}
}

// step is one scripted reply of a flaky server; the zero step succeeds.
type step struct {
	status int
	header map[string]string
	body   string // a testdata file name or a literal body
	drop   bool   // close the connection without a reply
}

func (s step) write(t *testing.T, w http.ResponseWriter) bool {
	if s.drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return true
		}
		conn.Close()
		return true
	}
	if s.status == 0 {
		return false
	}
	for k, v := range s.header {
		w.Header().Set(k, v)
	}
	body := []byte(s.body)
	if strings.HasSuffix(s.body, ".json") {
		body = readTestdata(t, s.body)
	}
	writeRaw(w, s.status, body)
	return true
}

// scripted writes reply n from steps and reports whether it did; once the
// steps run out the caller replies with success.
func scripted(t *testing.T, steps []step, n int, w http.ResponseWriter) bool {
	return n < len(steps) && steps[n].write(t, w)
}

func TestOpenAIRetries(t *testing.T) {
	tests := []struct {
		name      string
		steps     []step
		wantWaits []time.Duration
	}{
		{
			"429 then 200 honours Retry-After",
			[]step{{status: 429, header: map[string]string{"Retry-After": "3"}, body: "openai_error_429.json"}},
			[]time.Duration{3 * time.Second},
		},
		{
			"429 with retry-after-ms",
			[]step{{status: 429, header: map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, body: "openai_error_429.json"}},
			[]time.Duration{250 * time.Millisecond},
		},
		{
			"429 without a wait backs off",
			[]step{{status: 429, body: "openai_error_429.json"}},
			[]time.Duration{testBackoff},
		},
		{
			"500, 503 then 200 back off exponentially",
			[]step{
				{status: 500, body: "Internal Server Error"},
				{status: 503, body: "llamacpp_error_503.json"},
			},
			[]time.Duration{testBackoff, 2 * testBackoff},
		},
		{
			"502 from a proxy",
			[]step{{status: 502, body: "<html><body><h1>502 Bad Gateway</h1></body></html>"}},
			[]time.Duration{testBackoff},
		},
		{
			"dropped connection",
			[]step{{drop: true}, {drop: true}},
			[]time.Duration{testBackoff, 2 * testBackoff},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeEmbedServer(t, func(n int, c embedCall, w http.ResponseWriter, _ *http.Request) {
				if !scripted(t, tt.steps, n, w) {
					writeEmbeddings(w, c, 4)
				}
			})
			o, log := newTestOpenAI(t, srv.url, OpenAIConfig{})
			texts := []string{"first", "second"}
			got, err := o.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(unitVector(textVector("second", 4)), got[1], approx); diff != "" {
				t.Errorf("vector 1 (-want +got):\n%s", diff)
			}
			if n := srv.count(); n != len(tt.steps)+1 {
				t.Errorf("%d requests, want %d", n, len(tt.steps)+1)
			}
			if diff := cmp.Diff(tt.wantWaits, log.Waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOpenAINoRetry(t *testing.T) {
	tests := []struct {
		name     string
		step     step
		wantCode int
		wantMsg  string
	}{
		{"400 vLLM context length", step{status: 400, body: "vllm_error_400.json"}, 400,
			"server replied 400 Bad Request: This model's maximum context length is 512 tokens."},
		{"401 OpenAI bad key", step{status: 401, body: "openai_error_401.json"}, 401,
			"server replied 401 Unauthorized: Incorrect API key provided: sk-test."},
		{"404 Ollama unknown model", step{status: 404, body: "ollama_error_404.json"}, 404,
			`model "nomic-embed-txt" not found, try pulling it first (check the model name and the base URL`},
		{"404 wrong path", step{status: 404, body: "404 page not found\n"}, 404,
			"server replied 404 Not Found: 404 page not found (check"},
		{"501 llama.cpp without --embeddings", step{status: 501, body: "llamacpp_error_501.json"}, 501,
			"This server does not support embeddings. Start it with `--embeddings`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeEmbedServer(t, func(n int, c embedCall, w http.ResponseWriter, _ *http.Request) {
				if !scripted(t, []step{tt.step}, n, w) {
					writeEmbeddings(w, c, 4)
				}
			})
			o, log := newTestOpenAI(t, srv.url, OpenAIConfig{})
			_, err := o.Embed(context.Background(), []string{"a text"})
			var he *HTTPError
			if !errors.As(err, &he) || he.StatusCode != tt.wantCode {
				t.Fatalf("Embed error = %v, want an HTTPError %d", err, tt.wantCode)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
			if n := srv.count(); n != 1 || len(log.Waits()) != 0 {
				t.Errorf("%d requests and %d waits, want 1 and 0", n, len(log.Waits()))
			}
		})
	}
}

func TestOpenAIGivesUp(t *testing.T) {
	tests := []struct {
		name      string
		retries   int
		step      step
		wantCalls int
		wantErr   string
	}{
		{"after MaxRetries", 2, step{status: 503, body: "llamacpp_error_503.json"}, 3,
			"giving up after 3 attempts: server replied 503 Service Unavailable: Loading model"},
		{"default is 5", 0, step{status: 500, body: "{}"}, 6, "giving up after 6 attempts"},
		{"negative means never", -1, step{status: 429, body: "openai_error_429.json"}, 1,
			"embed with openai model \"text-embedding-3-small\": server replied 429 Too Many Requests: Rate limit reached"},
		{"Retry-After too long", 5, step{status: 429, header: map[string]string{"Retry-After": "3600"}, body: "openai_error_429.json"}, 1,
			"server asks to wait 1h0m0s before retrying: server replied 429"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeEmbedServer(t, func(_ int, _ embedCall, w http.ResponseWriter, _ *http.Request) {
				tt.step.write(t, w)
			})
			o, _ := newTestOpenAI(t, srv.url, OpenAIConfig{MaxRetries: tt.retries})
			_, err := o.Embed(context.Background(), []string{"a text"})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Embed error = %v, want one containing %q", err, tt.wantErr)
			}
			var he *HTTPError
			if !errors.As(err, &he) || he.StatusCode != tt.step.status {
				t.Errorf("error %v does not wrap HTTPError %d", err, tt.step.status)
			}
			if n := srv.count(); n != tt.wantCalls {
				t.Errorf("%d requests, want %d", n, tt.wantCalls)
			}
		})
	}
}

func TestOpenAIDimensionMismatch(t *testing.T) {
	tests := []struct {
		name    string
		dim     int
		replies []int // vector length of each reply; 0 means mixed lengths
		wantErr string
	}{
		{"configured", 1536, []int{768},
			"embedding dimension mismatch: model text-embedding-3-small returned 768, index expects 1536"},
		{"learned", 0, []int{4, 5},
			"embedding dimension mismatch: model text-embedding-3-small returned 5, earlier replies had 4"},
		{"within a reply", 0, []int{0},
			"embedding dimension mismatch: model text-embedding-3-small returned vectors of 3 and 4 in one reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeEmbedServer(t, func(n int, c embedCall, w http.ResponseWriter, _ *http.Request) {
				if tt.replies[n] > 0 {
					writeEmbeddings(w, c, tt.replies[n])
					return
				}
				writeJSON(w, 200, map[string]any{"data": []embeddingItem{
					{Index: 0, Embedding: []float32{1, 2, 3}},
					{Index: 1, Embedding: []float32{1, 2, 3, 4}},
				}})
			})
			o, _ := newTestOpenAI(t, srv.url, OpenAIConfig{Dim: tt.dim})
			var err error
			for range tt.replies {
				if _, err = o.Embed(context.Background(), []string{"one", "two"}); err != nil {
					break
				}
			}
			if !errors.Is(err, ErrDimensionMismatch) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Embed error = %v, want ErrDimensionMismatch with %q", err, tt.wantErr)
			}
		})
	}
}

func TestOpenAIBadReplies(t *testing.T) {
	items := func(idx ...int) []embeddingItem {
		var d []embeddingItem
		for _, i := range idx {
			d = append(d, embeddingItem{Object: "embedding", Index: i, Embedding: []float32{1, 0, 0}})
		}
		return d
	}
	tests := []struct {
		name    string
		body    any
		wantErr string
	}{
		{"too few vectors", map[string]any{"data": items(0, 1)}, "model text-embedding-3-small returned 2 vectors for 3 texts"},
		{"too many vectors", map[string]any{"data": items(0, 1, 2, 3)}, "returned 4 vectors for 3 texts"},
		{"no data", map[string]any{"object": "list"}, "returned 0 vectors for 3 texts"},
		{"duplicate index", map[string]any{"data": items(0, 1, 1)}, "returned two vectors for index 1"},
		{"index out of range", map[string]any{"data": items(0, 1, 3)}, "returned a vector for index 3 of a batch of 3"},
		{"empty vector", map[string]any{"data": []embeddingItem{{Index: 0}, {Index: 1}, {Index: 2}}}, "returned an empty vector for index 0"},
		{"not JSON", "<html>welcome to the proxy</html>", "unreadable reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeEmbedServer(t, func(_ int, _ embedCall, w http.ResponseWriter, _ *http.Request) {
				if s, ok := tt.body.(string); ok {
					writeRaw(w, 200, []byte(s))
					return
				}
				writeJSON(w, 200, tt.body)
			})
			o, log := newTestOpenAI(t, srv.url, OpenAIConfig{})
			_, err := o.Embed(context.Background(), []string{"one", "two", "three"})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Embed error = %v, want one containing %q", err, tt.wantErr)
			}
			if srv.count() != 1 || len(log.Waits()) != 0 {
				t.Errorf("a bad reply was retried: %d requests", srv.count())
			}
		})
	}
}

func TestOpenAICancel(t *testing.T) {
	t.Run("during backoff", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		srv := newFakeEmbedServer(t, func(_ int, _ embedCall, w http.ResponseWriter, _ *http.Request) {
			writeRaw(w, 503, readTestdata(t, "llamacpp_error_503.json"))
		})
		o, err := NewOpenAI(OpenAIConfig{BaseURL: srv.url + "/v1", APIKey: testKey, Model: "m", Backoff: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		// The real sleep of about an hour, cancelled once it has begun.
		o.retry.Sleep = func(ctx context.Context, d time.Duration) error {
			go cancel()
			return retry.Sleep(ctx, d)
		}
		start := time.Now()
		_, err = o.Embed(ctx, []string{"a text"})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Embed error = %v, want context.Canceled", err)
		}
		if !strings.Contains(err.Error(), "Loading model") {
			t.Errorf("error %q does not name the last failure", err)
		}
		if d := time.Since(start); d > 10*time.Second || srv.count() != 1 {
			t.Errorf("returned after %v and %d requests", d, srv.count())
		}
	})
	t.Run("during a request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		srv := newFakeEmbedServer(t, func(_ int, _ embedCall, _ http.ResponseWriter, r *http.Request) {
			cancel()
			<-r.Context().Done()
		})
		o, log := newTestOpenAI(t, srv.url, OpenAIConfig{})
		_, err := o.Embed(ctx, []string{"a text"})
		if !errors.Is(err, context.Canceled) || srv.count() != 1 || len(log.Waits()) != 0 {
			t.Errorf("Embed error = %v after %d requests, want context.Canceled after 1", err, srv.count())
		}
	})
	t.Run("before the call", func(t *testing.T) {
		srv := newFakeEmbedServer(t, func(_ int, c embedCall, w http.ResponseWriter, _ *http.Request) { writeEmbeddings(w, c, 4) })
		o, _ := newTestOpenAI(t, srv.url, OpenAIConfig{Dim: 4})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := o.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) || srv.count() != 0 {
			t.Errorf("Embed error = %v after %d requests, want context.Canceled after 0", err, srv.count())
		}
	})
	t.Run("wait past the deadline", func(t *testing.T) {
		srv := newFakeEmbedServer(t, func(_ int, _ embedCall, w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "60")
			writeRaw(w, 429, readTestdata(t, "openai_error_429.json"))
		})
		o, log := newTestOpenAI(t, srv.url, OpenAIConfig{})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := o.Embed(ctx, []string{"a"})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "next retry in 1m0s would pass the deadline") {
			t.Errorf("Embed error = %v, want the deadline named", err)
		}
		if srv.count() != 1 || len(log.Waits()) != 0 {
			t.Errorf("%d requests and waits %v, want 1 and none", srv.count(), log.Waits())
		}
	})
}

// TestOpenAIAttemptTimeout: an attempt that gets no reply within Timeout
// is abandoned and retried once. The requests go through hangTransport,
// not a socket: over one, an attempt could also lose its 20ms to a slow
// dial or a late server goroutine on a loaded machine, and the test would
// see one timeout more than it made.
func TestOpenAIAttemptTimeout(t *testing.T) {
	srv := newFakeEmbedServer(t, func(_ int, c embedCall, w http.ResponseWriter, _ *http.Request) { writeEmbeddings(w, c, 4) })
	tr := &hangTransport{hang: 1, serve: srv.serve}
	o, log := newTestOpenAI(t, srv.url, OpenAIConfig{Timeout: 20 * time.Millisecond, HTTPClient: &http.Client{Transport: tr}})
	if _, err := o.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if tr.count() != 2 || srv.count() != 1 || len(log.Waits()) != 1 {
		t.Errorf("%d requests, %d answered and waits %v, want 2, 1 and one", tr.count(), srv.count(), log.Waits())
	}

	// Without retries the timeout is reported as such.
	tr2 := &hangTransport{hang: 1 << 30, serve: srv.serve}
	o2, _ := newTestOpenAI(t, srv.url, OpenAIConfig{Timeout: 20 * time.Millisecond, MaxRetries: -1, HTTPClient: &http.Client{Transport: tr2}})
	_, err := o2.Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "no reply within 20ms") {
		t.Errorf("Embed error = %v, want a timeout", err)
	}
}

// hangTransport answers in this process: its first hang requests wait
// until their context ends (the client gives up on the attempt), and the
// others go to serve at once. No clock decides which attempt hangs.
type hangTransport struct {
	hang  int
	serve http.HandlerFunc

	mu sync.Mutex
	n  int
}

func (h *hangTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.n++
	hang := h.n <= h.hang
	h.mu.Unlock()
	if hang {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	rec := httptest.NewRecorder()
	h.serve(rec, r)
	return rec.Result(), nil
}

func (h *hangTransport) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

func TestOpenAIBlanksAndProbe(t *testing.T) {
	srv := newFakeEmbedServer(t, func(_ int, c embedCall, w http.ResponseWriter, _ *http.Request) { writeEmbeddings(w, c, 5) })
	o, _ := newTestOpenAI(t, srv.url, OpenAIConfig{})
	if o.Dim() != 0 || o.ID() != "openai:text-embedding-3-small/0" {
		t.Errorf("before any reply: Dim() = %d, ID() = %q", o.Dim(), o.ID())
	}
	// Only blanks and no known dimension: one probe to learn the length.
	got, err := o.Embed(context.Background(), []string{"", " "})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float32{make([]float32, 5), make([]float32, 5)}, got); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	if srv.count() != 1 || o.ID() != "openai:text-embedding-3-small/5" {
		t.Errorf("%d requests, ID() = %q, want 1 and .../5", srv.count(), o.ID())
	}
	// Known now: blanks cost nothing, and neither does Probe.
	if _, err := o.Embed(context.Background(), []string{"", "words", ""}); err != nil {
		t.Fatal(err)
	}
	if srv.count() != 2 {
		t.Errorf("%d requests, want 2", srv.count())
	}
	if _, err := o.Embed(context.Background(), []string{"\t"}); err != nil {
		t.Fatal(err)
	}
	if d, err := o.Probe(context.Background()); err != nil || d != 5 {
		t.Errorf("Probe() = %d, %v, want 5", d, err)
	}
	if srv.count() != 2 {
		t.Errorf("%d requests, want 2", srv.count())
	}
}

func TestOpenAIProbeError(t *testing.T) {
	srv := newFakeEmbedServer(t, func(_ int, _ embedCall, w http.ResponseWriter, _ *http.Request) {
		writeRaw(w, 401, readTestdata(t, "openai_error_401.json"))
	})
	o, _ := newTestOpenAI(t, srv.url, OpenAIConfig{})
	_, err := o.Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), `probe openai model "text-embedding-3-small": server replied 401`) {
		t.Errorf("Probe error = %v", err)
	}
}

func TestOpenAIConcurrent(t *testing.T) {
	srv := newFakeEmbedServer(t, func(_ int, c embedCall, w http.ResponseWriter, _ *http.Request) { writeEmbeddings(w, c, 3) })
	o, _ := newTestOpenAI(t, srv.url, OpenAIConfig{BatchSize: 2})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			texts := numberedTexts(5 + g)
			got, err := o.Embed(context.Background(), texts)
			if err != nil {
				t.Error(err)
				return
			}
			for i, s := range texts {
				if diff := cmp.Diff(unitVector(textVector(s, 3)), got[i], approx); diff != "" {
					t.Errorf("goroutine %d vector %d (-want +got):\n%s", g, i, diff)
				}
			}
		})
	}
	wg.Wait()
}

func TestNewOpenAI(t *testing.T) {
	tests := []struct {
		name    string
		cfg     OpenAIConfig
		wantID  string
		wantErr string
	}{
		{"defaults", OpenAIConfig{Model: "text-embedding-3-small", Dim: 1536}, "openai:text-embedding-3-small/1536", ""},
		{"other dim", OpenAIConfig{Model: "text-embedding-3-small", Dim: 512, RequestDim: true}, "openai:text-embedding-3-small/512", ""},
		{"host is not part of the ID", OpenAIConfig{BaseURL: "http://gpu-box:11434/v1", Model: "nomic-embed-text", Dim: 768}, "openai:nomic-embed-text/768", ""},
		{"model with a slash", OpenAIConfig{BaseURL: "http://127.0.0.1:8000/v1", Model: "BAAI/bge-m3", Dim: 1024}, "openai:BAAI/bge-m3/1024", ""},
		{"no model", OpenAIConfig{}, "", "no model name"},
		{"negative dim", OpenAIConfig{Model: "m", Dim: -1}, "", "negative dimension"},
		{"RequestDim without Dim", OpenAIConfig{Model: "m", RequestDim: true}, "", "RequestDim needs a dimension"},
		{"no scheme", OpenAIConfig{Model: "m", BaseURL: "localhost:11434/v1"}, "", "bad base URL"},
		{"ftp", OpenAIConfig{Model: "m", BaseURL: "ftp://example.com/v1"}, "", "bad base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := NewOpenAI(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("NewOpenAI error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.ID() != tt.wantID {
				t.Errorf("ID() = %q, want %q", o.ID(), tt.wantID)
			}
		})
	}
}

func TestOpenAINoKey(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := r.Header["Authorization"]; ok {
			t.Errorf("Authorization sent without a key: %q", h)
		}
		writeJSON(w, 200, map[string]any{"data": []embeddingItem{{Index: 0, Embedding: []float32{3, 4}}}})
	}))
	defer hs.Close()
	o, err := NewOpenAI(OpenAIConfig{BaseURL: hs.URL + "/v1/", Model: "nomic-embed-text"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := o.Embed(context.Background(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float32{{0.6, 0.8}}, got, approx); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
}

func TestOpenAIBlanksLearnWithoutProbe(t *testing.T) {
	srv := newFakeEmbedServer(t, func(_ int, c embedCall, w http.ResponseWriter, _ *http.Request) { writeEmbeddings(w, c, 3) })
	o, _ := newTestOpenAI(t, srv.url, OpenAIConfig{})
	got, err := o.Embed(context.Background(), []string{"", "words", " "})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{0, 0, 0}, unitVector(textVector("words", 3)), {0, 0, 0}}
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1}, srv.callSizes()); diff != "" {
		t.Errorf("request sizes (-want +got):\n%s", diff)
	}
}

// BenchmarkOpenAIEmbed measures the client's own cost (encoding, decoding,
// reordering, normalising) against a local server replying with
// precomputed 768-dimension vectors.
func BenchmarkOpenAIEmbed(b *testing.B) {
	const dim, n = 768, 256
	texts := numberedTexts(n)
	replies := map[string][]byte{}
	for lo := 0; lo < n; lo += defaultBatchSize {
		c := embedCall{Model: "nomic-embed-text", Input: texts[lo:min(lo+defaultBatchSize, n)]}
		rec := httptest.NewRecorder()
		writeEmbeddings(rec, c, dim)
		replies[c.Input[0]] = rec.Body.Bytes()
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			b.Error(err)
		}
		writeRaw(w, 200, replies[req.Input[0]])
	}))
	defer hs.Close()
	o, err := NewOpenAI(OpenAIConfig{BaseURL: hs.URL + "/v1", Model: "nomic-embed-text", Dim: dim})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := o.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/text")
}
