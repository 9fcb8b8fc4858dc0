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
// after the last request ends, as the watcher does (releaseWhenIdle).
func ReleaseWhenIdle(ctx context.Context, h http.Handler) http.Handler {
	a := new(activity)
	go releaseWhenIdle(ctx, a.idle, releaseIdle, releaseMemory)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.begin()
		defer a.end()
		h.ServeHTTP(w, r)
	})
}

// releaseMCPWhenIdle counts the MCP server's requests and, until ctx ends,
// gives freed memory back a second after the last one.
func releaseMCPWhenIdle(ctx context.Context, s *mcp.Server) {
	go releaseWhenIdle(ctx, trackMCP(s).idle, releaseIdle, releaseMemory)
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
