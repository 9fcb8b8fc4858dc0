package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/miramem/mira"
	"github.com/miramem/mira/cmd/internal/cli"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/agentloop/tools"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
	openai "github.com/sashabaranov/go-openai"
)

// Cmd is mira-agent.
type Cmd struct {
	cli.Common
	Prompt         string   `short:"p" help:"Send this message, print the answer and exit. Without it the message is read from stdin when stdin is not a terminal; on a terminal an interactive session starts. A message starting with / runs that slash command." placeholder:"TEXT"`
	Conversation   string   `short:"c" help:"The conversation to continue: the scope its turns are stored in." env:"MIRA_CONVERSATION" default:"${agent_conversation}" placeholder:"NAME"`
	Model          string   `help:"Chat model on the OpenAI-compatible server at OPENAI_BASE_URL (default $MIRA_MODEL, else llm.model in the config file)." placeholder:"NAME"`
	Effort         string   `help:"Reasoning effort: auto (chosen for each message by a simple classifier), none, low, medium or high. Sent only to models that take it." enum:"auto,none,low,medium,high" default:"${agent_effort}"`
	Allow          []string `help:"Let this tool run without asking: write_file, edit_file or bash (repeatable or comma-separated)." sep:"," default:"${agent_allow}" placeholder:"TOOL"`
	Yes            bool     `short:"y" help:"Let every tool run without asking."`
	AllowPath      []string `name:"allow-path" sep:"none" help:"Let the file tools also use this file or directory outside the project, and bash's commands write there (repeatable)." placeholder:"PATH"`
	AllowGitConfig bool     `name:"allow-git-config" negatable:"" help:"Let the tools change the repository's git configuration and hooks (.git/config, .git/hooks…), which git runs commands from outside any sandbox. Off: the file tools do not write in .git, and what bash's commands change there is refused or undone (agent.allow_git_config)." default:"${agent_allow_git_config}"`
	MaxSteps       int      `name:"max-steps" help:"Most model requests for one message before the agent stops and asks for another." default:"${agent_max_steps}" placeholder:"N"`
	BufferTokens   int      `name:"buffer-tokens" help:"Tokens of conversation since the last summary past which the older part is summarized." default:"${agent_buffer_tokens}" placeholder:"N"`
	ContextMode    string   `name:"context-mode" help:"Context mode of the standing context, the recalled memories and the code (map, cards): off, light or heavy (as mira-context); /mode or Shift-Tab at the prompt changes it in a session." enum:"off,light,heavy" default:"${context_mode}"`
	ContextBudget  int      `name:"context-budget" help:"Token budget of the standing context (pins, corrections, goals, tasks, the summary)." default:"${agent_context_budget}" placeholder:"N"`
	RecallK        int      `name:"recall-k" help:"Memories recalled for each message (0: none)." default:"${agent_recall_k}" placeholder:"N"`
	Summarizer     string   `help:"Who writes the conversation's summaries: model (the chat model) or extractive (offline)." enum:"model,extractive" default:"${agent_summarizer}"`
	Extract        bool     `help:"After each message, extract facts from the user's turns with the chat model and reconcile them with the memories of the conversation, the project and global, in the background, as mira-proxy does (agent.extract). A session that ends waits up to 30 s for it; what is not done is taken up by the next session." default:"${agent_extract}" negatable:""`
	PlanLog        bool     `name:"plan-log" help:"Record what the model was shown for each call (plans, memories in and out and why, tokens estimated and reported, tool outcomes) in $MIRA_HOME/plans/calls/, for /context why and mira-context --show-plan; the newest agent.plan_log_mib MiB (default 16) of each conversation are kept (agent.plan_log)." default:"${agent_plan_log}" negatable:""`
	PriceInput     float64  `name:"price-input" help:"Price of prompt tokens that miss the provider's cache, in US dollars per million, for /status and /context stats." env:"MIRA_PRICE_INPUT" placeholder:"USD"`
	PriceCached    float64  `name:"price-cached" help:"Price of cached prompt tokens, in US dollars per million (default: --price-input)." env:"MIRA_PRICE_CACHED" placeholder:"USD"`
	PriceOutput    float64  `name:"price-output" help:"Price of completion tokens, in US dollars per million." env:"MIRA_PRICE_OUTPUT" placeholder:"USD"`
	ArtifactMax    int64    `name:"artifact-max" help:"Most of one long output (a command's, or a file /context add stores) an artifact keeps, in MiB; past it the first part is kept and the model is told so." default:"256" placeholder:"MIB"`
	Args           []string `arg:"" optional:"" passthrough:"" name:"context" help:"context SUBCOMMAND [ARGS]: run a /context subcommand and exit (messages, artifacts, show, stats, add, add-folder, add-search, prune, clear, compact, export, why, pins; see /help). Flags of mira-agent go before context."`
}

