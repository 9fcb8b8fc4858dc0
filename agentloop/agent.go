package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/miramem/mira/agentloop/tools"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
	"github.com/miramem/mira/summarize"
	openai "github.com/sashabaranov/go-openai"
)

// Model is the chat model the agent talks to. *llm.Client satisfies it.
type Model interface {
	// Model returns the model's name.
	Model() string
	// Stream sends a chat request and streams the reply, as
	// (*llm.Client).Stream does.
	Stream(ctx context.Context, req openai.ChatCompletionRequest, on func(llm.Event)) (*llm.Reply, error)
}

// Toolbox holds the tools offered to the model. *tools.Registry satisfies
// it.
type Toolbox interface {
	// Definitions returns the tools' schemas, in a stable order.
	Definitions() []openai.Tool
	// Call runs one tool call; see (*tools.Registry).Call.
	Call(ctx context.Context, name string, args json.RawMessage) (tools.Result, error)
}

// Library is the memory store as the agent reads it besides the
// conversation.
type Library interface {
	// Standing returns the live entries of the given scopes that belong
	// in every context: pinned ones, and open corrections, goals and
	// tasks.
	Standing(ctx context.Context, scopes []string) ([]mem.Record, error)
	// Relevant returns up to k memories that match text, best first, with
	// their scores. Conversation turns are not wanted: the conversation
	// is sent whole.
	Relevant(ctx context.Context, text string, k int) ([]mem.Record, error)
}

// Store is the memory store as the agent keeps its conversation in it.
// *mira.Memory satisfies it: the agent writes its turns as every other
// writer of the store does.
type Store interface {
	// AppendTurns stores turns in one commit, refusing secrets (the agent
	// masks them first), and returns the commit. Each turn gets its Path.
	AppendTurns(ctx context.Context, turns []*mem.Entry, opt mem.TurnOptions) (string, error)
	// Conversation reads a conversation's summaries and the turns they
	// do not cover.
	Conversation(scope string, warn func(error)) (*summarize.State, error)
	// TurnPaths lists the files of a conversation's turns.
	TurnPaths(scope string) ([]string, error)
	// ReadPath reads the entry at a path TurnPaths or an entry gave.
	ReadPath(path string) (*mem.Entry, error)
	// Head is the store's current commit.
	Head() (string, error)
	// Changed lists the paths that differ between two commits.
	Changed(from, to string) ([]string, error)
}

// Summarizer folds the older part of a conversation into its rolling
// summary, so that it leaves the buffer.
type Summarizer interface {
	// Summarize summarizes the turns of scope up to and including the one
	// with id through, which ends an exchange. It may cover more of the
	// buffer than that, never a turn the summaries then do not account
	// for.
	Summarize(ctx context.Context, scope, through string) error
}

// Defaults of Config.
const (
	DefaultConversation  = "chat"
	DefaultMaxSteps      = 25
	DefaultBufferTokens  = 24000
	DefaultContextBudget = 6000
	DefaultRecallBudget  = 2000
	DefaultRecallK       = 5
)

// ErrMaxSteps is wrapped by the error of a message whose tool loop was
// stopped after Config.MaxSteps requests.
var ErrMaxSteps = errors.New("step limit reached")

// Config is what New needs.
type Config struct {
	// Store holds the conversation: the agent reads it and writes its
	// turns into it.
	Store Store
	// Conversation is the scope the turns are stored in
	// (DefaultConversation when empty).
	Conversation string
	// Project is the project the agent works in: its name goes into the
	// turns' front matter and the standing context, its scope (see
	// ProjectScope) is searched for standing material.
	Project mem.Project
	// Model answers.
	Model Model
	// Tools are offered to the model; with none, the model only talks.
	Tools Toolbox
	// Library supplies standing material and recalled memories; with
	// none, the context holds only the conversation and its summary.
	Library Library
	// Code supplies the project's code map to the standing context and
	// code cards to each message, as ContextMode says; with none, there
	// is no code in the context.
	Code Code
	// Summarizer folds the older buffer into the summary; with none the
	// buffer only grows.
	Summarizer Summarizer
	// Instructions is the first system message (DefaultInstructions when
	// empty). It must not change during a session: it heads every
	// request, and a provider's prompt cache matches from the start.
	Instructions string
	// Effort is the reasoning effort: EffortAuto (or "") chooses one per
	// message with ClassifyEffort; none, low, medium or high fix it. It
	// is sent only to models that take it (EffortValue).
	Effort string
	// MaxSteps bounds the requests made for one user message
	// (DefaultMaxSteps).
	MaxSteps int
	// BufferTokens is the size of the buffer, in tokens, past which its
	// older part is summarized (DefaultBufferTokens); about half of it
	// stays.
	BufferTokens int
	// ContextMode is the ctx mode of the standing context and the
	// recalled memories ("" is light).
	ContextMode plan.Mode
	// ContextBudget bounds the standing context and RecallBudget the
	// recalled memories, in tokens (DefaultContextBudget,
	// DefaultRecallBudget).
	ContextBudget, RecallBudget int
	// RecallK is how many memories are recalled for each message
	// (DefaultRecallK); negative recalls none.
	RecallK int
	// Encoding is the tiktoken encoding that counts tokens (ctx's
	// default when empty).
	Encoding string
	// Prices price the usage; the zero value reports no cost.
	Prices Prices
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Warn receives problems that do not stop the conversation, such as
	// a summary that failed or a file that does not parse.
	Warn func(error)
	// CallLog keeps a record of each model call (see CallRecord), and
	// the assistant turns name theirs; with none, nothing is recorded.
	CallLog CallLog
}

