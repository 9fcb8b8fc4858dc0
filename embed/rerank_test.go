package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/internal/retry"
	"github.com/miramem/mira/internal/retry/retrytest"
)

// rerankDocs are the documents of the recorded rerank replies, in the
// order they were sent.
var rerankDocs = []string{
	"The user prefers tabs over spaces in Go code.",
	"Lunch is at noon on Fridays.",
	"Deploys go through the staging cluster first; production needs a second approval.",
	"Staging credentials rotate every Monday.",
}

const rerankQuery = "how do we deploy to production?"

// rerankCall is one request received by fakeRerankServer.
type rerankCall struct {
	Model     string
	Query     string
	Documents []string
	TopN      int
}

// fakeRerankServer speaks the /v1/rerank API, checking each request.
type fakeRerankServer struct {
	t     *testing.T
	url   string
	reply func(n int, c rerankCall, w http.ResponseWriter, r *http.Request)

	mu    sync.Mutex
	calls []rerankCall
}

func newFakeRerankServer(t *testing.T, wantModel string, reply func(n int, c rerankCall, w http.ResponseWriter, r *http.Request)) *fakeRerankServer {
	t.Helper()
	f := &fakeRerankServer{t: t, reply: reply}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := checkRerankRequest(r, wantModel)
		if err != nil {
			t.Errorf("bad request: %v", err)
			http.Error(w, err.Error(), http.StatusTeapot)
			return
		}
		f.mu.Lock()
		n := len(f.calls)
		f.calls = append(f.calls, c)
		f.mu.Unlock()
		f.reply(n, c, w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fakeRerankServer) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// checkRerankRequest checks the method, path, headers and body of a
// rerank request: {"model"?, "query", "documents", "top_n",
// "return_documents": false}, with the model left out when empty.
func checkRerankRequest(r *http.Request, wantModel string) (rerankCall, error) {
	var c rerankCall
	if r.Method != http.MethodPost || r.URL.Path != "/v1/rerank" {
		return c, fmt.Errorf("%s %s, want POST /v1/rerank", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		return c, fmt.Errorf("Authorization %q", got)
	}
	if got := r.Header.Get("Content-Type"); got != "application/json" {
		return c, fmt.Errorf("Content-Type %q", got)
	}
	var body map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return c, fmt.Errorf("body: %v", err)
	}
	want := map[string]bool{"query": true, "documents": true, "top_n": true, "return_documents": true}
	if wantModel != "" {
		want["model"] = true
	}
	for k := range body {
		if !want[k] {
			return c, fmt.Errorf("unexpected field %q", k)
		}
		delete(want, k)
	}
	if len(want) > 0 {
		return c, fmt.Errorf("missing fields %v", want)
	}
	var returnDocs bool
	for k, dst := range map[string]any{"query": &c.Query, "documents": &c.Documents, "top_n": &c.TopN, "return_documents": &returnDocs} {
		if err := json.Unmarshal(body[k], dst); err != nil {
			return c, fmt.Errorf("%s: %v", k, err)
		}
	}
	if wantModel != "" {
		if err := json.Unmarshal(body["model"], &c.Model); err != nil || c.Model != wantModel {
			return c, fmt.Errorf("model %s, want %q", body["model"], wantModel)
		}
	}
	if c.TopN != len(c.Documents) || returnDocs {
		return c, fmt.Errorf("top_n %d for %d documents, return_documents %v", c.TopN, len(c.Documents), returnDocs)
	}
	return c, nil
}

func newTestReranker(url, model string) (*Reranker, *retrytest.SleepLog) {
	r := NewReranker(RerankConfig{BaseURL: url + "/v1", APIKey: testKey, Model: model, Backoff: testBackoff})
	log := &retrytest.SleepLog{}
	r.retry.Sleep = log.Sleep
	r.retry.Jitter = func() float64 { return 0 }
	return r, log
}

func TestRerankRecordedReplies(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		model string
		want  []float64
	}{
		{"llama.cpp sorted by score", "llamacpp_rerank.json", "",
			[]float64{-2.0029296875, -10.9453125, 4.1318359375, -8.5703125}},
		{"jina with documents echoed", "jina_rerank.json", "jina-reranker-v2-base-multilingual",
			[]float64{0.1120123937726020, 0.0063017075881362, 0.8796516656875610, 0.0517349615693092}},
		{"bare array with score", "tei_rerank.json", "bge-reranker-large",
			[]float64{0.021348473, 0.000038147, 0.99762183, 0.0042617186}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := readTestdata(t, tt.file)
			srv := newFakeRerankServer(t, tt.model, func(_ int, c rerankCall, w http.ResponseWriter, _ *http.Request) {
				if c.Query != rerankQuery || !cmp.Equal(c.Documents, rerankDocs) {
					t.Errorf("request %+v", c)
				}
				writeRaw(w, 200, body)
			})
			r, _ := newTestReranker(srv.url, tt.model)
			got, err := r.Rerank(context.Background(), rerankQuery, rerankDocs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// writeRerank scores each document by its length, replying sorted by
// score as servers do.
func writeRerank(w http.ResponseWriter, c rerankCall) {
	type result struct {
		Index int     `json:"index"`
		Score float64 `json:"relevance_score"`
	}
	res := make([]result, len(c.Documents))
	for i, d := range c.Documents {
		res[i] = result{i, float64(len(d))}
	}
	// Sorted by score, highest first.
	for i := range res {
		for j := i + 1; j < len(res); j++ {
			if res[j].Score > res[i].Score {
				res[i], res[j] = res[j], res[i]
			}
		}
	}
	writeJSON(w, 200, map[string]any{"model": c.Model, "object": "list", "results": res})
}

func lengths(docs []string) []float64 {
	var s []float64
	for _, d := range docs {
		s = append(s, float64(len(d)))
	}
	return s
}

func TestRerankRetries(t *testing.T) {
	tests := []struct {
		name      string
		steps     []step
		wantCalls int
		wantWaits []time.Duration
		wantCode  int // of the HTTPError, 0 for success
		wantErr   string
	}{
		{"429 then 200", []step{{status: 429, header: map[string]string{"Retry-After": "2"}, body: `{"error":{"message":"rate limited"}}`}},
			2, []time.Duration{2 * time.Second}, 0, ""},
		{"500, 503 then 200", []step{{status: 500, body: "oops"}, {status: 503, body: "llamacpp_error_503.json"}},
			3, []time.Duration{testBackoff, 2 * testBackoff}, 0, ""},
		{"dropped connection", []step{{drop: true}}, 2, []time.Duration{testBackoff}, 0, ""},
		{"400 is final", []step{{status: 400, body: `{"detail":"query must not be empty"}`}},
			1, nil, 400, "server replied 400 Bad Request: query must not be empty"},
		{"401 is final", []step{{status: 401, body: `{"detail":"Unauthorized: invalid API key"}`}},
			1, nil, 401, "Unauthorized: invalid API key"},
		{"501 is final", []step{{status: 501, body: `{"error":{"code":501,"message":"This server does not support reranking. Start it with ` + "`--reranking`" + `","type":"not_supported_error"}}`}},
			1, nil, 501, "Start it with `--reranking`"},
		{"gives up", []step{{status: 502}, {status: 502}, {status: 502}, {status: 502}, {status: 502}, {status: 502}},
			6, []time.Duration{testBackoff, 2 * testBackoff, 4 * testBackoff, 8 * testBackoff, 16 * testBackoff}, 502,
			"giving up after 6 attempts: server replied 502 Bad Gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeRerankServer(t, "m", func(n int, c rerankCall, w http.ResponseWriter, _ *http.Request) {
				if !scripted(t, tt.steps, n, w) {
					writeRerank(w, c)
				}
			})
			r, log := newTestReranker(srv.url, "m")
			docs := []string{"a", "ccc", "bb"}
			got, err := r.Rerank(context.Background(), "q", docs)
			if tt.wantCode == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(lengths(docs), got); diff != "" {
					t.Errorf("scores (-want +got):\n%s", diff)
				}
			} else {
				var he *HTTPError
				if !errors.As(err, &he) || he.StatusCode != tt.wantCode || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Rerank error = %v, want HTTPError %d with %q", err, tt.wantCode, tt.wantErr)
				}
			}
			if srv.count() != tt.wantCalls {
				t.Errorf("%d requests, want %d", srv.count(), tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantWaits, log.Waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRerankBadReplies(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{"fewer results", `{"results":[{"index":0,"relevance_score":1},{"index":1,"relevance_score":0.5}]}`, "server scored 2 of 3 documents"},
		{"more results", `{"results":[{"index":0,"score":1},{"index":1,"score":1},{"index":2,"score":1},{"index":2,"score":1}]}`, "server scored 4 of 3 documents"},
		{"duplicate index", `{"results":[{"index":0,"score":1},{"index":1,"score":1},{"index":1,"score":1}]}`, "two scores for index 1"},
		{"index out of range", `[{"index":0,"score":1},{"index":1,"score":1},{"index":3,"score":1}]`, "a score for index 3 of 3 documents"},
		{"no index", `{"results":[{"relevance_score":1},{"index":1,"score":1},{"index":2,"score":1}]}`, "a result without an index"},
		{"no score", `{"results":[{"index":0,"document":{"text":"a"}},{"index":1,"score":1},{"index":2,"score":1}]}`, "no score for index 0"},
		{"no results", `{"object":"list","data":[]}`, `reply has no results: {"object":"list","data":[]}`},
		{"not JSON", `<html>Service temporarily moved</html>`, "unreadable reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFakeRerankServer(t, "m", func(_ int, _ rerankCall, w http.ResponseWriter, _ *http.Request) {
				writeRaw(w, 200, []byte(tt.body))
			})
			r, log := newTestReranker(srv.url, "m")
			_, err := r.Rerank(context.Background(), "q", []string{"a", "b", "c"})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Rerank error = %v, want one containing %q", err, tt.wantErr)
			}
			if srv.count() != 1 || len(log.Waits()) != 0 {
				t.Errorf("a bad reply was retried: %d requests", srv.count())
			}
		})
	}
}

func TestRerankCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := newFakeRerankServer(t, "m", func(_ int, _ rerankCall, w http.ResponseWriter, _ *http.Request) {
		writeRaw(w, 503, []byte(`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`))
	})
	r := NewReranker(RerankConfig{BaseURL: srv.url + "/v1", APIKey: testKey, Model: "m", Backoff: time.Hour})
	r.retry.Sleep = func(ctx context.Context, d time.Duration) error {
		go cancel()
		return retry.Sleep(ctx, d)
	}
	start := time.Now()
	_, err := r.Rerank(ctx, "q", []string{"a"})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second || srv.count() != 1 {
		t.Errorf("Rerank error = %v after %v and %d requests, want context.Canceled at once", err, time.Since(start), srv.count())
	}
}

func TestRerankNoDocuments(t *testing.T) {
	r := NewReranker(RerankConfig{BaseURL: "http://127.0.0.1:1/v1"})
	got, err := r.Rerank(context.Background(), "q", nil)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("Rerank(no docs) = %v, %v, want an empty slice", got, err)
	}
}

func TestRerankBadBaseURL(t *testing.T) {
	for _, base := range []string{"", "localhost:8080/v1", "file:///tmp/x"} {
		r := NewReranker(RerankConfig{BaseURL: base})
		if _, err := r.Rerank(context.Background(), "q", []string{"a"}); err == nil || !strings.Contains(err.Error(), "bad base URL") {
			t.Errorf("Rerank with base %q: error = %v, want a bad base URL", base, err)
		}
	}
}

func TestRerankTrailingSlashAndNoKey(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/rerank" {
			t.Errorf("path %q", r.URL.Path)
		}
		if h, ok := r.Header["Authorization"]; ok {
			t.Errorf("Authorization sent without a key: %q", h)
		}
		writeRaw(w, 200, []byte(`{"results":[{"index":0,"relevance_score":0.5}]}`))
	}))
	defer hs.Close()
	r := NewReranker(RerankConfig{BaseURL: hs.URL + "/v1/"})
	got, err := r.Rerank(context.Background(), "q", []string{"a"})
	if err != nil || !cmp.Equal(got, []float64{0.5}) {
		t.Errorf("Rerank = %v, %v, want [0.5]", got, err)
	}
}
