package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/miramem/mira"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/mem"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxK bounds how many memories one call returns: enough for any prompt,
// and a model that asks for millions gets a clear schema error instead.
const maxK = 100

// RememberIn are remember's arguments.
type RememberIn struct {
	Text    string   `json:"text" jsonschema:"the memory, written to stand alone without the conversation: who or what, and the fact itself (e.g. 'The shop project uses PostgreSQL 16 for JSONB support')"`
	Kind    string   `json:"kind,omitempty" jsonschema:"what sort of memory: fact, preference (how the user likes things done), decision (a choice and its reason), correction (something the assistant got wrong and must not repeat), goal, task, or note (default)"`
	Tags    []string `json:"tags,omitempty" jsonschema:"short topic words to find it by (e.g. db, auth)"`
	Scope   string   `json:"scope,omitempty" jsonschema:"where it belongs: global (default; true everywhere) or a project name"`
	Pin     string   `json:"pin,omitempty" jsonschema:"pin it into every context: sticky (until unpinned) or leased (until 'until')"`
	Until   string   `json:"until,omitempty" jsonschema:"end of a leased pin: RFC 3339 time, a date, a duration from now such as 72h or 7d, or task:ID to last until that goal or task is closed"`
	Replace string   `json:"replace,omitempty" jsonschema:"id of a memory this one corrects or updates: the old one is kept in history as replaced"`
}

// tool declares a tool taking In and returning Out: fix refines the
// input schema where Go types cannot say it (nil: nothing to refine), and
// hints are its annotations, to which it adds its title and that it
// reaches nothing outside the memory and the project.
func tool[In, Out any](name, title, description string, fix func(props map[string]*jsonschema.Schema), hints mcp.ToolAnnotations) *mcp.Tool {
	hints.Title, hints.OpenWorldHint = title, ptr(false)
	return &mcp.Tool{Name: name, Title: title, Description: description,
		InputSchema: plainSchema[In](fix), OutputSchema: plainSchema[Out](nil), Annotations: &hints}
}

// between bounds a number property from least to most.
func between(p *jsonschema.Schema, least, most float64) {
	p.Minimum, p.Maximum = &least, &most
}

// readOnly are the hints of a tool that changes nothing.
var readOnly = mcp.ToolAnnotations{ReadOnlyHint: true}

// plainSchema is schema with plain types for optional fields: the
// inferred ["null", "array"] of a slice or a pointer made the MCP
// Inspector send an array as a string, and hosts backed by Gemini refuse
// a union of types. Such a field is optional by not being required.
func plainSchema[In any](fix func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	sc := schema[In](fix)
	plainTypes(sc)
	return sc
}

// plainTypes replaces each union of a type and null in s, and in the
// schemas within it, by the type alone.
func plainTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		var types []string
		for _, t := range s.Types {
			if t != "null" {
				types = append(types, t)
			}
		}
		if len(types) == 1 {
			s.Type, s.Types = types[0], nil
		} else {
			s.Types = types
		}
	}
	plainTypes(s.Items)
	plainTypes(s.AdditionalProperties)
	for _, p := range s.Properties {
		plainTypes(p)
	}
	for _, d := range s.Defs {
		plainTypes(d)
	}
	for _, d := range s.Definitions {
		plainTypes(d)
	}
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.AllOf, s.AnyOf, s.OneOf} {
		for _, c := range list {
			plainTypes(c)
		}
	}
}

// limitTags bounds a tags property by the store's limits, so that a host
// can tell before it calls.
func limitTags(p *jsonschema.Schema) {
	p.MaxItems = ptr(mem.MaxTags)
	p.Items.MaxLength = ptr(mem.MaxTagBytes)
}

// RememberOut is what remember stored.
type RememberOut struct {
	Memories []Memory `json:"memories"`
	// Duplicate is set when the same text was already remembered: the
	// memory returned is that one, and nothing was stored.
	Duplicate bool   `json:"duplicate"`
	Replaced  string `json:"replaced,omitempty" jsonschema:"id of the memory replaced"`
}

func rememberTool() *mcp.Tool {
	return tool[RememberIn, RememberOut]("remember", "Remember",
		"Store one durable memory in the user's long-term memory (a Markdown file committed to git). "+
			"Use it for facts, preferences, decisions, corrections, goals and tasks worth keeping beyond this conversation. "+
			"Exact duplicates are not stored twice; text that looks like a credential is refused.",
		func(p map[string]*jsonschema.Schema) {
			p["text"].MinLength = ptr(1)
			p["kind"].Enum = enum(memoryKinds...)
			p["pin"].Enum = enum(mem.PinSticky, mem.PinLeased)
			limitTags(p["tags"])
		}, mcp.ToolAnnotations{DestructiveHint: ptr(false)})
}

