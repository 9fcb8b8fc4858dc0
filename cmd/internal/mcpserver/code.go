package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/miramem/mira"
	"github.com/miramem/mira/cmd/internal/codefmt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The code tools answer from the code index of the project the server was
// started in (CodeRoot): code_search ranks the code a task needs,
// code_symbol shows a definition, its callers or its callees, code_map
// the module tree. The index is opened at the first call and brought up
// to date before each; a project never indexed is indexed then.

// Bounds of the code tools' arguments.
const (
	maxCodeK      = 50
	maxCodeDepth  = 5
	maxCodeBudget = 20000
)

// codeIndex opens the project's index once, at the first call.
type codeIndex struct {
	root   string
	getenv func(string) string
	m      *mira.Memory

	mu   sync.Mutex
	code *mira.Code
}

func (c *codeIndex) open(ctx context.Context) (*mira.Code, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.code != nil {
		return c.code, nil
	}
	if c.root == "" {
		return nil, errors.New("no project: start mira-mcp in a project's directory to use the code tools")
	}
	code, err := mira.OpenCode(ctx, mira.CodeOptions{Root: c.root, Memory: c.m, Getenv: c.getenv,
		Watch: mira.CodeIndexed(c.root, "", c.getenv)})
	if err != nil {
		return nil, fmt.Errorf("cannot open the code index of %s: %w", c.root, err)
	}
	c.code = code
	return code, nil
}

// existing returns the project's index for the context tool: only one
// that is built already (by mira-code index, or by a code tool), never
// building one; nil when there is none or no project.
func (c *codeIndex) existing(ctx context.Context) (*mira.Code, error) {
	c.mu.Lock()
	code := c.code
	c.mu.Unlock()
	if code != nil {
		if !code.Indexed() {
			return nil, nil
		}
		return code, nil
	}
	if c.root == "" || !mira.CodeIndexed(c.root, "", c.getenv) {
		return nil, nil
	}
	return c.open(ctx)
}

// Close closes the index, if it was opened.
func (c *codeIndex) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.code == nil {
		return nil
	}
	err := c.code.Close()
	c.code = nil
	return err
}

// CodeCard is a definition as the code tools return it.
type CodeCard struct {
	Kind      string   `json:"kind" jsonschema:"func, method, class, struct, interface, type, enum, trait, impl, const, var, field, module or macro"`
	Name      string   `json:"name"`
	Parent    string   `json:"parent,omitempty" jsonschema:"the type, class or module it is defined in"`
	Module    string   `json:"module,omitempty"`
	Path      string   `json:"path" jsonschema:"slash path from the project's root"`
	Lang      string   `json:"lang,omitempty"`
	Line      int      `json:"line"`
	EndLine   int      `json:"end_line,omitempty"`
	Signature string   `json:"signature,omitempty"`
	Doc       string   `json:"doc,omitempty"`
	Snippet   string   `json:"snippet,omitempty" jsonschema:"its first lines, or with body its whole source"`
	Excerpt   string   `json:"excerpt,omitempty" jsonschema:"the code around it (code_search)"`
	Score     float64  `json:"score,omitempty"`
	Why       []string `json:"why,omitempty" jsonschema:"why it was chosen"`
	Memories  []string `json:"memories,omitempty" jsonschema:"memories that point at it"`
	Stale     bool     `json:"stale,omitempty" jsonschema:"its file changed on disk since it was indexed"`
}

func cardOf(c mira.CodeCard) CodeCard {
	return CodeCard{Kind: c.Kind, Name: c.Name, Parent: c.Parent, Module: c.Module, Path: c.Path, Lang: c.Lang,
		Line: c.Line, EndLine: c.EndLine, Signature: c.Signature, Doc: c.Doc, Snippet: c.Snippet,
		Memories: c.Memories, Stale: c.Stale}
}

// CodeFile is a file as code_search returns it.
type CodeFile struct {
	Path  string   `json:"path"`
	Score float64  `json:"score"`
	Why   []string `json:"why,omitempty"`
	Stale bool     `json:"stale,omitempty"`
}

