package agentloop

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miramem/mira/agentloop/tools"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
	openai "github.com/sashabaranov/go-openai"
)

// CallLog keeps a record of every model call: what the model was shown
// and what came of it. *mira.Memory satisfies it (plans/calls/ in the
// store).
type CallLog interface {
	// AppendCall appends one record, a JSON object on one line, to the
	// conversation's log.
	AppendCall(conversation string, line []byte) error
	// ReadCalls returns the conversation's records, oldest first,
	// reporting to warn the lines it skips.
	ReadCalls(conversation string, warn func(error)) ([][]byte, error)
}

// Parts of a message's context, as call records name the plan an entry
// was planned in.
const (
	PartStanding = "standing"
	PartRecall   = "recall"
)

// Tool call outcomes in a call record.
const (
	OutcomeOK          = "ok"
	OutcomeError       = "error"
	OutcomeDenied      = "denied"
	OutcomeInterrupted = "interrupted"
)

// Edits in a call record: what came of a call of a tool that changes
// files.
const (
	EditKept     = "kept"
	EditNotMade  = "not made"
	EditReverted = "reverted"
)

// fieldPlan is the front matter field of an assistant turn that names the
// id of the call record of the request it answers.
const fieldPlan = "plan"

// CallRecord is what the agent records of one model call: the plans of
// the context, every candidate in or out and why, the tokens estimated
// and reported, and the tool calls of the reply with their outcomes.
// Fields are only ever added.
type CallRecord struct {
	// ID is short and stable: the plan id the assistant turn's front
	// matter names.
	ID           string    `json:"id"`
	Time         time.Time `json:"time"`
	Conversation string    `json:"conversation"`
	// UserTurn is the message's user turn; Turn the assistant turn that
	// stored the reply, when one was stored.
	UserTurn string `json:"user_turn"`
	Turn     string `json:"turn,omitempty"`
	// Step is the request's number within the message, from 1.
	Step  int       `json:"step"`
	Model string    `json:"model"`
	Mode  plan.Mode `json:"mode"`
	// Query is the start of the user's message, which recall searched
	// for.
	Query string `json:"query,omitempty"`
	// Plans are the plans of the standing context and of the recalled
	// memories.
	Plans []PlanRef `json:"plans"`
	// Retrieved is what recall returned, best first, with what the
	// planner then left out.
	Retrieved []Retrieved `json:"retrieved,omitempty"`
	// Entries are the plans' candidates, each included or excluded with
	// its reason.
	Entries []PlanEntry `json:"entries"`
	// Estimated counts the prompt with the agent's tokenizer; Reported is
	// the usage the provider reported, when it did.
	Estimated Estimate `json:"estimated"`
	Reported  *Usage   `json:"reported,omitempty"`
	// ToolCalls are the calls of the reply, with what came of them.
	ToolCalls []CallOutcome `json:"tool_calls,omitempty"`
	// Error is why the call failed, when it did.
	Error string `json:"error,omitempty"`
}

// PlanRef names one plan of a call's context.
type PlanRef struct {
	Part   string `json:"part"`
	ID     string `json:"id"`
	Budget int    `json:"budget"`
	Used   int    `json:"used"`
}

// Retrieved is one memory recall returned for a message.
type Retrieved struct {
	ID    string   `json:"id"`
	Kind  string   `json:"kind,omitempty"`
	Scope string   `json:"scope,omitempty"`
	Rank  int      `json:"rank"`
	Score *float64 `json:"score,omitempty"`
	// Title is the start of the memory's text.
	Title string `json:"title,omitempty"`
}

// PlanEntry is a candidate of one of the plans, as the planner placed it.
type PlanEntry struct {
	Part     string `json:"part"`
	Included bool   `json:"included"`
	plan.Entry
}

// Estimate counts a request's prompt with the agent's tokenizer, by part.
type Estimate struct {
	Total        int `json:"total"`
	Instructions int `json:"instructions"`
	Tools        int `json:"tools"`
	Standing     int `json:"standing"`
	Recall       int `json:"recall"`
	Conversation int `json:"conversation"`
	Messages     int `json:"messages"`
}

// CallOutcome is one tool call of a reply and what came of it.
type CallOutcome struct {
	ID      string `json:"id"`
	Tool    string `json:"tool"`
	Outcome string `json:"outcome"`
	// Edit is set for the tools that change files.
	Edit string `json:"edit,omitempty"`
}

// messageTokens is the chat format's cost of each message beyond its
// content (OpenAI's count for its chat models), and of priming the reply.
const (
	messageTokens = 3
	replyTokens   = 3
)

// queryChars bounds the start of the user's message a record keeps.
const queryChars = 200

// recorder builds the call records of one message.
type recorder struct {
	a       *Agent
	user    *mem.Entry
	base    CallRecord // what every step shares
	fixed   int        // tokens of the standing and recall blocks
	outcome []CallOutcome
}

// newRecorder starts the records of the message whose user turn is user,
// or returns nil when no call log is kept.
func (a *Agent) newRecorder(p *prompt, user *mem.Entry) *recorder {
	if a.cfg.CallLog == nil {
		return nil
	}
	r := &recorder{a: a, user: user}
	b := &r.base
	b.Conversation, b.UserTurn, b.Model, b.Mode = a.cfg.Conversation, user.ID, a.model.Model(), a.mode()
	b.Query = oneLine(head(user.Body, queryChars))
	b.Plans, b.Entries = planParts(PartStanding, a.standing, nil, nil)
	if a.recall != nil {
		b.Plans, b.Entries = planParts(PartRecall, a.recall, b.Plans, b.Entries)
	}
	for i, rec := range a.retrieved {
		b.Retrieved = append(b.Retrieved, Retrieved{ID: rec.ID, Kind: rec.Kind, Scope: rec.Scope, Rank: i + 1, Score: rec.Score, Title: title(rec.Text)})
	}
	b.Estimated.Standing = a.tok.Count(p.standing)
	b.Estimated.Recall = a.tok.Count(p.recall)
	r.fixed = b.Estimated.Standing + b.Estimated.Recall
	return r
}