func (s *server) remember(ctx context.Context, in RememberIn) (*mcp.CallToolResult, RememberOut, error) {
	var out RememberOut
	if strings.TrimSpace(in.Text) == "" {
		return nil, out, fmt.Errorf("text is empty: give the memory's text")
	}
	lease, err := parseLease(in.Until)
	if err != nil {
		return nil, out, err
	}
	e := &mem.Entry{Kind: in.Kind, Scope: in.Scope, Body: in.Text, Tags: in.Tags, Pin: in.Pin, Source: "mcp"}
	res, err := s.m.Remember(ctx, []*mem.Entry{e}, mira.RememberOptions{Replace: in.Replace, Source: "mcp", Until: lease.Until, UntilTask: lease.Task})
	if err != nil {
		return nil, out, err
	}
	it := res.Items[0]
	out.Memories = []Memory{memoryOf(it.Entry.Record())}
	out.Duplicate = it.Duplicate
	msg := fmt.Sprintf("Remembered as %s (%s, scope %s).", it.Entry.ID, it.Entry.Kind, it.Entry.Scope)
	if it.Duplicate {
		msg = fmt.Sprintf("Already remembered as %s (%s, scope %s); not stored twice.", it.Entry.ID, it.Entry.Kind, it.Entry.Scope)
	}
	if res.Replaced != nil {
		out.Replaced = res.Replaced.ID
		msg += fmt.Sprintf(" It replaces %s.", res.Replaced.ID)
	}
	return textResult(msg), out, nil
}

// RecallIn are recall's arguments.
type RecallIn struct {
	Query string   `json:"query" jsonschema:"what to look for, in plain words (a question works); empty lists the newest memories that pass the filters"`
	K     int      `json:"k,omitempty" jsonschema:"how many memories to return (default 10, or recall.k in the configuration)"`
	Kinds []string `json:"kinds,omitempty" jsonschema:"only these kinds"`
	Scope string   `json:"scope,omitempty" jsonschema:"search this scope and global (default: every scope, favouring the current project)"`
	Since string   `json:"since,omitempty" jsonschema:"only memories created at or after this: RFC 3339 time, a date, or a duration ago such as 72h or 30d"`
	Tags  []string `json:"tags,omitempty" jsonschema:"only memories with one of these tags"`
	Mode  string   `json:"mode,omitempty" jsonschema:"lexical (exact words), vector (meaning) or hybrid (both; default)"`
	// MinScore is a pointer so that 0 can beat recall.min_score.
	MinScore *float64 `json:"min_score,omitempty" jsonschema:"leave out memories scoring below this, at least 0 (default 0, or recall.min_score in the configuration); a perfect, brand-new match scores about 1"`
}

// RecallOut are the memories found, best first.
type RecallOut struct {
	Memories []Memory `json:"memories"`
}

func recallTool() *mcp.Tool {
	return tool[RecallIn, RecallOut]("recall", "Recall",
		"Search the user's long-term memory and return the most relevant memories, best first, each with its id, kind, scope, date and text. "+
			"Hybrid search (keywords and meaning), favouring recent memories and the current project. Call it before answering anything that may depend on what was decided or learned before.",
		func(p map[string]*jsonschema.Schema) {
			between(p["k"], 1, maxK)
			p["kinds"].Items.Enum = enum(mem.Kinds...)
			p["mode"].Enum = enum(mira.RecallModes...)
			p["min_score"].Minimum = ptr(0.0)
		}, readOnly)
}

func (s *server) recall(ctx context.Context, in RecallIn) (*mcp.CallToolResult, RecallOut, error) {
	out := RecallOut{Memories: []Memory{}}
	q := mira.Query{Text: in.Query, K: in.K, Kinds: in.Kinds, Scope: in.Scope, Tags: in.Tags, Mode: in.Mode, MinScore: in.MinScore}
	if in.Since != "" {
		t, err := mira.ParseSince(in.Since, time.Now())
		if err != nil {
			return nil, out, fmt.Errorf("since: %v", err)
		}
		q.Since = t
	}
	recs, err := s.m.Recall(ctx, q)
	if err != nil {
		return nil, out, err
	}
	for _, r := range recs {
		out.Memories = append(out.Memories, memoryOf(r))
	}
	return textResult(lines(out.Memories, "No memory matches.")), out, nil
}

// ListIn are list's arguments.
type ListIn struct {
	Kind  string `json:"kind,omitempty" jsonschema:"only this kind (default: every kind)"`
	Scope string `json:"scope,omitempty" jsonschema:"only this scope and global"`
	Since string `json:"since,omitempty" jsonschema:"only memories created at or after this: RFC 3339 time, a date, or a duration ago such as 72h or 30d"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many (default 20)"`
}