// Agent is one conversation with a model. Its methods must not be called
// concurrently.
type Agent struct {
	cfg   Config
	model Model
	tok   plan.Tokenizer

	project mem.Project
	tools   Toolbox
	usage   Usage
	last    Usage  // usage of the last message
	effort  string // effort of the last message

	summaries []*mem.Entry // top-level summaries, oldest first
	buffer    []*mem.Entry // turns since the summaries, oldest first
	tail      []*mem.Entry // the newest covered turns, sent too (see loadTail)
	tokens    map[string]int
	head      string // store commit the state was read at (or written)

	lastStamp time.Time // creation time of the newest turn
	wrote     bool      // a turn was written by this agent

	standing *plan.Plan // standing context of the last request
	recall   *plan.Plan // recalled memories of the last message
	query    string     // the last user message

	retrieved   []mem.Record // what recall returned for the last message
	rec         *recorder    // the call records of the message under way
	instrTokens int          // tokens of the instructions (-1: not counted)
	toolsTokens int          // tokens of the tools' schemas (-1: not counted)

	viewAt time.Time // when the buffer view loaded was recorded (see buffer.go)

	noEffort bool   // the server refused reasoning_effort
	failedAt string // the newest turn when summarizing last failed

	pinState pinState // the session's pins, activation and suggestions (pins.go)
}

// OptionError is an option of Config that New refuses, named as Config's
// field is in snake case (conversation, max_steps, buffer_tokens,
// context_budget, recall_budget): a front end names its own flag for it.
type OptionError struct {
	Option string
	Err    error
}

