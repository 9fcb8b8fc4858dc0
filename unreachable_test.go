package mira

import (
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/miramem/mira/mem"
)

// countingTransport counts the requests sent through the default
// transport, which the rerank, embeddings and chat clients use.
type countingTransport struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// closedURL is the base URL of a port that listened a moment ago and
// refuses connections now, as a configured server that is not running
// does.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// A reranker configured at a port where nothing listens is tried once,
// not retried as if the refusal were passing: the recall answers without
// it and says so once.
func TestRecallRerankerRefused(t *testing.T) {
	ct := &countingTransport{next: http.DefaultTransport}
	http.DefaultTransport = ct
	t.Cleanup(func() { http.DefaultTransport = ct.next })

	cfg := &Config{}
	cfg.Rerank.BaseURL = closedURL(t)
	cfg.Rerank.Model = "bge-reranker-v2-m3"
	var warnings []string
	m, err := Open(t.Context(), Options{Home: filepath.Join(t.TempDir(), "home"), Config: cfg,
		Getenv: func(string) string { return "" },
		Warn:   func(path string, err error) { warnings = append(warnings, path+": "+err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := t.Context()
	if _, err := m.Remember(ctx, []*mem.Entry{{Body: "the cache is Redis"}, {Body: "the database is PostgreSQL"}}, RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	recs, err := m.Recall(ctx, Query{Text: "which cache"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Error("Recall found nothing without the reranker")
	}
	if n := ct.n.Load(); n != 1 {
		t.Errorf("the refused reranker was tried %d times, want 1", n)
	}
	if len(warnings) != 1 {
		t.Errorf("warnings = %q, want one", warnings)
	}
}
