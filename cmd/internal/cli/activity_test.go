package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestActivity: a server's idle time is an hour before its first request,
// none while one is under way, and the time since the last one ended.
func TestActivity(t *testing.T) {
	a := new(activity)
	if d := a.idle(); d < time.Minute {
		t.Fatalf("idle before any request: %s, want long", d)
	}
	a.begin()
	a.begin()
	a.end()
	if d := a.idle(); d != 0 {
		t.Fatalf("idle with a request under way: %s, want 0", d)
	}
	a.end()
	time.Sleep(5 * time.Millisecond)
	if d := a.idle(); d < 5*time.Millisecond || d > time.Minute {
		t.Fatalf("idle after the last request: %s, want the time since it ended", d)
	}
}

// TestReleaseWhenIdleHandler: the handler ReleaseWhenIdle returns answers
// as the one it wraps.
func TestReleaseWhenIdleHandler(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := ReleaseWhenIdle(ctx, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte("tea"))
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/models", nil))
	if rec.Code != http.StatusTeapot || rec.Body.String() != "tea" {
		t.Fatalf("got %d %q through the wrapper, want 418 \"tea\"", rec.Code, rec.Body.String())
	}
}

// TestTrackMCP: the requests an MCP server receives are counted.
func TestTrackMCP(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	a := trackMCP(s)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if a.last.Load() == 0 || a.busy.Load() != 0 {
		t.Fatalf("after a ping: last %d, busy %d; want a time and none under way", a.last.Load(), a.busy.Load())
	}
}
