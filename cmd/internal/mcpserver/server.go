// Package mcpserver serves a Mira memory over the Model Context Protocol,
// so that any MCP host (Claude Code, Codex, Cursor, Gemini CLI, Zed) can
// remember, recall, forget and plan context with it. It is a front end of
// package mira: every tool is one call of the library, with arguments
// checked by the tool's JSON schema and by the library, and every failure
// is a tool error the model can read, never a crash.
package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/miramem/mira"
	"github.com/miramem/mira/internal/text"
	"github.com/miramem/mira/mem"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the server's name in the MCP handshake.
const Name = "mira"

// MemoryURI is the URI template of a memory resource.
const MemoryURI = "mira://memory/{id}"

// instructions tell the model what the server is for and how to use it.
const instructions = `Mira is the user's long-term memory: plain Markdown files in a git repository that persist across sessions, projects and tools.
- Call recall before answering questions that may depend on earlier decisions, preferences, facts or conventions.
- Call remember when the user states a durable fact, preference, decision or correction, or asks you to remember something. One memory per call, written so it stands alone without the conversation.
- Call forget only when the user asks to forget something or a memory is wrong; pass the ids that recall returned.
- Call context to get a token-budgeted block (pins, open corrections, goals, tasks, the latest summary and the memories relevant to a question) to put at the top of a prompt.
- Call task_done when the user says a goal or task is finished (or abandoned): it leaves the standing context but stays in the memory.
Never store credentials: memories are committed to git and pasted into prompts, and secrets are refused.`

// Options tune a server.
type Options struct {
	// Version is reported in the handshake.
	Version string
	// Log receives one line per failure that is not the caller's fault
	// (nil: none).
	Log func(format string, args ...any)
	// CodeRoot is the project the code tools answer about ("": they say
	// there is none); Getenv finds its index (nil: os.Getenv).
	CodeRoot string
	Getenv   func(string) string
}

// New returns an MCP server over m with Mira's tools and the memory
// resource template.
func New(m *mira.Memory, opt Options) *mcp.Server {
	s := &server{m: m, log: opt.Log, code: &codeIndex{root: opt.CodeRoot, getenv: opt.Getenv, m: m}}
	if s.log == nil {
		s.log = func(string, ...any) {}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "Mira memory", Version: opt.Version}, &mcp.ServerOptions{
		Instructions: instructions,
	})
	addTool(srv, s, rememberTool(), s.remember)
	addTool(srv, s, recallTool(), s.recall)
	addTool(srv, s, forgetTool(), s.forget)
	addTool(srv, s, contextTool(), s.context)
	addTool(srv, s, listTool(), s.list)
	addTool(srv, s, pinTool(), s.pin)
	addTool(srv, s, unpinTool(), s.unpin)
	addTool(srv, s, taskDoneTool(), s.taskDone)
	addCodeTools(srv, s)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "memory",
		Title:       "A memory",
		URITemplate: MemoryURI,
		Description: "One memory as its Markdown file: YAML front matter (id, kind, scope, created_at, tags, ...) and the text.",
		MIMEType:    "text/markdown",
	}, s.readMemory)
	// resources/list lists the newest memories: the template alone gives
	// a host nothing to show or attach.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/list" {
				return s.listMemories(ctx)
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

type server struct {
	m    *mira.Memory
	log  func(format string, args ...any)
	code *codeIndex
}

// addTool installs a typed handler that turns a panic into a tool error:
// one bad call must not end the session of every other.
func addTool[In, Out any](srv *mcp.Server, s *server, t *mcp.Tool, h func(context.Context, In) (*mcp.CallToolResult, Out, error)) {
	mcp.AddTool(srv, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log("tool %s panicked: %v\n%s", t.Name, r, debug.Stack())
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("internal error in %s: %v", t.Name, r)
			}
		}()
		res, out, err = h(ctx, in)
		if err != nil {
			err = toolError(err)
			var inv *mira.InvalidError
			if !errors.As(err, &inv) && !errors.Is(err, context.Canceled) {
				s.log("tool %s: %v", t.Name, err)
			}
		}
		return res, out, err
	})
}

