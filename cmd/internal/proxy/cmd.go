// Package proxy is mira-proxy: an OpenAI-compatible chat completions
// endpoint in front of the configured chat server that gives any client
// the memory. Before each call it recalls from the conversation's scope
// and global, plans a block with the planner of mira-context and inserts
// it just before the last user message; it stores the user turn as it
// arrives and the answer once it is complete (TurnWriter batches the
// commits), and after the turn a Curator extracts and reconciles facts,
// rolls the summary and evicts. Everything else passes through as it is.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/cmd/internal/cli"
	"github.com/miramem/mira/cmd/internal/httpguard"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
)

// Cmd is mira-proxy.
type Cmd struct {
	cli.Common
	Listen        string        `short:"l" help:"Address to serve on (host:port). Loopback only unless --token is set." default:"127.0.0.1:7878" placeholder:"ADDR"`
	Token         string        `help:"Bearer token every request must carry (Authorization: Bearer TOKEN), at least 16 characters; required to listen on an address other than loopback. The upstream then gets the configured API key, never this token." env:"MIRA_PROXY_TOKEN" placeholder:"TOKEN"`
	AllowOrigin   []string      `name:"allow-origin" help:"A browser origin (scheme://host[:port]) allowed to call the proxy, for a web client; requests from any other web page are refused. Repeatable." placeholder:"ORIGIN"`
	AllowHost     []string      `name:"allow-host" help:"Another Host (name or name:port) the proxy answers to, besides its address, localhost and loopback, e.g. when it is reached by a name or through a port forward. Repeatable." placeholder:"HOST"`
	BodyTimeout   time.Duration `name:"body-timeout" help:"How long a request's body may take to arrive, plus a second per 64 KiB received; a slower client is cut off. Answers are not bounded by it." default:"30s" placeholder:"DUR"`
	Upstream      string        `help:"API root of the OpenAI-compatible server to forward to, usually ending in /v1 (default: $OPENAI_BASE_URL, else llm.base_url in the config file, else https://api.openai.com/v1). Its key is $OPENAI_API_KEY, else llm.api_key." placeholder:"URL"`
	Model         string        `help:"Model that extracts facts and writes summaries, on the upstream server (default $MIRA_MODEL, else llm.model). Clients choose their own model for their calls." placeholder:"NAME"`
	Conversation  string        `short:"c" help:"Conversation of requests that name none (by the X-Mira-Conversation header or the request's user field): the scope their turns are stored in." env:"MIRA_PROXY_CONVERSATION" default:"proxy" placeholder:"NAME"`
	ContextMode   string        `name:"context-mode" help:"Context mode of the injected block: off, light or heavy (as mira-context)." enum:"off,light,heavy" default:"${context_mode}"`
	ContextBudget int           `name:"context-budget" help:"Token budget of the injected block (default: the mode's)." placeholder:"N"`
	Encoding      string        `short:"e" help:"Tokenizer encoding that counts the budget: o200k_base or cl100k_base." default:"${encoding}"`
	RecallK       int           `name:"recall-k" help:"Memories recalled for each user message (0: none; the summary and pins are still added)." default:"8" placeholder:"N"`
	Log           bool          `help:"Keep each injected plan in $MIRA_HOME/plans/<plan_id>.json, the id the X-Mira-Plan header names." default:"${context_log}" negatable:""`
	Extract       bool          `help:"Extract facts from each user turn and reconcile them with the conversation's memories (needs a model)." default:"true" negatable:""`
	Summarizer    string        `help:"Who writes the rolling summaries: model (the --model) or extractive (offline)." enum:"model,extractive" default:"model"`
	MaxBody       int64         `name:"max-body" help:"Largest request body, in bytes; a larger one is refused with 413." default:"8388608" placeholder:"BYTES"`
	Timeout       time.Duration `help:"Longest an upstream call may take, from request to the end of its answer." default:"10m" placeholder:"DUR"`
	CommitDelay   time.Duration `name:"commit-delay" help:"How long a stored turn waits for others to share its commit." default:"300ms" placeholder:"DUR"`
	Drain         time.Duration `help:"On SIGTERM or SIGINT: how long to let calls in progress finish, and then as long again for the turns' commits and the facts and summaries still due." default:"30s" placeholder:"DUR"`
	Project       string        `help:"The current project, favoured by recall (default: detected from the working directory, or $MIRA_PROJECT)."`
	Verbose       bool          `short:"v" help:"Log each request (conversation, status, the time the proxy added, the plan) and each background problem on stderr."`
}

// Main is the main of mira-proxy.
func Main(args []string, o *cli.IO) int {
	return cli.Main("mira-proxy", "Give any OpenAI-compatible client a memory: serve /v1/chat/completions in front of the configured chat server, recall and inject memory before each call, store the turns, extract facts and roll the summary after it. Everything else passes through.", &Cmd{}, args, o)
}