// planParts adds a plan's reference and entries to refs and entries.
func planParts(part string, p *plan.Plan, refs []PlanRef, entries []PlanEntry) ([]PlanRef, []PlanEntry) {
	if p == nil {
		return refs, entries
	}
	refs = append(refs, PlanRef{Part: part, ID: p.ID, Budget: p.Budget, Used: p.Used})
	entries = slices.Grow(entries, len(p.Included)+len(p.Excluded))
	for _, e := range p.Included {
		entries = append(entries, PlanEntry{Part: part, Included: true, Entry: e})
	}
	for _, e := range p.Excluded {
		entries = append(entries, PlanEntry{Part: part, Entry: e})
	}
	return refs, entries
}

// id is the plan id of the message's request number step: a short hash
// of the conversation, the user turn, the step and the plans, so that the
// same call always has the same id and no two calls share one.
func (r *recorder) id(step int) string {
	if r == nil {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(r.base.Conversation + "\x00" + r.base.UserTurn + "\x00" + strconv.Itoa(step)))
	for _, p := range r.base.Plans {
		h.Write([]byte("\x00" + p.Part + ":" + p.ID))
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// tool notes what came of one tool call.
func (r *recorder) tool(c openai.ToolCall, res tools.Result, interrupted bool) {
	if r == nil {
		return
	}
	o := CallOutcome{ID: tools.Redact(c.ID), Tool: tools.Redact(c.Function.Name), Outcome: OutcomeOK}
	switch {
	case interrupted:
		o.Outcome = OutcomeInterrupted
	case res.Denied:
		o.Outcome = OutcomeDenied
	case res.IsError:
		o.Outcome = OutcomeError
	}
	switch {
	case res.Reverted:
		o.Edit = EditReverted
	case c.Function.Name == "write_file" || c.Function.Name == "edit_file":
		o.Edit = EditKept
		if o.Outcome != OutcomeOK {
			o.Edit = EditNotMade
		}
	}
	r.outcome = append(r.outcome, o)
}

// write records request number step: req was sent, reply (nil when none
// came) was stored as turn (empty when it was not), and callErr is why
// the call or its storing failed. A record that cannot be written is
// reported, never fatal: the conversation matters more than its log.
func (r *recorder) write(step int, req openai.ChatCompletionRequest, reply *llm.Reply, turn string, callErr error) {
	if r == nil {
		return
	}
	rec := r.base
	rec.ID, rec.Time, rec.Step, rec.Turn = r.id(step), r.a.now().UTC().Truncate(time.Second), step, turn
	rec.ToolCalls, r.outcome = r.outcome, nil
	rec.Estimated = r.a.estimate(req, r.fixed, rec.Estimated)
	if reply != nil && reply.Usage.Requests > 0 && reply.Usage.PromptTokens+reply.Usage.CompletionTokens > 0 {
		u := usageOf(reply.Usage)
		rec.Reported = &u
	}
	if callErr != nil {
		rec.Error = tools.Redact(callErr.Error())
	}
	line, err := json.Marshal(&rec)
	if err == nil {
		err = r.a.cfg.CallLog.AppendCall(r.a.cfg.Conversation, line)
	}
	if err != nil {
		r.a.cfg.Warn(fmt.Errorf("call record %s: %w", rec.ID, err))
	}
}

// estimate counts the prompt of req: the instructions and the tools'
// schemas (counted once a session, and again after Switch), the standing and recall blocks
// (counted once a message, in fixed), and the conversation's turns
// (counted once each).
func (a *Agent) estimate(req openai.ChatCompletionRequest, fixed int, e Estimate) Estimate {
	if a.instrTokens < 0 {
		a.instrTokens = a.tok.Count(a.cfg.Instructions)
	}
	e.Instructions = a.instrTokens
	e.Tools = 0
	if len(req.Tools) > 0 {
		if a.toolsTokens < 0 {
			js, _ := json.Marshal(req.Tools)
			a.toolsTokens = a.tok.Count(string(js))
		}
		e.Tools = a.toolsTokens
	}
	e.Conversation = 0
	for _, t := range a.tail {
		e.Conversation += a.turnTokens(t)
	}
	for _, t := range a.buffer {
		e.Conversation += a.turnTokens(t)
	}
	e.Messages = len(req.Messages)
	e.Total = e.Instructions + e.Tools + fixed + e.Conversation + messageTokens*e.Messages + replyTokens
	return e
}

// titleChars bounds the start of a memory's text a record keeps.
const titleChars = 80

// title is the start of a memory's first line, for a person to recognize
// it by.
func title(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + "…"
	}
	// A memory edited by hand may hold what the store refuses.
	return tools.Redact(head(s, titleChars))
}

// head is s cut to n characters, marked when cut, without converting more
// of s than it keeps: a memory may be megabytes long.
func head(s string, n int) string {
	i := 0
	for at := range s {
		if i == n {
			return s[:at] + "…"
		}
		i++
	}
	return s
}
