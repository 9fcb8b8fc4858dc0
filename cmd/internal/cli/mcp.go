package cli

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/miramem/mira/cmd/internal/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPCmd is mira-mcp.
type MCPCmd struct {
	Common
	HTTP    string `name:"http" help:"Serve Streamable HTTP on this address (host:port) at /mcp instead of stdio. Loopback only unless --token is set." placeholder:"ADDR"`
	Token   string `help:"Bearer token every HTTP request must carry (Authorization: Bearer TOKEN); required to listen on an address other than loopback." env:"MIRA_MCP_TOKEN" placeholder:"TOKEN"`
	Project string `help:"The current project, favoured by recall and given to new memories (default: detected from the working directory, or $MIRA_PROJECT)."`
	Verbose bool   `short:"v" help:"Log each failure that is not the caller's fault, and the HTTP address, on stderr."`
}

// MCP is the main of mira-mcp.
func MCP(args []string, o *IO) int {
	return Main("mira-mcp", "Serve the memory to MCP hosts (Claude Code, Codex, Cursor, Gemini CLI, ...): tools remember, recall, forget, context, list and pin, and each memory as the resource mira://memory/<id>. Stdio by default; --http for Streamable HTTP.", &MCPCmd{}, args, o)
}

// mcpShutdown bounds how long SIGTERM waits for HTTP calls in progress.
const mcpShutdown = 10 * time.Second

func (c *MCPCmd) run(ctx context.Context, o *IO) error {
	if c.HTTP != "" {
		if err := checkListen(c.HTTP, c.Token); err != nil {
			return err
		}
	}
	serveGC(ctx)
	m, err := c.openWith(ctx, o, "mira-mcp", project(o, c.Project), openOptions{warm: true})
	if err != nil {
		return err
	}
	defer m.Close()
	logf := func(string, ...any) {}
	if c.Verbose {
		logf = func(format string, args ...any) { o.Warnf(format, args...) }
	}
	newServer := func() *mcp.Server {
		s := mcpserver.New(m, mcpserver.Options{Version: version(), Log: logf})
		releaseMCPWhenIdle(ctx, s)
		return s
	}
	if c.HTTP == "" {
		err := newServer().Run(ctx, &mcp.StdioTransport{})
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return nil // SIGTERM or SIGINT: a normal end for a server
		}
		if errors.Is(err, io.EOF) {
			return nil // the host closed our stdin
		}
		return err
	}
	srv := newServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		MaxRequestBodyBytes: 8 << 20,
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", bearer(c.Token, h))
	ln, err := net.Listen("tcp", c.HTTP)
	if err != nil {
		return fmt.Errorf("cannot listen: %w", err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if c.Verbose || o.ErrTTY {
		o.Warnf("serving MCP on http://%s/mcp", ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), mcpShutdown)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// checkListen refuses a non-loopback address without a token: the memory
// holds everything the user told their agents.
func checkListen(addr, token string) error {
	return CheckListen("--http", addr, token, "MIRA_MCP_TOKEN")
}

// CheckListen refuses a server address (given with flag) that is not
// loopback unless a token (from --token or the variable env) guards it.
func CheckListen(flag, addr, token, env string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("%s %s: %v (want host:port, e.g. 127.0.0.1:7777)", flag, addr, err)
	}
	if token != "" {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return usagef("%s %s is not a loopback address: set --token (or %s) so that only your clients can read the memory", flag, addr, env)
}

// bearer requires Authorization: Bearer token on every request when a
// token is set.
func bearer(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mira"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