func (e *OptionError) Error() string { return "agent: " + e.Option + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// CheckConversation reports a conversation New refuses (any name that is
// no scope; "" is DefaultConversation), as an *OptionError. It needs no
// store, so a front end can check its flag before it opens one.
func CheckConversation(name string) error {
	if name == "" {
		return nil
	}
	if err := mem.ValidScope(name); err != nil {
		return &OptionError{Option: "conversation", Err: err}
	}
	return nil
}

// CheckLimits reports the first of cfg's MaxSteps, BufferTokens and
// ContextBudget that is below 1, as an *OptionError. New checks them once
// its defaults stand in for zeros; a front end whose flags always carry a
// value checks them as they are before it opens a store, so that a zero
// there is refused too.
func (cfg Config) CheckLimits() error {
	for _, l := range []struct {
		option string
		n      int
	}{{"max_steps", cfg.MaxSteps}, {"buffer_tokens", cfg.BufferTokens}, {"context_budget", cfg.ContextBudget}} {
		if err := atLeastOne(l.option, l.n); err != nil {
			return err
		}
	}
	return nil
}

// atLeastOne refuses a limit below 1, naming its option.
func atLeastOne(option string, n int) error {
	if n < 1 {
		return &OptionError{Option: option, Err: errors.New("must be at least 1")}
	}
	return nil
}

// New opens the conversation: it reads the rolling summary and every turn
// since, so that a restarted agent goes on where it stopped.
func New(cfg Config) (*Agent, error) {
	if cfg.Store == nil {
		return nil, errors.New("agent: no store")
	}
	if cfg.Model == nil {
		return nil, errors.New("agent: no model")
	}
	if err := CheckConversation(cfg.Conversation); err != nil {
		return nil, err
	}
	if cfg.Conversation == "" {
		cfg.Conversation = DefaultConversation
	}
	effort, err := ParseEffort(cfg.Effort)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	cfg.Effort = effort
	if cfg.Instructions == "" {
		cfg.Instructions = DefaultInstructions
	}
	if _, err := plan.ParseMode(string(cfg.ContextMode)); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&cfg.MaxSteps, DefaultMaxSteps)
	def(&cfg.BufferTokens, DefaultBufferTokens)
	def(&cfg.ContextBudget, DefaultContextBudget)
	def(&cfg.RecallBudget, DefaultRecallBudget)
	def(&cfg.RecallK, DefaultRecallK)
	if err := cfg.CheckLimits(); err != nil {
		return nil, err
	}
	if err := atLeastOne("recall_budget", cfg.RecallBudget); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Warn == nil {
		cfg.Warn = func(error) {}
	}
	enc, err := plan.NewTokenizer(cfg.Encoding)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if err := enc.Load(); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	cfg.Encoding = enc.Name()
	a := &Agent{cfg: cfg, model: cfg.Model, tok: enc, project: cfg.Project, tools: cfg.Tools, tokens: map[string]int{},
		instrTokens: -1, toolsTokens: -1}
	if err := a.load(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Agent) now() time.Time { return a.cfg.Now() }

// Conversation returns the conversation's scope.
func (a *Agent) Conversation() string { return a.cfg.Conversation }

// Project returns the project the agent works in.
func (a *Agent) Project() mem.Project {
	return a.project
}

// Switch moves the agent to another project: the file tools work in tb
// from now on, and the standing context shows p. The conversation goes on.
func (a *Agent) Switch(p mem.Project, tb Toolbox) {
	a.project, a.tools = p, tb
	a.toolsTokens = -1
}

// ProjectScope returns the scope a project's memories are kept in: the
// project's name made a valid scope name, or "" when it has none.
func ProjectScope(p mem.Project) string { return mem.ScopeName(p.Name) }

// Event is a piece of progress of a message, for a terminal or a JSONL
// stream. Fields are only ever added.
type Event struct {
	// Type is one of text, reasoning, tool_call, tool_result, usage,
	// summary, warning and done.
	Type string `json:"type"`
	// Step is the request the event belongs to, from 1.
	Step int `json:"step,omitempty"`
	// Text is a piece of the reply (text, reasoning), a tool's result
	// (tool_result), or a message (summary, warning).
	Text string `json:"text,omitempty"`
	// CallID, Tool and Arguments describe a tool call (tool_call,
	// tool_result).
	CallID    string          `json:"call_id,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// IsError and Denied report a failed or refused call; Artifacts the
	// stored outputs of a long one (tool_result).
	IsError   bool     `json:"is_error,omitempty"`
	Denied    bool     `json:"denied,omitempty"`
	Artifacts []string `json:"artifacts,omitempty"`
	// Usage is a request's usage (usage) or the message's (done).
	Usage *Usage `json:"usage,omitempty"`
	// Effort is the reasoning effort chosen for the message (done).
	Effort string `json:"effort,omitempty"`
	// Steps is the number of requests the message took (done).
	Steps int `json:"steps,omitempty"`
	// Plan is the id of the request's call record (usage), when records
	// are kept.
	Plan string `json:"plan,omitempty"`
}

// Answer is the outcome of a message.
type Answer struct {
	// Text is the final reply.
	Text string
	// Steps is the number of requests made.
	Steps int
	// Usage is what the message cost.
	Usage Usage
	// Effort is the reasoning effort chosen for it.
	Effort string
}

// replyParts is what is stored of one reply.
type replyParts struct {
	text, reasoning string
	calls           []openai.ToolCall
	interrupted     bool
	usage           llm.Usage // what the reply cost, recorded with it
	plan            string    // the id of the request's call record
}

// Send sends a user message and runs the tool loop until the model answers
// without calling tools. on (which may be nil) sees the reply as it
// streams and every tool call and result. Cancelling ctx stops the
// request or tool in flight; the error then wraps ctx's, and what was said
// until then is stored. Failing to store a turn ends the message with an
// error, since a conversation that is not recorded would be lost.
func (a *Agent) Send(ctx context.Context, text string, on func(Event)) (*Answer, error) {
	if on == nil {
		on = func(Event) {}
	}
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("empty message")
	}
	if err := a.refresh(); err != nil {
		return nil, err
	}
	if a.overBuffer() {
		a.autoCompact(ctx, on)
	}
	prompt, err := a.prepare(ctx, text)
	if err != nil {
		return nil, err
	}
	user, err := a.store(ctx, a.userEntry(text))
	if err != nil {
		return nil, err
	}
	a.push(user)
	effort := a.cfg.Effort
	if effort == EffortAuto {
		effort = ClassifyEffort(text)
	}
	a.effort, a.last = effort, Usage{}
	a.rec = a.newRecorder(prompt, user)
	defer func() { a.rec = nil }()

	ans := &Answer{Effort: effort}
	var said strings.Builder // the replies' text, for activation
	finish := func() {
		a.endTurn(said.String())
		u := ans.Usage
		on(Event{Type: "done", Steps: ans.Steps, Usage: &u, Effort: effort})
	}
	for step := 1; step <= a.cfg.MaxSteps; step++ {
		ans.Steps = step
		req := a.request(prompt, user.ID, effort)
		planID := a.rec.id(step)
		reply, err := a.ask(ctx, req, step, on)
		if reply != nil {
			u := a.count(reply.Usage)
			ans.Usage.add(u)
			if reply.Usage.Requests > 0 {
				on(Event{Type: "usage", Step: step, Usage: &u, Plan: planID})
			}
		}
		if err != nil {
			if ctx.Err() != nil && reply != nil && (reply.Content != "" || reply.Reasoning != "") {
				// Keep what the user saw; calls that had not finished
				// arriving are dropped unrun.
				if e, serr := a.store(ctx, a.assistantEntry(replyParts{text: reply.Content, interrupted: true, usage: reply.Usage, plan: planID}), usageTrailer(reply.Usage)...); serr == nil {
					a.push(e)
					a.rec.write(step, req, reply, e.ID, err)
				} else {
					err = errors.Join(err, serr)
					a.rec.write(step, req, reply, "", err)
				}
			} else {
				a.rec.write(step, req, reply, "", err)
			}
			finish()
			return ans, err
		}
		said.WriteString(reply.Content + "\n")
		stored, err := a.store(ctx, a.assistantEntry(replyParts{text: reply.Content, reasoning: reply.Reasoning, calls: reply.ToolCalls, usage: reply.Usage, plan: planID}), usageTrailer(reply.Usage)...)
		if err != nil {
			a.rec.write(step, req, reply, "", err)
			return ans, err
		}
		a.push(stored)
		ans.Text = reply.Content
		if len(reply.ToolCalls) == 0 {
			a.rec.write(step, req, reply, stored.ID, nil)
			finish()
			if a.overBuffer() {
				a.autoCompact(ctx, on)
			}
			return ans, nil
		}
		err = a.runCalls(ctx, callsOf(stored), step, on)
		a.rec.write(step, req, reply, stored.ID, err)
		if err != nil {
			finish()
			return ans, err
		}
	}
	finish()
	return ans, fmt.Errorf("%w: the model still called tools after %d requests; send another message to let it go on", ErrMaxSteps, a.cfg.MaxSteps)
}

// autoCompact summarizes the older buffer between exchanges. A failure is
// reported, not returned: the conversation goes on with a long buffer, and
// summarizing is tried again once the buffer has grown.
func (a *Agent) autoCompact(ctx context.Context, on func(Event)) {
	last := ""
	if n := len(a.buffer); n > 0 {
		last = a.buffer[n-1].ID
	}
	if last == a.failedAt {
		return // it failed on this very buffer; wait for more turns
	}
	if _, err := a.compact(ctx, false, on); err != nil {
		a.failedAt = last
		on(Event{Type: "warning", Text: err.Error()})
	}
}

// runCalls runs the tool calls of one reply in order and stores their
// results. When ctx is cancelled, the call that was running is answered
// with what it said and the calls after it with a note that they did not
// run, so that every call has its answer.
func (a *Agent) runCalls(ctx context.Context, calls []openai.ToolCall, step int, on func(Event)) error {
	tb := a.tools
	var stop error
	for _, c := range calls {
		on(Event{Type: "tool_call", Step: step, CallID: c.ID, Tool: c.Function.Name, Arguments: argsJSON(c.Function.Arguments)})
		var res tools.Result
		switch {
		case stop != nil:
			res = tools.Result{Content: "Not run: the user interrupted before this call.", IsError: true}
		case tb == nil:
			res = tools.Result{Content: "There are no tools in this session.", IsError: true}
		default:
			var err error
			res, err = tb.Call(ctx, c.Function.Name, json.RawMessage(c.Function.Arguments))
			if err != nil {
				stop = fmt.Errorf("tool %s: %w", c.Function.Name, err)
			}
		}
		a.rec.tool(c, res, stop != nil && res.IsError && ctx.Err() != nil)
		e, err := a.store(ctx, a.toolEntry(c, res))
		if err != nil {
			return errors.Join(stop, err)
		}
		a.push(e)
		on(Event{Type: "tool_result", Step: step, CallID: c.ID, Tool: c.Function.Name, Text: e.Body,
			IsError: res.IsError, Denied: res.Denied, Artifacts: res.Artifacts})
	}
	if stop == nil && ctx.Err() != nil {
		stop = ctx.Err()
	}
	return stop
}

// ask streams one reply, passing its pieces on as events. A server that
// refuses reasoning_effort is asked again without it, and not sent it
// again.
func (a *Agent) ask(ctx context.Context, req openai.ChatCompletionRequest, step int, on func(Event)) (*llm.Reply, error) {
	fwd := func(ev llm.Event) {
		switch ev.Kind {
		case llm.EventText:
			on(Event{Type: "text", Step: step, Text: ev.Text})
		case llm.EventReasoning:
			on(Event{Type: "reasoning", Step: step, Text: ev.Text})
		}
	}
	reply, err := a.model.Stream(ctx, req, fwd)
	if err != nil && req.ReasoningEffort != "" && refusedEffort(err) && (reply == nil || reply.Usage.Requests == 0) {
		a.noEffort = true
		req.ReasoningEffort = ""
		reply, err = a.model.Stream(ctx, req, fwd)
	}
	return reply, err
}

// usageTrailer records what a reply cost in the commit of its turn, as
// every commit an LLM led to does.
func usageTrailer(u llm.Usage) []mem.Trailer {
	if u.Requests == 0 || u.PromptTokens+u.CompletionTokens == 0 {
		return nil
	}
	return []mem.Trailer{{Key: "Mira-Usage", Value: u.String()}}
}

// refusedEffort reports whether the server refused the reasoning_effort
// parameter.
func refusedEffort(err error) bool {
	var he *llm.HTTPError
	if !errors.As(err, &he) || (he.StatusCode != 400 && he.StatusCode != 422) {
		return false
	}
	msg := strings.ToLower(he.Message + " " + he.Code)
	return strings.Contains(msg, "reasoning_effort") || strings.Contains(msg, "reasoning effort")
}

// count adds a reply's usage to the session's, priced.
func (a *Agent) count(u llm.Usage) Usage {
	v := usageOf(u)
	if a.cfg.Prices.Known() {
		c := a.cfg.Prices.Cost(v)
		v.Cost = &c
	}
	a.usage.add(v)
	a.last.add(v)
	return v
}

// push appends a stored turn to the buffer.
func (a *Agent) push(e *mem.Entry) {
	a.buffer = append(a.buffer, e)
	if e.CreatedAt.After(a.lastStamp) {
		a.lastStamp = e.CreatedAt
	}
}

// Status is what /status shows.
type Status struct {
	Conversation string
	Project      mem.Project
	Model        string
	// Effort is the setting; LastEffort the level of the last message.
	Effort, LastEffort string
	// Usage is the session's, Last the last message's.
	Usage, Last Usage
	// PricesKnown reports whether Usage.Cost is computed.
	PricesKnown bool
	// BufferTurns and BufferTokens measure the buffer; BufferLimit is the
	// size past which it is summarized.
	BufferTurns, BufferTokens, BufferLimit int
	// TailTurns are the newest summarized turns, still sent whole.
	TailTurns int
	// Summary is the rolling summary, nil before the first.
	Summary *mem.Entry
}

// Status reports the conversation's state and the session's spend.
func (a *Agent) Status() Status {
	s := Status{
		Conversation: a.cfg.Conversation, Project: a.project, Model: a.model.Model(),
		Effort: a.cfg.Effort, LastEffort: a.effort, Usage: a.usage, Last: a.last,
		PricesKnown: a.cfg.Prices.Known(), BufferTurns: len(a.buffer), BufferLimit: a.cfg.BufferTokens,
	}
	s.BufferTokens = a.bufferTokens()
	s.TailTurns = len(a.tail)
	if n := len(a.summaries); n > 0 {
		s.Summary = a.summaries[0]
		if s.Summary.Level != "L3" {
			s.Summary = a.summaries[n-1]
		}
	}
	return s
}