// Main is the main of mira-agent.
func Main(args []string, o *cli.IO) int {
	return cli.Main("mira-agent", "A coding agent in the terminal with one never-ending conversation, kept in the Mira store, over any OpenAI-compatible chat API. Its code tool indexes the project at first use, except a home directory, / or a tree over 50,000 files: run mira-code index there to index it anyway.", &Cmd{}, args, o)
}

// agentPolicyTools are the tools the permission policy governs.
var agentPolicyTools = []string{"write_file", "edit_file", "bash"}

// agentSession is a running mira-agent: the agent and what the slash commands
// need around it.
type agentSession struct {
	c       *Cmd
	o       *cli.IO
	root    string // the store's directory
	agent   *agentloop.Agent
	lib     *agentLibrary
	extract *agentExtractor // nil: no extraction
	code    *agentCode
	policy  *tools.Policy
	printer func(agentloop.Event)
	// cancel, while a message is being answered, cancels it (an approval
	// prompt aborted with Ctrl-C does).
	cancel context.CancelFunc
	// ln is the line editor of an interactive session.
	ln          *agentLineEditor
	interactive bool

	// drain bounds endExtraction's wait (agentExtractDrain when zero).
	drain time.Duration

	noticeMu sync.Mutex
	noticed  map[string]bool // the tools' notices already shown
}

func (c *Cmd) Run(ctx context.Context, o *cli.IO) error {
	if err := c.check(); err != nil {
		return err
	}
	if len(c.Args) > 0 {
		return c.runContext(ctx, o)
	}
	text := c.Prompt
	interactive := text == "" && o.InTTY
	if text == "" && !o.InTTY {
		data, err := io.ReadAll(o.In)
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		text = strings.TrimSpace(string(data))
		if text == "" {
			return cli.Usagef("nothing to send: give a message with -p, pipe it on stdin, or run on a terminal for an interactive session")
		}
	}
	slashOnly := !interactive && strings.HasPrefix(strings.TrimSpace(text), "/")

	client, err := mira.NewChatModel(c.Model, o.Config(), o.Getenv)
	if err != nil {
		return err
	}
	if client == nil && !slashOnly {
		return cli.Usagef("no chat model configured: set MIRA_MODEL (or pass --model), and OPENAI_BASE_URL for a server other than OpenAI (e.g. http://localhost:11434/v1 for Ollama)")
	}
	s, err := c.open(ctx, o, client, interactive)
	if err != nil {
		return err
	}
	if interactive {
		// Turns an earlier session left unread are taken up at once.
		s.extract.kick()
		err := s.repl(ctx)
		s.endExtraction(ctx, err == nil)
		return err
	}
	if slashOnly {
		_, err := s.slash(ctx, text)
		return err
	}
	err = s.oneShot(ctx, text)
	s.endExtraction(ctx, ctx.Err() == nil)
	return err
}

// check validates the flags kong cannot.
func (c *Cmd) check() error {
	for _, t := range c.Allow {
		if !slices.Contains(agentPolicyTools, t) {
			return cli.Usagef("--allow: %q needs no permission or is no tool (the tools that ask are %s)", t, strings.Join(agentPolicyTools, ", "))
		}
	}
	if err := agentloop.CheckConversation(c.Conversation); err != nil {
		return asFlag(err)
	}
	c.Conversation = cmp.Or(c.Conversation, agentloop.DefaultConversation)
	// The flags always carry a value, so a zero is the user's and is
	// refused, where agentloop.New would put its default in its place.
	lim := agentloop.Config{MaxSteps: c.MaxSteps, BufferTokens: c.BufferTokens, ContextBudget: c.ContextBudget}
	if err := lim.CheckLimits(); err != nil {
		return asFlag(err)
	}
	switch {
	case c.RecallK < 0:
		return cli.Usagef("--recall-k must not be negative")
	case c.PriceInput < 0 || c.PriceCached < 0 || c.PriceOutput < 0:
		return cli.Usagef("prices must not be negative")
	case c.ArtifactMax < 1 || c.ArtifactMax > 1<<20:
		return cli.Usagef("--artifact-max must be between 1 and 1048576 MiB")
	}
	return nil
}

// agentFlags are the flags that set agentloop.Config's options, by the
// names agentloop's errors give them.
var agentFlags = map[string]string{
	"conversation": "--conversation", "max_steps": "--max-steps",
	"buffer_tokens": "--buffer-tokens", "context_budget": "--context-budget",
}

// asFlag turns agentloop's error about an option of its Config into a
// usage error about the flag that set it; other errors pass unchanged.
func asFlag(err error) error {
	var oe *agentloop.OptionError
	if errors.As(err, &oe) {
		if flag, ok := agentFlags[oe.Option]; ok {
			return cli.Usagef("%s: %v", flag, oe.Err)
		}
	}
	return err
}

