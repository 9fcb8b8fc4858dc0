package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// Tool is one function the model can call.
type Tool interface {
	// Definition returns the tool's name, description and parameter
	// schema in the form the chat API takes.
	Definition() openai.Tool
	// Run executes one call with the arguments the model sent. Problems
	// the model should hear about are returned as a Result with IsError
	// set; the error is for a cancelled ctx only.
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// Result is what a tool call produced.
type Result struct {
	// Content is the text the model sees as the tool message.
	Content string
	// IsError reports a failed call: bad arguments, a denied permission,
	// a missing file, a command that exited non-zero or timed out.
	IsError bool
	// Denied reports that the permission policy or the user refused the
	// call.
	Denied bool
	// Reverted reports that what the call changed was undone after it
	// ran (bash's changes to git's configuration and hooks).
	Reverted bool
	// Artifacts lists the files the call wrote into the store, as
	// slash-separated paths relative to the store root
	// ("artifacts/<scope>/<id>.txt"), for the caller to commit.
	Artifacts []string

	// paged marks output that is already cut to a page and says how to
	// read on (read_file), so it is not stored as an artifact again.
	paged bool
}

// errorf returns an error Result with a formatted message.
func errorf(format string, args ...any) Result {
	return Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// Limits bounds what the tools read, run and return. Zero fields take the
// defaults given with each.
type Limits struct {
	// ResultBytes and ResultLines are the largest result sent to the
	// model whole (8 KiB, 200 lines); a longer one becomes an artifact.
	ResultBytes, ResultLines int
	// HeadLines and TailLines are how many lines of a stored output the
	// model sees (20 each), each part also held to ResultBytes/4 bytes.
	HeadLines, TailLines int
	// ReadLines is read_file's default limit (2000 lines) and ReadBytes
	// the most it returns in one call (64 KiB).
	ReadLines, ReadBytes int
	// ReadFileBytes is the largest file read_file opens (16 MiB).
	ReadFileBytes int64
	// LineBytes is where read_file and grep clip long lines (2000).
	LineBytes int
	// BashTimeout is a command's default timeout (2 minutes) and
	// BashMaxTimeout the most a call may ask for (10 minutes).
	BashTimeout, BashMaxTimeout time.Duration
	// BashOutputBytes caps the output read back from one command when
	// there is no artifact store to keep it in (1 MiB): its first and
	// last halves are kept.
	BashOutputBytes int64
	// ArtifactBytes caps what an artifact keeps of one output
	// (DefaultArtifactBytes, 256 MiB); the output is streamed to disk,
	// never held whole. Past the cap, the first ArtifactBytes are kept
	// and the note the model sees says so.
	ArtifactBytes int64
	// GrepResults is grep's default limit (250) and GrepMaxResults the
	// largest a call may ask for (5000).
	GrepResults, GrepMaxResults int
	// GlobResults is the most paths glob lists (1000).
	GlobResults int
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.ResultBytes, 8<<10)
	def(&l.ResultLines, 200)
	def(&l.HeadLines, 20)
	def(&l.TailLines, 20)
	def(&l.ReadLines, 2000)
	def(&l.ReadBytes, 64<<10)
	def(&l.LineBytes, 2000)
	def(&l.GrepResults, 250)
	def(&l.GrepMaxResults, 5000)
	def(&l.GlobResults, 1000)
	if l.ReadFileBytes <= 0 {
		l.ReadFileBytes = 16 << 20
	}
	if l.BashTimeout <= 0 {
		l.BashTimeout = 2 * time.Minute
	}
	if l.BashMaxTimeout <= 0 {
		l.BashMaxTimeout = 10 * time.Minute
	}
	l.BashTimeout = min(l.BashTimeout, l.BashMaxTimeout)
	if l.BashOutputBytes <= 0 {
		l.BashOutputBytes = 1 << 20
	}
	if l.ArtifactBytes <= 0 {
		l.ArtifactBytes = DefaultArtifactBytes
	}
	return l
}

// Config is what New needs to build the tools.
type Config struct {
	// Root is the project root: the file tools work under it and bash
	// runs in it.
	Root string
	// AllowPaths are files or directories outside Root that the file
	// tools may also use, and bash's commands write to, as the user
	// allowed.
	AllowPaths []string
	// Policy decides whether write_file, edit_file and bash may run. With
	// none, they are always denied.
	Policy *Policy
	// Artifacts stores long outputs. With none, long outputs are cut to
	// their first and last lines and the rest is lost.
	Artifacts *Artifacts
	// Memory backs remember and recall; with none, those tools are not
	// offered. A Memory that is also a TaskStatus backs task_done.
	Memory Memory
	// Limits bounds reads, commands and results.
	Limits Limits
	// Shell is the shell bash runs ("bash").
	Shell string
	// AllowGitConfig lets the tools change git's own files: the file
	// tools write in git directories, and bash's commands change the
	// repository's configuration and hooks. Without it they do not,
	// since git runs commands named there (core.fsmonitor, hooks…) at
	// the user's next git command, outside any sandbox.
	AllowGitConfig bool
	// Protect lists files or directories that no tool may change even
	// under Root or AllowPaths: the memory store, which the agent
	// changes through remember alone.
	Protect []string
	// Notice receives what the user should know about how the tools
	// run: that bash is not confined (once, at its first call) where
	// the kernel has no Landlock, or how git's files are kept from its
	// commands. With none, notices are dropped.
	Notice func(msg string)
}

// env is what the built-in tools share.
type env struct {
	ws     *workspace
	policy *Policy
	arts   *Artifacts
	limits Limits
	shell  string
	// confined is set where bash's commands run under Landlock.
	confined bool
	notice   func(string)
	// unconfinedOnce guards the notice that bash is not confined.
	unconfinedOnce sync.Once
	// allowGit is Config.AllowGitConfig.
	allowGit bool
	// nsOnce guards nsErr: why bash's commands cannot run in a mount
	// namespace of their own, nil when they can.
	nsOnce sync.Once
	nsErr  error
}

// Registry holds the tools offered to the model. It is made by New and is
// safe for concurrent calls (approval requests are asked one at a time).
type Registry struct {
	tools  map[string]Tool
	order  []string
	arts   *Artifacts
	limits Limits
}

// New returns a Registry with the built-in tools: read_file, write_file,
// edit_file, bash, glob and grep, and remember and recall when cfg.Memory
// is set (and task_done when it is also a TaskStatus).
func New(cfg Config) (*Registry, error) {
	ws, err := newWorkspace(cfg.Root, cfg.AllowPaths, cfg.Artifacts)
	if err != nil {
		return nil, err
	}
	if err := ws.guard(cfg.AllowGitConfig, cfg.Protect); err != nil {
		return nil, err
	}
	e := &env{ws: ws, policy: cfg.Policy, arts: cfg.Artifacts, limits: cfg.Limits.withDefaults(), shell: cfg.Shell, notice: cfg.Notice, allowGit: cfg.AllowGitConfig}
	if e.shell == "" {
		e.shell = "bash"
	}
	if abi, _ := landlockABI(); abi > 0 {
		e.confined = true
	}
	r := &Registry{tools: map[string]Tool{}, arts: cfg.Artifacts, limits: e.limits}
	builtin := []Tool{readFile{e}, writeFile{e}, editFile{e}, bashTool{e}, globTool{e}, grepTool{e}}
	if cfg.Memory != nil {
		builtin = append(builtin, rememberTool{cfg.Memory}, recallTool{cfg.Memory})
		if ts, ok := cfg.Memory.(TaskStatus); ok {
			builtin = append(builtin, taskDoneTool{ts})
		}
	}
	for _, t := range builtin {
		if err := r.Register(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds t to the tools offered, after those already there. A name
// may be registered once.
func (r *Registry) Register(t Tool) error {
	def := t.Definition()
	if def.Function == nil || def.Function.Name == "" {
		return errors.New("register tool: definition has no function name")
	}
	name := def.Function.Name
	if _, dup := r.tools[name]; dup {
		return fmt.Errorf("register tool %s: already registered", name)
	}
	r.tools[name] = t
	r.order = append(r.order, name)
	return nil
}

// Names returns the names of the tools, in the order they were registered.
func (r *Registry) Names() []string {
	return slices.Clone(r.order)
}

// Definitions returns the tools' definitions to send with a chat request,
// always in the same order.
func (r *Registry) Definitions() []openai.Tool {
	defs := make([]openai.Tool, len(r.order))
	for i, name := range r.order {
		defs[i] = r.tools[name].Definition()
	}
	return defs
}

// Call runs the tool called name with the arguments the model sent (the
// JSON text of the tool call's arguments). The Result's Content has its
// secrets redacted and, when too long, is cut down with the whole stored
// as an artifact. The error is non-nil only when ctx was cancelled; the
// Result then still says what happened, for the conversation.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	t, ok := r.tools[name]
	if !ok {
		return errorf("there is no tool named %q; the tools are: %s", name, strings.Join(r.order, ", ")), nil
	}
	res, err := runSafely(ctx, t, args)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	res.Content = Redact(res.Content)
	if !res.paged {
		res = r.fit(res, name)
	}
	if res.Content == "" {
		res.Content = "(no output)"
	}
	return res, err
}

// runSafely runs t, turning a panic into an error Result: one broken tool
// call must not end a session that may have run for days.
func runSafely(ctx context.Context, t Tool, args json.RawMessage) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = errorf("internal error in tool %s: %v", t.Definition().Function.Name, p), nil
		}
	}()
	return t.Run(ctx, args)
}

// schemaTool builds a function tool definition.
func schemaTool(name, desc string, params *jsonschema.Definition) openai.Tool {
	return openai.Tool{
		Type: openai.ToolTypeFunction,
		Function: &openai.FunctionDefinition{
			Name:        name,
			Description: desc,
			Parameters:  params,
		},
	}
}

// object returns an object schema with the given properties; the fields
// named in required must be present.
func object(props map[string]jsonschema.Definition, required ...string) *jsonschema.Definition {
	return &jsonschema.Definition{
		Type:                 jsonschema.Object,
		Properties:           props,
		Required:             required,
		AdditionalProperties: false,
	}
}