// toolError words an error for the model: what went wrong and what to do.
func toolError(err error) error {
	var le *mem.LockedError
	switch {
	case errors.As(err, &le):
		return fmt.Errorf("%w; the memory is busy with another writer, try again in a moment", err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w; use recall to find the right id", err)
	}
	return err
}

// Memory is one memory as the tools return it.
type Memory struct {
	ID        string   `json:"id" jsonschema:"the memory's id, for forget, pin and the resource mira://memory/<id>"`
	Kind      string   `json:"kind" jsonschema:"fact, preference, decision, correction, goal, task, note, turn or summary"`
	Scope     string   `json:"scope" jsonschema:"the bucket: global, a project or a conversation"`
	Text      string   `json:"text"`
	CreatedAt string   `json:"created_at,omitempty" jsonschema:"RFC 3339"`
	Tags      []string `json:"tags,omitempty"`
	Project   string   `json:"project,omitempty"`
	Pin       string   `json:"pin,omitempty" jsonschema:"sticky or leased when pinned into every context"`
	PinUntil  string   `json:"pin_until,omitempty"`
	Status    string   `json:"status,omitempty"`
	Score     *float64 `json:"score,omitempty" jsonschema:"recall's relevance score, higher is better"`
	URI       string   `json:"uri" jsonschema:"the memory as a resource"`
}

func memoryOf(r mem.Record) Memory {
	out := Memory{ID: r.ID, Kind: r.Kind, Scope: r.Scope, Text: r.Text, Tags: r.Tags, Project: r.Project,
		Pin: r.Pin, Status: r.Status, Score: r.Score, URI: "mira://memory/" + r.ID}
	if r.CreatedAt != nil {
		out.CreatedAt = r.CreatedAt.UTC().Format(time.RFC3339)
	}
	if r.PinUntil != nil {
		out.PinUntil = r.PinUntil.UTC().Format(time.RFC3339)
	}
	return out
}

// line renders a memory for the model to read and cite.
func (mm Memory) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "- [%s · %s", mm.Kind, mm.ID)
	if len(mm.CreatedAt) >= 10 {
		b.WriteString(" · " + mm.CreatedAt[:10])
	}
	b.WriteString(" · scope " + mm.Scope)
	if len(mm.Tags) > 0 {
		b.WriteString(" · #" + strings.Join(mm.Tags, " #"))
	}
	if mm.Pin != "" {
		b.WriteString(" · pinned " + mm.Pin)
	}
	b.WriteString("] ")
	b.WriteString(strings.ReplaceAll(strings.TrimSpace(mm.Text), "\n", "\n  "))
	return b.String()
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func lines(ms []Memory, none string) string {
	if len(ms) == 0 {
		return none
	}
	out := make([]string, len(ms))
	for i, mm := range ms {
		out[i] = mm.line()
	}
	return strings.Join(out, "\n")
}

// schema infers a tool's input schema from In and lets fix refine it
// (enums, bounds) where Go types cannot say it.
func schema[In any](fix func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	sc, err := jsonschema.For[In](nil)
	if err != nil {
		panic(err)
	}
	if fix != nil {
		fix(sc.Properties)
	}
	return sc
}

func enum(vals ...string) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// memoryKinds are the kinds a model may remember (turns and summaries are
// written by the conversation and the summarizer).
var memoryKinds = []string{mem.KindFact, mem.KindPreference, mem.KindDecision, mem.KindCorrection, mem.KindGoal, mem.KindTask, mem.KindNote}

// readMemory serves mira://memory/<id>.
func (s *server) readMemory(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "mira" || u.Host != "memory" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	id := strings.TrimPrefix(u.Path, "/")
	if !mem.ValidID(id) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	e, err := s.m.Get(ctx, id)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, err
	}
	data, err := e.Marshal()
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: string(data)}}}, nil
}

// ListedMemories is how many memories resources/list gives, newest first:
// enough to pick one from, few enough to show.
const ListedMemories = 50

// listMemories serves resources/list: the newest memories a model
// remembers (not conversation turns or summaries), newest first, each as
// mira://memory/<id> with its first line as the title.
func (s *server) listMemories(ctx context.Context) (*mcp.ListResourcesResult, error) {
	// A recall without words ranks the newest by recency, where the same
	// second ties: more are asked for, and ordered by time and id.
	recs, err := s.m.Recall(ctx, mira.Query{K: 3 * ListedMemories, Kinds: memoryKinds, Mode: "lexical"})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(recs, func(a, b mem.Record) int {
		var ta, tb time.Time
		if a.CreatedAt != nil {
			ta = *a.CreatedAt
		}
		if b.CreatedAt != nil {
			tb = *b.CreatedAt
		}
		return cmp.Or(tb.Compare(ta), strings.Compare(b.ID, a.ID))
	})
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	for _, r := range recs[:min(len(recs), ListedMemories)] {
		out.Resources = append(out.Resources, &mcp.Resource{
			Name:        r.ID,
			Title:       title(r.Text),
			URI:         "mira://memory/" + r.ID,
			MIMEType:    "text/markdown",
			Description: fmt.Sprintf("%s in scope %s", r.Kind, r.Scope),
		})
	}
	return out, nil
}

// title is the first line of a memory's text, cut to about 80 bytes.
func title(s string) string {
	t, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return text.Shorten(t, 80)
}
