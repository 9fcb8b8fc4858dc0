package agentloop

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/miramem/mira/agentloop/tools"
	"github.com/miramem/mira/mem"
	openai "github.com/sashabaranov/go-openai"
)

// Source is the source field of the turns the agent stores.
const Source = "agent"

// Front matter fields of turns beyond the ones mem knows.
const (
	fieldToolCalls   = "tool_calls"
	fieldToolCallID  = "tool_call_id"
	fieldToolName    = "tool_name"
	fieldNoText      = "no_text"
	fieldIsError     = "is_error"
	fieldDenied      = "denied"
	fieldArtifacts   = "artifacts"
	fieldModel       = "model"
	fieldInterrupted = "interrupted"
	fieldReasoning   = "reasoning"
)

// Roles of turns.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
	roleTool      = "tool"
)

// interruptedNote ends the text of a reply the user cut short, so that the
// model later sees it was not finished.
const interruptedNote = "[interrupted by the user]"

// noResult answers a tool call that has no stored result: the agent was
// stopped between the call and its result.
const noResult = "(no result: the agent stopped before this call ran)"

// emptyReply is stored for an answer with neither text nor tool calls:
// an entry needs a body, and a chat message without content is refused.
const emptyReply = "(empty reply)"

// storedCall is a tool call as an assistant turn's front matter keeps it,
// the arguments as the JSON text the model sent.
type storedCall struct {
	ID        string `json:"id" yaml:"id"`
	Name      string `json:"name" yaml:"name"`
	Arguments string `json:"arguments" yaml:"arguments"`
}

// normBody is the body as mem reads it back: an entry file holds the text
// between its front matter and a final newline, and reading drops one
// leading and every trailing newline. The agent keeps bodies in this form
// so that a restarted agent sends the same bytes.
func normBody(s string) string {
	return strings.TrimRight(strings.TrimPrefix(s, "\n"), "\n")
}

// userEntry makes the entry of a user message.
func (a *Agent) userEntry(text string) *mem.Entry {
	return a.turn(roleUser, tools.Redact(text))
}

// assistantEntry makes the entry of a reply.
func (a *Agent) assistantEntry(r replyParts) *mem.Entry {
	text := normBody(tools.Redact(r.text))
	if r.interrupted {
		text = strings.TrimRight(text+"\n\n"+interruptedNote, "\n")
		text = strings.TrimLeft(text, "\n")
	}
	e := a.turn(roleAssistant, text)
	e.Extra[fieldModel] = a.model.Model()
	if r.plan != "" {
		e.Extra[fieldPlan] = r.plan
	}
	if r.interrupted {
		e.Extra[fieldInterrupted] = true
	}
	if r.usage.Requests > 0 {
		e.Extra[fieldUsage] = usageField(r.usage)
	}
	if len(r.calls) > 0 {
		calls := make([]storedCall, len(r.calls))
		for i, c := range r.calls {
			// The id and name are the model's words as much as the
			// arguments are.
			calls[i] = storedCall{ID: tools.Redact(c.ID), Name: tools.Redact(c.Function.Name), Arguments: tools.Redact(c.Function.Arguments)}
		}
		e.Extra[fieldToolCalls] = calls
		// Thinking models that call tools (DeepSeek's) refuse a
		// conversation whose tool-calling replies lack their reasoning,
		// so it is kept with them; other replies' reasoning is not sent
		// back by any server, and is not kept.
		if r := strings.TrimSpace(tools.Redact(r.reasoning)); r != "" {
			e.Extra[fieldReasoning] = r
		}
		if strings.TrimSpace(text) == "" {
			e.Body = describeCalls(calls)
			e.Extra[fieldNoText] = true
		}
	}
	if strings.TrimSpace(e.Body) == "" {
		e.Body = emptyReply
	}
	return e
}

// toolEntry makes the entry of a tool result.
func (a *Agent) toolEntry(call openai.ToolCall, res tools.Result) *mem.Entry {
	body := normBody(tools.Redact(res.Content))
	if strings.TrimSpace(body) == "" {
		body = "(no output)"
	}
	e := a.turn(roleTool, body)
	e.Extra[fieldToolCallID] = tools.Redact(call.ID)
	e.Extra[fieldToolName] = tools.Redact(call.Function.Name)
	if res.IsError {
		e.Extra[fieldIsError] = true
	}
	if res.Denied {
		e.Extra[fieldDenied] = true
	}
	if len(res.Artifacts) > 0 {
		e.Extra[fieldArtifacts] = res.Artifacts
	}
	return e
}

func (a *Agent) turn(role, text string) *mem.Entry {
	return &mem.Entry{
		Kind: mem.KindTurn, Scope: a.cfg.Conversation, Role: role, Source: Source,
		Project: a.project.Name, Body: normBody(text), Extra: map[string]any{},
	}
}

// describeCalls is the body of an assistant turn that only called tools:
// readable in the file and in summaries.
func describeCalls(calls []storedCall) string {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "→ %s %s", c.Name, clip(oneLine(c.Arguments), 200))
	}
	return b.String()
}

