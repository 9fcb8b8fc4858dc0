package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/cmd/internal/httpguard"
	"github.com/miramem/mira/cmd/internal/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPCmd is mira-mcp.
type MCPCmd struct {
	Common
	HTTP        string        `name:"http" help:"Serve Streamable HTTP on this address (host:port) at /mcp instead of stdio. Loopback only unless --token is set." placeholder:"ADDR"`
	Token       string        `help:"Bearer token every HTTP request must carry (Authorization: Bearer TOKEN), at least 16 characters; required to listen on an address other than loopback." env:"MIRA_MCP_TOKEN" placeholder:"TOKEN"`
	AllowOrigin []string      `name:"allow-origin" help:"With --http: a browser origin (scheme://host[:port]) allowed to call the server; requests from any other web page are refused. Repeatable." placeholder:"ORIGIN"`
	AllowHost   []string      `name:"allow-host" help:"With --http: another Host (name or name:port) the server answers to, besides its address, localhost and loopback, e.g. when it is reached by a name or through a port forward. Repeatable." placeholder:"HOST"`
	BodyTimeout time.Duration `name:"body-timeout" help:"With --http: how long a request's body may take to arrive, plus a second per 64 KiB received; a slower client is cut off." default:"30s" placeholder:"DUR"`
	Project     string        `help:"The current project, favoured by recall and given to new memories (default: detected from the working directory, or $MIRA_PROJECT)."`
	Verbose     bool          `short:"v" help:"Log each failure that is not the caller's fault, and the HTTP address, on stderr."`
}

// MCP is the main of mira-mcp.
func MCP(args []string, o *IO) int {
	return Main("mira-mcp", "Serve the memory to MCP hosts (Claude Code, Codex, Cursor, Gemini CLI, ...): tools remember, recall, forget, context (with the code map and cards of an indexed project), list and pin, code_search, code_symbol and code_map over the project's code index, and each memory as the resource mira://memory/<id>. Stdio by default; --http for Streamable HTTP.", &MCPCmd{}, args, o)
}

// mcpShutdown bounds how long SIGTERM waits for HTTP calls in progress.
const mcpShutdown = 10 * time.Second

func (c *MCPCmd) run(ctx context.Context, o *IO) error {
	if c.HTTP != "" {
		if err := checkListen(c.HTTP, c.Token); err != nil {
			return err
		}
		for _, o := range c.AllowOrigin {
			if err := httpguard.CheckOrigin(o); err != nil {
				return usagef("--allow-origin: %v", err)
			}
		}
		if c.BodyTimeout <= 0 {
			return usagef("--body-timeout must be positive")
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
	codeRoot := ""
	if wd, err := o.Getwd(); err == nil {
		codeRoot = mira.ProjectRoot(wd)
	}
	newServer := func() *mcp.Server {
		s := mcpserver.New(m, mcpserver.Options{Version: version(), Log: logf, CodeRoot: codeRoot, Getenv: o.Getenv})
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
	host, _, _ := net.SplitHostPort(c.HTTP)
	g, err := httpguard.New(httpguard.Options{Token: c.Token, Realm: "mira", ListenHost: host, AllowHosts: c.AllowHost,
		AllowOrigins: c.AllowOrigin, BodyTimeout: c.BodyTimeout, ExposeHeaders: []string{"Mcp-Session-Id", "Mcp-Protocol-Version"}})
	if err != nil {
		return usagef("%v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", g.Wrap(h))
	ln, err := net.Listen("tcp", c.HTTP)
	if err != nil {
		return fmt.Errorf("cannot listen: %w", err)
	}
	// No ReadTimeout or WriteTimeout: a stream of events lasts as long as
	// the session; the guard bounds the time a body may take instead.
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
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
	if err := httpguard.CheckToken(token); err != nil {
		return usagef("--token (or %s): %v", env, err)
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