// CodeSearchIn are code_search's arguments.
type CodeSearchIn struct {
	Query    string   `json:"query" jsonschema:"the task or question, in plain words (e.g. 'where are invoices exported')"`
	Find     string   `json:"find,omitempty" jsonschema:"touchpoints (default): the definitions the task needs, with excerpts; files: the files it needs"`
	K        int      `json:"k,omitempty" jsonschema:"how many results (default 10)"`
	Files    []string `json:"files,omitempty" jsonschema:"files the task is about: what changes with them counts too"`
	Excerpts bool     `json:"excerpts,omitempty" jsonschema:"touchpoints: include the code around each definition"`
}

// CodeSearchOut is what code_search found.
type CodeSearchOut struct {
	Touchpoints []CodeCard `json:"touchpoints,omitempty"`
	Files       []CodeFile `json:"files,omitempty"`
}

func codeSearchTool() *mcp.Tool {
	return tool[CodeSearchIn, CodeSearchOut]("code_search", "Search code",
		"Find the code a task needs in the current project, from its code index (definitions, call graph, "+
			"git history, and memories that point at code): the definitions to look at (touchpoints) or the files. "+
			"Use it before grepping or reading whole files.",
		func(p map[string]*jsonschema.Schema) {
			p["query"].MinLength = ptr(1)
			p["find"].Enum = enum("touchpoints", "files")
			between(p["k"], 0, maxCodeK)
		}, readOnly)
}

func (s *server) codeSearch(ctx context.Context, in CodeSearchIn) (*mcp.CallToolResult, CodeSearchOut, error) {
	var out CodeSearchOut
	code, err := s.code.open(ctx)
	if err != nil {
		return nil, out, err
	}
	q := mira.CodeQuery{Text: in.Query, K: cmp.Or(in.K, 10), Explain: true}
	for _, f := range in.Files {
		q.Files = append(q.Files, code.Rel(f))
	}
	if in.Find == "files" {
		hits, err := code.Files(ctx, q)
		if err != nil {
			return nil, out, err
		}
		for _, h := range hits {
			out.Files = append(out.Files, CodeFile{Path: h.Path, Score: h.Score, Why: h.Why, Stale: h.Stale})
		}
		return textResult(cmp.Or(codefmt.Files(hits), "No file matches.")), out, nil
	}
	tps, err := code.Touchpoints(ctx, q)
	if err != nil {
		return nil, out, err
	}
	for _, t := range tps {
		c := cardOf(t.Card)
		c.Score, c.Why = t.Score, t.Why
		if in.Excerpts {
			c.Excerpt = t.Excerpt
		}
		out.Touchpoints = append(out.Touchpoints, c)
	}
	return textResult(cmp.Or(codefmt.Touchpoints(tps, in.Excerpts), "No definition matches.")), out, nil
}

// CodeSymbolIn are code_symbol's arguments.
type CodeSymbolIn struct {
	Ref   string `json:"ref" jsonschema:"the definition: a name (Execute), Type.Method, path:line or path#Name"`
	Show  string `json:"show,omitempty" jsonschema:"card (default): its signature, doc and first lines; callers: where it is called; callees: what it calls"`
	Body  bool   `json:"body,omitempty" jsonschema:"card: its whole source"`
	Depth int    `json:"depth,omitempty" jsonschema:"callers and callees: levels to follow (default 1)"`
}

// CodeCall is a call site.
type CodeCall struct {
	From  CodeCard `json:"from"`
	To    CodeCard `json:"to"`
	Path  string   `json:"path"`
	Line  int      `json:"line"`
	Depth int      `json:"depth" jsonschema:"1 for a direct call"`
}

// CodeSymbolOut is what code_symbol shows.
type CodeSymbolOut struct {
	Card  *CodeCard  `json:"card,omitempty"`
	Calls []CodeCall `json:"calls,omitempty"`
}