func (c *Cmd) check() error {
	if err := cli.CheckListen("--listen", c.Listen, c.Token, "MIRA_PROXY_TOKEN"); err != nil {
		return err
	}
	if err := mem.ValidScope(c.Conversation); err != nil {
		return cli.Usagef("--conversation: %v", err)
	}
	switch {
	case c.ContextBudget < 0:
		return cli.Usagef("--context-budget must not be negative")
	case c.RecallK < 0:
		return cli.Usagef("--recall-k must not be negative")
	case c.MaxBody < 1:
		return cli.Usagef("--max-body must be at least 1")
	case c.Timeout <= 0 || c.CommitDelay <= 0 || c.Drain <= 0 || c.BodyTimeout <= 0:
		return cli.Usagef("--timeout, --commit-delay, --drain and --body-timeout must be positive")
	}
	for _, o := range c.AllowOrigin {
		if err := httpguard.CheckOrigin(o); err != nil {
			return cli.Usagef("--allow-origin: %v", err)
		}
	}
	return nil
}

// Run serves until SIGTERM or SIGINT, then drains: calls in progress end,
// their turns are committed, and the facts and summaries due are done.
func (c *Cmd) Run(ctx context.Context, o *cli.IO) error {
	if err := c.check(); err != nil {
		return err
	}
	cli.ServerGC()
	chatCfg, err := mira.ChatConfig(c.Model, o.Config(), o.Getenv)
	if err != nil {
		return err
	}
	upstream := c.Upstream
	if upstream == "" {
		upstream = chatCfg.BaseURL
	}
	if upstream == "" {
		upstream = "https://api.openai.com/v1"
	}
	var chat *llm.Client
	if chatCfg.Configured() {
		chatCfg.BaseURL = upstream
		if chat, err = llm.New(chatCfg); err != nil {
			return cli.Usagef("model: %v", err)
		}
	} else if c.Extract || c.Summarizer == "model" {
		o.Warnf("warning: no model for facts and summaries (set MIRA_MODEL or --model): no facts are extracted, and summaries are extractive")
	}
	logf := func(string, ...any) {}
	if c.Verbose {
		logf = func(format string, args ...any) { o.Warnf(format, args...) }
	}
	listenHost, _, _ := net.SplitHostPort(c.Listen)
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen: %w", err)
	}
	defer ln.Close()
	// Reads do not wait for the watcher: every turn is a commit, and a
	// turn recalled a moment later than it could be is no loss (the
	// client sent it itself, or it is from an earlier chat).
	m, err := c.Common.OpenWarm(ctx, o, "mira-proxy", cli.Project(o, c.Project), true)
	if err != nil {
		return err
	}
	defer m.Close()
	// The index, its vectors and the token encoding are loaded before
	// the first call, which would otherwise wait for them.
	if err := m.Prepare(ctx, c.Encoding); err != nil {
		return err
	}
	writer := m.NewTurnWriter(mira.TurnWriterOptions{
		Delay: c.CommitDelay, Source: "mira-proxy",
		Failed: func(batch []*mem.Entry, err error, final bool) {
			if final {
				o.Warnf("warning: %d turns not stored: %v", len(batch), err)
			} else {
				logf("warning: %d turns not stored yet (trying again): %v", len(batch), err)
			}
		},
	})
	curator := NewCurator(CuratorOptions{Memory: m, Writer: writer, Chat: chat, Extract: c.Extract,
		Extractive: c.Summarizer == "extractive", Logf: func(format string, args ...any) { o.Warnf(format, args...) }})
	srv, err := New(Options{
		Memory: m, Upstream: upstream, APIKey: chatCfg.APIKey, Token: c.Token, Conversation: c.Conversation,
		Mode: c.ContextMode, Budget: c.ContextBudget, Encoding: c.Encoding, RecallK: c.RecallK, Log: c.Log,
		MaxBody: c.MaxBody, Timeout: c.Timeout, Writer: writer, After: curator, Logf: logf,
		ListenHost: listenHost, AllowHosts: c.AllowHost, AllowOrigins: c.AllowOrigin, BodyTimeout: c.BodyTimeout,
	})
	if err != nil {
		return cli.Usagef("%v", err)
	}
	// No ReadTimeout or WriteTimeout: an answer can stream for minutes;
	// the server bounds the time a body may take instead (--body-timeout).
	hs := &http.Server{Handler: cli.ReleaseWhenIdle(ctx, srv), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	o.Warnf("serving http://%s/v1 in front of %s", ln.Addr(), upstream)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	return drain(hs, writer, curator, c.Drain, logf)
}

// drain stops a server as SIGTERM asks: no new calls, the calls in
// progress finish (those still running after d are cut, and their answers
// stored as interrupted), their turns are committed, and the rounds due
// run, for at most d more.
func drain(hs *http.Server, writer *mira.TurnWriter, curator *Curator, d time.Duration, logf func(string, ...any)) error {
	var errs []error
	sctx, cancel := context.WithTimeout(context.Background(), d)
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
		errs = append(errs, fmt.Errorf("calls still in progress after %s were cut: %w", d, err))
	}
	cancel()
	wctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := writer.Flush(wctx); err != nil {
		errs = append(errs, fmt.Errorf("turns not stored: %w", err))
	}
	if err := curator.Close(wctx); err != nil {
		logf("facts and summaries still due are left for the next run: %v", err)
	}
	if err := writer.Close(wctx); err != nil {
		errs = append(errs, fmt.Errorf("turns not stored: %w", err))
	}
	return errors.Join(errs...)
}