func listTool() *mcp.Tool {
	return tool[ListIn, RecallOut]("list", "List recent memories",
		"List the newest memories, optionally of one kind (e.g. the open tasks, the latest decisions) or one scope, newest first.",
		func(p map[string]*jsonschema.Schema) {
			p["kind"].Enum = enum(mem.Kinds...)
			between(p["limit"], 1, maxK)
		}, readOnly)
}

func (s *server) list(ctx context.Context, in ListIn) (*mcp.CallToolResult, RecallOut, error) {
	r := RecallIn{K: in.Limit, Scope: in.Scope, Since: in.Since, Mode: "lexical"}
	if r.K == 0 {
		r.K = 20
	}
	if in.Kind != "" {
		r.Kinds = []string{in.Kind}
	}
	return s.recall(ctx, r)
}

// ForgetIn are forget's arguments.
type ForgetIn struct {
	IDs    []string `json:"ids" jsonschema:"ids of the memories to forget, as recall returned them"`
	Reason string   `json:"reason,omitempty" jsonschema:"why, kept in the memory's history"`
}

// ForgetOut are the memories forgotten.
type ForgetOut struct {
	Forgotten []Memory `json:"forgotten"`
}

func forgetTool() *mcp.Tool {
	return tool[ForgetIn, ForgetOut]("forget", "Forget",
		"Forget memories by id: they leave every recall and context, and stay only in the store's git history as tombstones. "+
			"Use it when the user asks to forget something or a memory is wrong (to correct one, prefer remember with replace). All ids or none.",
		func(p map[string]*jsonschema.Schema) {
			p["ids"].MinItems = ptr(1)
			p["ids"].MaxItems = ptr(maxK)
		}, mcp.ToolAnnotations{DestructiveHint: ptr(true)})
}

func (s *server) forget(ctx context.Context, in ForgetIn) (*mcp.CallToolResult, ForgetOut, error) {
	out := ForgetOut{Forgotten: []Memory{}}
	if len(in.IDs) == 0 {
		return nil, out, fmt.Errorf("ids is empty: give the ids of the memories to forget")
	}
	res, err := s.m.Forget(ctx, in.IDs, mira.ForgetOptions{Reason: in.Reason})
	if err != nil {
		return nil, out, err
	}
	ids := make([]string, len(res.Entries))
	for i, e := range res.Entries {
		out.Forgotten = append(out.Forgotten, memoryOf(e.Record()))
		ids[i] = e.ID
	}
	return textResult(fmt.Sprintf("Forgot %s.", strings.Join(ids, ", "))), out, nil
}

// ContextIn are context's arguments.
type ContextIn struct {
	Query  string `json:"query,omitempty" jsonschema:"the question or task the context is for: its relevant memories are recalled into the block"`
	Budget int    `json:"budget,omitempty" jsonschema:"most tokens the block may take (default: the mode's, 4000 for light)"`
	Mode   string `json:"mode,omitempty" jsonschema:"off (pins only), light (compact, default) or heavy (full texts, larger budget)"`
	Scope  string `json:"scope,omitempty" jsonschema:"also take pins, corrections, goals, tasks and summaries from this scope (default: global and the current project)"`
	K      int    `json:"k,omitempty" jsonschema:"how many recalled memories to consider (default 10)"`
	// Code, as mira-context takes it.
	Files  []string `json:"files,omitempty" jsonschema:"files the task is about: the code that changes with them counts too"`
	NoCode bool     `json:"no_code,omitempty" jsonschema:"take no code from the project's code index (by default, with a query and an index built, the code map and the query's code cards, as the mode says)"`
}

// ContextOut is the planned block.
type ContextOut struct {
	Prompt   string `json:"prompt" jsonschema:"the context block to put in a prompt"`
	PlanID   string `json:"plan_id" jsonschema:"identifies exactly this block; the same inputs give the same id and bytes"`
	Tokens   int    `json:"tokens"`
	Budget   int    `json:"budget"`
	Included int    `json:"included"`
	Excluded int    `json:"excluded"`
}

func contextTool() *mcp.Tool {
	return tool[ContextIn, ContextOut]("context", "Context block",
		"Build the memory block to put at the top of a prompt, under a token budget: pinned memories, open corrections, goals and tasks, the latest conversation summary, "+
			"and the memories most relevant to the query; with a query, in a project whose code is indexed, also the code map and the definitions the query needs. "+
			"Stable parts come first so prompt caches keep hitting.",
		func(p map[string]*jsonschema.Schema) {
			p["mode"].Enum = enum(string(plan.ModeOff), string(plan.ModeLight), string(plan.ModeHeavy))
			between(p["budget"], 100, 200000)
			between(p["k"], 1, maxK)
		}, readOnly)
}