// open builds the session: store, project, model, tools, library,
// summarizer and the agent over them.
func (c *Cmd) open(ctx context.Context, o *cli.IO, client *llm.Client, interactive bool) (*agentSession, error) {
	wd, err := o.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	project := mem.DetectProject(wd, o.Getenv("MIRA_PROJECT"))
	// The session keeps the vectors and the model loaded between its
	// searches (two or more a turn, for a session that lasts hours).
	m, err := c.Common.OpenKept(ctx, o, "mira-agent", project.Name)
	if err != nil {
		return nil, err
	}
	s := &agentSession{c: c, o: o, root: m.Root(), interactive: interactive}
	s.lib = &agentLibrary{m: m, project: project, conversation: c.Conversation}
	warn := cli.NewWarner(o)

	var model agentloop.Model = agentNoModel{}
	if client != nil {
		model = client
	}
	allow := map[string]bool{}
	for _, t := range c.Allow {
		allow[t] = true
	}
	canAsk := o.InTTY && o.ErrTTY
	s.policy = &tools.Policy{Allow: allow, Yes: c.Yes, Interactive: canAsk, Approver: &agentApprover{s: s}}
	s.code = newAgentCode(m, project, o.Getenv, warn.Warn)
	reg, err := s.tools(project)
	if err != nil {
		return nil, err
	}
	summarizer := agentSummarizer{m: m}
	if c.Summarizer == "model" && client != nil {
		// A client of its own, so that each summary's commit records
		// what that summary cost.
		if summarizer.client, err = mira.NewChatModel(c.Model, o.Config(), o.Getenv); err != nil {
			return nil, err
		}
	}
	if c.Extract && client != nil {
		// A client of its own, so that each round's commit records what
		// that round cost.
		chat, err := mira.NewChatModel(c.Model, o.Config(), o.Getenv)
		if err != nil {
			return nil, err
		}
		s.extract = newAgentExtractor(m, chat, c.Conversation, o.Warnf)
		s.extract.setProject(project)
	}
	enc := o.Config().Context.Encoding
	cfg := agentloop.Config{
		Store: m, Conversation: c.Conversation, Project: project, Model: model, Tools: reg,
		Library: s.lib, Summarizer: summarizer, Code: s.code,
		Effort: c.Effort, MaxSteps: c.MaxSteps, BufferTokens: c.BufferTokens,
		ContextMode: plan.Mode(c.ContextMode), ContextBudget: c.ContextBudget, RecallK: c.RecallK, Encoding: enc,
		Prices: c.prices(o, model.Model()),
		Warn: func(err error) {
			var pe *mem.ParseError
			if errors.As(err, &pe) {
				warn.Warn("", err) // once per broken file
				return
			}
			o.Warnf("warning: %v", err)
		},
	}
	if c.RecallK == 0 {
		cfg.RecallK = -1
	}
	if c.PlanLog {
		cfg.CallLog = m
	}
	if s.agent, err = agentloop.New(cfg); err != nil {
		return nil, asFlag(err)
	}
	// An interactive session always talks text; --output jsonl applies to
	// one-shot runs.
	if !interactive && !o.TextOutput(c.Output) {
		s.printer = agentJSONPrinter(o.Out)
	} else {
		s.printer = newAgentTextPrinter(o, interactive).event
	}
	return s, nil
}

// tools builds the tool registry for a project.
func (s *agentSession) tools(p mem.Project) (*tools.Registry, error) {
	reg, err := tools.New(tools.Config{
		Root: p.Root, AllowPaths: s.c.AllowPath, Policy: s.policy,
		AllowGitConfig: s.c.AllowGitConfig,
		// The store changes through remember alone, signed as the
		// agent's, even when it lies in the project.
		Protect:   []string{s.root},
		Artifacts: s.artifacts(),
		Limits:    tools.Limits{ArtifactBytes: s.c.artifactBytes()},
		Memory:    s.lib,
		Notice:    s.notice,
	})
	if err != nil {
		return nil, cli.Usagef("project %s: %v", p.Root, err)
	}
	if err := s.registerCode(reg); err != nil {
		return nil, err
	}
	if err := s.registerSuggestPin(reg); err != nil {
		return nil, err
	}
	return reg, nil
}

// notice shows the user what the tools say about how they run (that bash
// is not confined), once a session: /switch builds the tools anew, and
// they would say it again.
func (s *agentSession) notice(msg string) {
	s.noticeMu.Lock()
	defer s.noticeMu.Unlock()
	if s.noticed[msg] {
		return
	}
	if s.noticed == nil {
		s.noticed = map[string]bool{}
	}
	s.noticed[msg] = true
	s.o.Warnf("%s", msg)
}

