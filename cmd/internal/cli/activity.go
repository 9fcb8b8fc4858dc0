package cli

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// activity counts a server's requests under way and when the last one
// ended, for releaseWhenIdle.
type activity struct {
	busy atomic.Int32
	last atomic.Int64 // unix ns; 0: none yet
}

func (a *activity) begin() { a.busy.Add(1) }

func (a *activity) end() {
	a.last.Store(time.Now().UnixNano())
	a.busy.Add(-1)
}

// idle is how long no request has been under way (an hour before the
// first).
func (a *activity) idle() time.Duration {
	if a.busy.Load() > 0 {
		return 0
	}
	last := a.last.Load()
	if last == 0 {
		return time.Hour
	}
	return time.Since(time.Unix(0, last))
}

// ReleaseWhenIdle returns h, its requests counted, and until ctx ends
// gives the memory the process has freed back to the system a second
// after the last request ends, and what it keeps for writes two minutes
// after, as the watcher does (releaseWhenQuiet).
func ReleaseWhenIdle(ctx context.Context, h http.Handler) http.Handler {
	a := new(activity)
	releaseWhenQuiet(ctx, a.idle)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.begin()
		defer a.end()
		h.ServeHTTP(w, r)
	})
}

// releaseMCPWhenIdle counts the MCP server's requests and, until ctx ends,
// gives memory back when they stop (releaseWhenQuiet).
func releaseMCPWhenIdle(ctx context.Context, s *mcp.Server) {
	releaseWhenQuiet(ctx, trackMCP(s).idle)
}

// trackMCP counts the requests s receives.
func trackMCP(s *mcp.Server) *activity {
	a := new(activity)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			a.begin()
			defer a.end()
			return next(ctx, method, req)
		}
	})
	return a
}