func (s *server) context(ctx context.Context, in ContextIn) (*mcp.CallToolResult, ContextOut, error) {
	var out ContextOut
	req := mira.ContextRequest{Mode: in.Mode, Budget: in.Budget, Query: in.Query}
	if in.Scope != "" {
		req.Scopes = []string{in.Scope}
	}
	if strings.TrimSpace(in.Query) != "" {
		recs, err := s.m.Recall(ctx, mira.Query{Text: in.Query, K: in.K, Scope: in.Scope})
		if err != nil {
			return nil, out, err
		}
		for _, r := range recs {
			req.Items = append(req.Items, plan.FromRecord(r))
		}
	}
	if !in.NoCode && strings.TrimSpace(in.Query) != "" && in.Mode != string(plan.ModeOff) {
		code, err := s.code.existing(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, out, ctx.Err()
			}
			// The memories matter more than the code beside them.
			s.log("context: %v; planning without code", err)
		} else if code != nil {
			req.Code = code
			for _, f := range in.Files {
				req.CodeFiles = append(req.CodeFiles, code.Rel(f))
			}
		}
	}
	p, err := s.m.Context(ctx, req)
	if err != nil {
		return nil, out, err
	}
	out = ContextOut{Prompt: p.Prompt(), PlanID: p.ID, Tokens: p.Used, Budget: p.Budget, Included: len(p.Included), Excluded: len(p.Excluded)}
	prompt := out.Prompt
	if prompt == "" {
		prompt = "(The memory has nothing for this context.)"
	}
	return textResult(prompt), out, nil
}

// PinIn are pin's arguments.
type PinIn struct {
	ID    string `json:"id" jsonschema:"id of the memory"`
	Pin   string `json:"pin" jsonschema:"sticky (in every context until unpinned), leased (until 'until'), or none (unpin)"`
	Until string `json:"until,omitempty" jsonschema:"end of a leased pin: RFC 3339 time, a date, a duration from now such as 72h or 7d, or task:ID to last until that goal or task is closed"`
}

// PinOut is the memory as pinned.
type PinOut struct {
	Memory Memory `json:"memory"`
}

func pinTool() *mcp.Tool {
	return tool[PinIn, PinOut]("pin", "Pin or unpin",
		"Pin a memory into every context (sticky, or leased until a time), or unpin it. Use it for rules the user wants applied always.",
		func(p map[string]*jsonschema.Schema) {
			p["pin"].Enum = enum(mem.PinSticky, mem.PinLeased, "none")
		}, mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true})
}

func (s *server) pin(ctx context.Context, in PinIn) (*mcp.CallToolResult, PinOut, error) {
	var out PinOut
	pin := in.Pin
	if pin == "none" {
		pin = ""
	}
	lease, err := parseLease(in.Until)
	if err != nil {
		return nil, out, err
	}
	e, err := s.m.PinLease(ctx, in.ID, pin, lease)
	if err != nil {
		return nil, out, err
	}
	out.Memory = memoryOf(e.Record())
	msg := fmt.Sprintf("Pinned %s (%s).", e.ID, e.Pin)
	if e.Pin == "" {
		msg = fmt.Sprintf("Unpinned %s.", e.ID)
	}
	return textResult(msg), out, nil
}

// parseLease reads the end of a leased pin ("" for none): a time or
// task:ID. Leases of turns are an agent session's, not the store's.
func parseLease(s string) (mira.Lease, error) {
	if s == "" {
		return mira.Lease{}, nil
	}
	l, err := mira.ParseLease(s, time.Now())
	if err != nil {
		return l, fmt.Errorf("until: %v", err)
	}
	if l.Turns > 0 {
		return l, fmt.Errorf("until: %s: a lease of turns lasts only in a mira-agent session; give a time, a duration or task:ID", s)
	}
	return l, nil
}

// UnpinIn are unpin's arguments.
type UnpinIn struct {
	ID string `json:"id" jsonschema:"id of the memory"`
}

func unpinTool() *mcp.Tool {
	return tool[UnpinIn, PinOut]("unpin", "Unpin",
		"Take a memory's pin away: it leaves the contexts it was pinned into and stays in the store. The same as pin with pin none.",
		nil, mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true})
}

func (s *server) unpin(ctx context.Context, in UnpinIn) (*mcp.CallToolResult, PinOut, error) {
	return s.pin(ctx, PinIn{ID: in.ID, Pin: "none"})
}
