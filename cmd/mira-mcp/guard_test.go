package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/miramem/mira/cmd/internal/httpguard/httpguardtest"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`

// post sends an MCP initialize to endpoint with headers h (a "Host"
// entry sets the Host) and returns the status and CORS header.
func post(t *testing.T, endpoint string, h ...string) (int, http.Header) {
	t.Helper()
	h = append([]string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}, h...)
	resp := httpguardtest.Do(t, "POST", endpoint, initialize, h...)
	return resp.StatusCode, resp.Header
}

// TestHTTPRefusesWebPages: a page in the user's browser cannot use the
// server: not from its origin, not through a name rebound to loopback.
func TestHTTPRefusesWebPages(t *testing.T) {
	home := newStore(t)
	endpoint, _ := httpServer(t, home)
	u, _ := url.Parse(endpoint)
	_, port, _ := net.SplitHostPort(u.Host)
	for _, c := range []struct {
		name string
		h    []string
		want int
	}{
		{"a fetch from another origin", []string{"Origin", "https://evil.example"}, 403},
		{"a fetch from a page on loopback", []string{"Origin", "http://localhost:" + port}, 403},
		{"an opaque origin", []string{"Origin", "null"}, 403},
		{"a cross-site request without Origin", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"a rebound host name", []string{"Host", "evil.example:" + port}, 403},
		{"loopback on another port", []string{"Host", "localhost:1"}, 403},
		{"a text/plain form", []string{"Content-Type", "text/plain"}, 415},
		{"an MCP client", nil, 200},
		{"an MCP client by name", []string{"Host", "localhost:" + port}, 200},
	} {
		if got, _ := post(t, endpoint, c.h...); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// TestHTTPAllowOrigin: an origin the user allowed gets through, with the
// headers its browser needs.
func TestHTTPAllowOrigin(t *testing.T) {
	home := newStore(t)
	endpoint, _ := httpServer(t, home, "--allow-origin", "https://app.example")
	code, h := post(t, endpoint, "Origin", "https://app.example")
	if code != 200 || h.Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("allowed origin: %d %v", code, h)
	}
	if code, _ := post(t, endpoint, "Origin", "https://other.example"); code != 403 {
		t.Errorf("another origin: %d, want 403", code)
	}
}

// TestHTTPSlowBody: a client that trickles its body is cut off.
func TestHTTPSlowBody(t *testing.T) {
	home := newStore(t)
	endpoint, _ := httpServer(t, home, "--body-timeout", "300ms")
	u, _ := url.Parse(endpoint)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+u.Host+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{")
	conn.SetReadDeadline(time.Now().Add(20 * time.Second)) // the test's own bound
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, conn)
		done <- err
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the connection of a trickled body is still open")
			}
			return
		case <-tick.C:
			conn.Write([]byte(" "))
		}
	}
}

// TestHTTPWeakToken: a token too short to guard the memory, or one of
// whitespace, is refused at start.
func TestHTTPWeakToken(t *testing.T) {
	home := newStore(t)
	for _, tok := range []string{"short", "                    ", "fifteen-chars-x"} {
		// A server that starts is killed: it should not have started.
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--http", "127.0.0.1:0", "--token", tok)
		cmd.Env = env(home)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "token") {
			t.Errorf("--token %q: %v\n%s", tok, err, out)
		}
	}
}