// oneShot sends one message and prints the answer (or the events).
func (s *agentSession) oneShot(ctx context.Context, text string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.cancel = cancel
	_, err := s.send(ctx, text)
	if err == nil {
		s.showSuggestions()
	}
	if errors.Is(err, agentloop.ErrMaxSteps) {
		return err
	}
	if err != nil {
		return fmt.Errorf("message not answered: %w", err)
	}
	return nil
}

// send answers a message, then has its facts extracted in the background:
// the answer never waits for them. A message the user interrupted is left
// to the next round.
func (s *agentSession) send(ctx context.Context, text string) (*agentloop.Answer, error) {
	ans, err := s.agent.Send(ctx, text, s.printer)
	if ctx.Err() == nil {
		s.extract.kick()
	}
	return ans, err
}

// endExtraction ends the session's extraction. With wait, the rounds due
// may finish, for up to agentExtractDrain (s.drain in tests) or until
// Ctrl-C, SIGTERM or SIGHUP; without (the session was ended by a signal),
// the round under way is cancelled at once. Either way what is not done
// is not lost: its user turns stay unread (no extracted_at), and the next
// session takes them up when it starts.
func (s *agentSession) endExtraction(ctx context.Context, wait bool) {
	x := s.extract
	if x == nil {
		return
	}
	pending := x.pending()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(s.drain, agentExtractDrain))
	defer cancel()
	if wait {
		sctx, stop := signal.NotifyContext(wctx, append([]os.Signal{os.Interrupt}, endSignals...)...)
		defer stop()
		wctx = sctx
		if pending && s.interactive {
			fmt.Fprintln(s.o.Err, "(extracting facts from the last messages; Ctrl-C leaves them to the next session)")
		}
	} else {
		cancel()
	}
	if !x.close(wctx) && pending {
		s.o.Warnf("warning: conversation %s: facts not extracted yet from the last messages; the next session takes them up (or mira-remember --extract --scope %s)", s.c.Conversation, s.c.Conversation)
	}
}

// switchProject moves the session to the project of dir.
func (s *agentSession) switchProject(dir string) (mem.Project, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return mem.Project{}, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return mem.Project{}, fmt.Errorf("switch: %w", err)
	}
	if !fi.IsDir() {
		return mem.Project{}, fmt.Errorf("switch: %s is not a directory", abs)
	}
	p := mem.DetectProject(abs, s.o.Getenv("MIRA_PROJECT"))
	reg, err := s.tools(p)
	if err != nil {
		return mem.Project{}, err
	}
	s.agent.Switch(p, reg)
	s.lib.setProject(p)
	s.extract.setProject(p)
	s.code.switchTo(p)
	return p, nil
}

// agentSummarizer summarizes the conversation as mira-summarize does,
// through the same call: with the chat model or, without one, the
// extractive summarizer, recording the model's tokens in the commit.
type agentSummarizer struct {
	m      *mira.Memory
	client *llm.Client // nil: extractive
}

// Summarize implements agentloop.Summarizer. Only turns are summarized:
// the conversation's scope is the conversation.
func (s agentSummarizer) Summarize(ctx context.Context, scope, through string) error {
	return s.SummarizeView(ctx, scope, through, nil)
}

// SummarizeView implements agentloop.ViewSummarizer: the turns the model
// no longer sees are covered without their text.
func (s agentSummarizer) SummarizeView(ctx context.Context, scope, through string, hidden []string) error {
	_, err := s.m.Summarize(ctx, mira.SummarizeOptions{
		Scopes: []string{scope}, Kinds: []string{mem.KindTurn}, Through: through,
		Chat: s.client, Extractive: s.client == nil, Leave: hidden,
	})
	if err != nil {
		return fmt.Errorf("summarize conversation %s: %w", scope, err)
	}
	return nil
}

// agentNoModel stands in when no chat model is configured: slash commands work
// without one.
type agentNoModel struct{}

func (agentNoModel) Model() string { return "none" }

func (agentNoModel) Stream(context.Context, openai.ChatCompletionRequest, func(llm.Event)) (*llm.Reply, error) {
	return nil, errors.New("no chat model configured: set MIRA_MODEL (or pass --model)")
}

// prices returns what the model's tokens cost: the --price-* flags (or
// MIRA_PRICE_*) when given, else the config file's prices for the model.
func (c *Cmd) prices(o *cli.IO, model string) agentloop.Prices {
	p := agentloop.Prices{Input: c.PriceInput, CachedInput: c.PriceCached, Output: c.PriceOutput}
	if p != (agentloop.Prices{}) {
		return p
	}
	if cp, ok := o.Config().Prices[model]; ok {
		return agentloop.Prices{Input: cp.Input, CachedInput: cp.CachedInput, Output: cp.Output}
	}
	return p
}