// store commits one turn, with extra commit trailers, and returns it as
// read back from its file, so that what the agent keeps is exactly what a
// restarted agent reads.
func (a *Agent) store(ctx context.Context, e *mem.Entry, trailers ...mem.Trailer) (*mem.Entry, error) {
	// A turn is written even when the user has just cancelled: what was
	// said stays said.
	ctx = context.WithoutCancel(ctx)
	e.CreatedAt = a.stamp()
	opt := mem.TurnOptions{
		Source: "conversation " + a.cfg.Conversation,
		Subject: func([]*mem.Entry) string {
			subject := fmt.Sprintf("agent: %s turn %s", e.Role, e.ID)
			if line := firstLine(e.Body, 60); line != "" {
				subject += fmt.Sprintf(" %q", line)
			}
			return subject
		},
	}
	if e.Role == roleAssistant {
		opt.Trailers = append(opt.Trailers, mem.Trailer{Key: "Mira-Model", Value: a.model.Model()})
	}
	opt.Trailers = append(opt.Trailers, trailers...)
	// The artifacts a tool call wrote go into the same commit as its
	// result, so the artifact://id the conversation mentions is in history.
	opt.Artifacts, _ = e.Extra[fieldArtifacts].([]string)
	head, err := a.cfg.Store.AppendTurns(ctx, []*mem.Entry{e}, opt)
	if err != nil {
		return nil, fmt.Errorf("store %s turn: %w", e.Role, err)
	}
	a.head = head
	back, err := a.cfg.Store.ReadPath(e.Path)
	if err != nil {
		return nil, fmt.Errorf("read back %s turn: %w", e.Role, err)
	}
	return back, nil
}

// stamp returns the creation time of the next turn. Entries carry whole
// seconds and are ordered by time and then id; ids made in one process
// increase within a second, but those of another process need not, so the
// first turn a process writes moves past the second of the newest turn
// already stored, and no turn is ever stamped before an earlier one.
func (a *Agent) stamp() time.Time {
	t := a.now().UTC().Truncate(time.Second)
	if !a.wrote && !t.After(a.lastStamp) && !a.lastStamp.IsZero() {
		t = a.lastStamp.Add(time.Second)
	}
	if t.Before(a.lastStamp) {
		t = a.lastStamp
	}
	a.lastStamp, a.wrote = t, true
	return t
}

// messagesOf turns stored turns into chat messages. Every tool call gets
// an answer and every tool message follows its call, whatever the store
// holds: a call whose result is missing (the agent was stopped between
// them) is answered with noResult, and a result whose call was summarized
// away is shown as a user message quoting it. So the messages are always
// a valid conversation, and the same turns always give the same messages.
func messagesOf(turns []*mem.Entry) []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	var pending []openai.ToolCall // calls of the last assistant turn not answered yet
	answer := func() {
		for _, c := range pending {
			out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: c.ID, Content: noResult})
		}
		pending = nil
	}
	for _, e := range turns {
		switch e.Role {
		case roleAssistant:
			answer()
			m := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: e.Body}
			m.ToolCalls = callsOf(e)
			if len(m.ToolCalls) > 0 {
				if boolField(e, fieldNoText) {
					m.Content = ""
				}
				m.ReasoningContent = stringField(e, fieldReasoning)
			}
			out = append(out, m)
			pending = append([]openai.ToolCall(nil), m.ToolCalls...)
		case roleTool:
			id := stringField(e, fieldToolCallID)
			at := -1
			for i, c := range pending {
				if c.ID == id {
					at = i
					break
				}
			}
			if at < 0 {
				answer()
				out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser,
					Content: fmt.Sprintf("[The result of an earlier %s call:]\n%s", cmp.Or(stringField(e, fieldToolName), "tool"), e.Body)})
				continue
			}
			pending = append(pending[:at], pending[at+1:]...)
			out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: e.Body})
		default:
			answer()
			out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: e.Body})
		}
	}
	answer()
	return out
}

// callsOf reads an assistant turn's tool calls.
func callsOf(e *mem.Entry) []openai.ToolCall {
	raw, ok := e.Fields()[fieldToolCalls].([]any)
	if !ok {
		return nil
	}
	var out []openai.ToolCall
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string {
			s, _ := m[k].(string)
			return s
		}
		args := str("arguments")
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		out = append(out, openai.ToolCall{
			ID: str("id"), Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: str("name"), Arguments: args},
		})
	}
	return out
}

func stringField(e *mem.Entry, key string) string {
	s, _ := e.Fields()[key].(string)
	return s
}

func boolField(e *mem.Entry, key string) bool {
	b, _ := e.Fields()[key].(bool)
	return b
}

// argsJSON returns a tool call's arguments as JSON for an event: as they
// are when they parse, else as a JSON string.
func argsJSON(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// oneLine flattens s to one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// firstLine is the first line of s, clipped to n characters.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	cut := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, cut = s[:i], true
	}
	if c := clip(s, n); c != s || cut {
		return strings.TrimSuffix(c, "…") + "…"
	}
	return s
}

// clip cuts s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