func codeSymbolTool() *mcp.Tool {
	return tool[CodeSymbolIn, CodeSymbolOut]("code_symbol", "Show a definition",
		"Show one definition of the current project from its code index: its card (signature, doc, place, "+
			"and with body its whole source), its callers or its callees.",
		func(p map[string]*jsonschema.Schema) {
			p["ref"].MinLength = ptr(1)
			p["show"].Enum = enum("card", "callers", "callees")
			between(p["depth"], 0, maxCodeDepth)
		}, readOnly)
}

func (s *server) codeSymbol(ctx context.Context, in CodeSymbolIn) (*mcp.CallToolResult, CodeSymbolOut, error) {
	var out CodeSymbolOut
	if in.Ref == "" {
		return nil, out, errors.New("ref is empty: name a definition")
	}
	code, err := s.code.open(ctx)
	if err != nil {
		return nil, out, err
	}
	if in.Show == "" || in.Show == "card" {
		c, err := code.Card(ctx, in.Ref, in.Body)
		if err != nil {
			return nil, out, fmt.Errorf("%w; use code_search to find the definition", err)
		}
		card := cardOf(c)
		out.Card = &card
		return textResult(codefmt.Card(c)), out, nil
	}
	depth := cmp.Or(in.Depth, 1)
	var edges []mira.CodeEdge
	if in.Show == "callers" {
		edges, err = code.Callers(ctx, in.Ref, depth)
	} else {
		edges, err = code.Callees(ctx, in.Ref, depth)
	}
	if err != nil {
		return nil, out, err
	}
	for _, e := range edges {
		out.Calls = append(out.Calls, CodeCall{From: cardOf(e.From), To: cardOf(e.To), Path: e.Path, Line: e.Line, Depth: e.Depth})
	}
	return textResult(cmp.Or(codefmt.Edges(edges), fmt.Sprintf("No %s of %s.", in.Show, in.Ref))), out, nil
}

// CodeMapIn are code_map's arguments.
type CodeMapIn struct {
	Budget int `json:"budget,omitempty" jsonschema:"most tokens the map may take (default 2000)"`
}

// CodeModule is a directory of the project with its central definitions.
type CodeModule struct {
	Path    string     `json:"path"`
	Files   int        `json:"files"`
	Symbols []CodeCard `json:"symbols,omitempty"`
}

// CodeMapOut is the project's map.
type CodeMapOut struct {
	Text    string       `json:"text" jsonschema:"the map as text, within the budget"`
	Tokens  int          `json:"tokens"`
	Modules []CodeModule `json:"modules,omitempty"`
}

func codeMapTool() *mcp.Tool {
	return tool[CodeMapIn, CodeMapOut]("code_map", "Map of the code",
		"The current project's module tree with its most central definitions, from its code index, "+
			"within a token budget: a first look at a codebase before searching it.",
		func(p map[string]*jsonschema.Schema) {
			between(p["budget"], 0, maxCodeBudget)
		}, readOnly)
}

func (s *server) codeMap(ctx context.Context, in CodeMapIn) (*mcp.CallToolResult, CodeMapOut, error) {
	var out CodeMapOut
	code, err := s.code.open(ctx)
	if err != nil {
		return nil, out, err
	}
	m, err := code.Map(ctx, cmp.Or(in.Budget, 2000))
	if err != nil {
		return nil, out, err
	}
	out.Text, out.Tokens = m.Text, m.Tokens
	for _, md := range m.Modules {
		cm := CodeModule{Path: md.Path, Files: md.Files}
		for _, c := range md.Symbols {
			cm.Symbols = append(cm.Symbols, cardOf(c))
		}
		out.Modules = append(out.Modules, cm)
	}
	return textResult(cmp.Or(m.Text, "The project has no code the index reads.")), out, nil
}

// addCodeTools installs the code tools.
func addCodeTools(srv *mcp.Server, s *server) {
	addTool(srv, s, codeSearchTool(), s.codeSearch)
	addTool(srv, s, codeSymbolTool(), s.codeSymbol)
	addTool(srv, s, codeMapTool(), s.codeMap)
}
