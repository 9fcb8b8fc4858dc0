package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/internal/retry"
	openai "github.com/sashabaranov/go-openai"
)

// EventKind tells what an Event reports.
type EventKind int

// The kinds of Event, in the order they usually come for one reply.
const (
	// EventReasoning carries a piece of the model's thinking in Text.
	EventReasoning EventKind = iota + 1
	// EventText carries a piece of the assistant text in Text.
	EventText
	// EventToolStart announces a tool call: ToolCall has its ID and name,
	// Index its position in Reply.ToolCalls. It comes with the first
	// piece of the call's arguments (servers send the name first), or
	// with EventToolDone for a call without arguments.
	EventToolStart
	// EventToolArgs carries a piece of a tool call's arguments in Text.
	EventToolArgs
	// EventToolDone reports a tool call complete, as it will be in
	// Reply.ToolCalls. All calls complete together, when the model
	// finishes, since parallel calls arrive interleaved.
	EventToolDone
	// EventUsage reports the reply's usage in Usage, at the end.
	EventUsage
)

// String returns the kind's name, e.g. "text".
func (k EventKind) String() string {
	switch k {
	case EventReasoning:
		return "reasoning"
	case EventText:
		return "text"
	case EventToolStart:
		return "tool-start"
	case EventToolArgs:
		return "tool-args"
	case EventToolDone:
		return "tool-done"
	case EventUsage:
		return "usage"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is a piece of progress in a streamed reply.
type Event struct {
	Kind EventKind
	// Text is the new piece of text, thinking or tool arguments.
	Text string
	// Index is the tool call's position in Reply.ToolCalls (tool events).
	Index int
	// ToolCall is the tool call as far as it has arrived (tool events).
	ToolCall openai.ToolCall
	// Usage is the reply's usage (EventUsage).
	Usage Usage
}

// errIdle is the cause with which a stream that went quiet is cancelled.
var errIdle = errors.New("stream idle")

// Stream sends req as a streaming request and calls on (which may be nil)
// with each piece of the reply as it arrives, from the calling goroutine:
// the stream is not read while on runs, so it should return quickly.
// It returns the complete reply: the text, the tool calls assembled from
// their deltas (parallel calls interleaved by index, names and arguments
// in pieces), the finish reason and the usage, which it asks for with
// stream_options.include_usage (dropped for the client's lifetime if the
// server refuses it).
//
// The request is adjusted as for Chat: an empty Model is the client's,
// and for models go-openai checks as reasoning models (o1, o3, o4, gpt-5
// prefixes) max_tokens becomes max_completion_tokens and the sampling
// parameters those models fix are dropped, so the request passes.
// ReasoningEffort is sent as given: see AcceptsEffort. Temperature 0 is
// never sent (go-openai omits zero values).
//
// A failed request is retried as by Chat only until the first chunk
// arrives; after that, nothing is repeated, since on has seen part of the
// reply. Cancelling ctx aborts the stream at once: the error wraps
// ctx.Err(). After an error, the reply returned with it (non-nil once the
// stream had started) holds what had arrived, for a caller that keeps
// partial answers.
func (c *Client) Stream(ctx context.Context, req openai.ChatCompletionRequest, on func(Event)) (*Reply, error) {
	req = c.prepare(req)
	if on == nil {
		on = func(Event) {}
	}
	var partial *Reply
	err := c.retry.Do(ctx, func(ctx context.Context) error {
		r, started, err := c.streamOnce(ctx, req, on)
		if started {
			partial = r
			// Too late to retry: stop, whatever the error.
			err = retry.Permanent(err)
		}
		return err
	})
	if err != nil {
		return partial, fmt.Errorf("stream from model %q: %w", req.Model, err)
	}
	return partial, nil
}

// streamOnce makes one streaming attempt. started reports whether any
// chunk arrived (and so whether on was called); reply is set when it did.
func (c *Client) streamOnce(ctx context.Context, req openai.ChatCompletionRequest, on func(Event)) (reply *Reply, started bool, err error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(c.timeout, func() { cancel(errIdle) })
	defer idle.Stop()

	var stream *openai.ChatCompletionStream
	for {
		withUsage := !c.noStreamOptions.Load()
		req.StreamOptions = nil
		if withUsage {
			req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
		}
		hctx, header := retry.RecordHeader(actx)
		stream, err = c.api.CreateChatCompletionStream(hctx, req)
		if err == nil {
			break
		}
		err = c.streamFailure(err, header(), actx, 0)
		if withUsage && mentions(err, "stream_options", "include_usage") {
			c.noStreamOptions.Store(true)
			continue
		}
		return nil, false, err
	}
	defer stream.Close()

	acc := newAccumulator(on)
	for {
		raw, rerr := stream.RecvRaw()
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			err = c.streamFailure(rerr, nil, actx, acc.chunks)
			if acc.chunks == 0 {
				return nil, false, err
			}
			return acc.reply(), true, err
		}
		idle.Reset(c.timeout)
		var ch chunk
		if jerr := json.Unmarshal(raw, &ch); jerr != nil {
			err = fmt.Errorf("unreadable stream chunk %q: %w", excerpt(string(raw)), jerr)
			if acc.chunks == 0 {
				return nil, false, err
			}
			return acc.reply(), true, err
		}
		acc.add(&ch)
	}
	if acc.chunks == 0 {
		return nil, false, errors.New("the stream ended before any data (does the server support streaming?)")
	}
	acc.finish()
	r := acc.reply()
	c.count(r.Usage)
	on(Event{Kind: EventUsage, Usage: r.Usage})
	return r, true, nil
}

// streamFailure classifies a failure of a stream after n chunks. A stream
// that went quiet for the timeout is transient only before its first
// chunk.
func (c *Client) streamFailure(err error, h http.Header, actx context.Context, n int) error {
	if actx.Err() != nil {
		cause := context.Cause(actx)
		switch {
		case cause == errIdle && n == 0:
			return retry.Transient(fmt.Errorf("no reply within %v", c.timeout), 0)
		case cause == errIdle:
			return fmt.Errorf("the stream stalled: no data for %v after %d chunks", c.timeout, n)
		case n > 0:
			return fmt.Errorf("stream interrupted after %d chunks: %w", n, cause)
		}
		return fmt.Errorf("request interrupted: %w", cause)
	}
	if n > 0 {
		return fmt.Errorf("stream cut after %d chunks: %w", n, err)
	}
	return classify(err, h, actx, c.timeout)
}

// chunk is one streamed chunk. It is decoded here rather than by
// go-openai to also read "reasoning", the name vLLM, Ollama and
// OpenRouter use for reasoning_content.
type chunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string            `json:"content"`
			ReasoningContent string            `json:"reasoning_content"`
			Reasoning        string            `json:"reasoning"`
			ToolCalls        []openai.ToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openai.Usage `json:"usage"`
}

// accumulator assembles a streamed reply and reports its progress.
type accumulator struct {
	on        func(Event)
	chunks    int
	text      strings.Builder
	reasoning strings.Builder
	calls     []*callState // in order of index
	finishRsn string
	usage     *openai.Usage
}

// callState is a tool call being assembled.
type callState struct {
	index   int
	id      string
	typ     openai.ToolType
	name    strings.Builder
	args    strings.Builder
	started bool
	final   *openai.ToolCall // set when complete
}

func newAccumulator(on func(Event)) *accumulator { return &accumulator{on: on} }

// add takes in one chunk. Only the first choice is followed: the client
// never asks for more.
func (a *accumulator) add(ch *chunk) {
	a.chunks++
	if ch.Usage != nil {
		a.usage = ch.Usage
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue
		}
		d := choice.Delta
		// vLLM sends some thinking under both names: take one.
		if r := d.ReasoningContent; r != "" || d.Reasoning != "" {
			if r == "" {
				r = d.Reasoning
			}
			a.reasoning.WriteString(r)
			a.on(Event{Kind: EventReasoning, Text: r})
		}
		if d.Content != "" {
			a.text.WriteString(d.Content)
			a.on(Event{Kind: EventText, Text: d.Content})
		}
		for _, tc := range d.ToolCalls {
			a.toolDelta(tc)
		}
		if choice.FinishReason != "" && choice.FinishReason != string(openai.FinishReasonNull) {
			a.finishRsn = choice.FinishReason
			a.finish()
		}
	}
}

// toolDelta takes in a piece of a tool call.
func (a *accumulator) toolDelta(tc openai.ToolCall) {
	cs := a.callFor(tc)
	if tc.ID != "" && cs.id == "" {
		cs.id = tc.ID
	}
	if tc.Type != "" {
		cs.typ = tc.Type
	}
	// Some servers repeat the whole name in later deltas; a name only
	// grows until the arguments begin.
	if !cs.started {
		cs.name.WriteString(tc.Function.Name)
	}
	if args := tc.Function.Arguments; args != "" && cs.final == nil {
		if !cs.started {
			cs.started = true
			a.on(Event{Kind: EventToolStart, Index: a.position(cs), ToolCall: cs.snapshot()})
		}
		cs.args.WriteString(args)
		a.on(Event{Kind: EventToolArgs, Index: a.position(cs), Text: args, ToolCall: cs.snapshot()})
	}
}

// callFor finds or opens the call a delta belongs to: by index, or, from
// servers that send none, by ID, else the latest call.
func (a *accumulator) callFor(tc openai.ToolCall) *callState {
	if tc.Index != nil {
		for _, cs := range a.calls {
			if cs.index == *tc.Index {
				return cs
			}
		}
		return a.open(*tc.Index)
	}
	if tc.ID != "" {
		for _, cs := range a.calls {
			if cs.id == tc.ID {
				return cs
			}
		}
	}
	if tc.ID == "" && len(a.calls) > 0 {
		return a.calls[len(a.calls)-1]
	}
	next := 0
	if len(a.calls) > 0 {
		next = a.calls[len(a.calls)-1].index + 1
	}
	return a.open(next)
}

// open adds a call with the given index, keeping the calls sorted.
func (a *accumulator) open(index int) *callState {
	cs := &callState{index: index}
	i, _ := slices.BinarySearchFunc(a.calls, index, func(c *callState, idx int) int { return c.index - idx })
	a.calls = slices.Insert(a.calls, i, cs)
	return cs
}

// position is the call's place in the reply's ToolCalls.
func (a *accumulator) position(cs *callState) int {
	return slices.Index(a.calls, cs)
}

// snapshot returns the call as far as it has arrived.
func (cs *callState) snapshot() openai.ToolCall {
	typ := cs.typ
	if typ == "" {
		typ = openai.ToolTypeFunction
	}
	return openai.ToolCall{
		ID:       cs.id,
		Type:     typ,
		Function: openai.FunctionCall{Name: cs.name.String(), Arguments: cs.args.String()},
	}
}

// finish completes every open tool call, announcing those that never
// had arguments.
func (a *accumulator) finish() {
	for i, cs := range a.calls {
		if cs.final != nil {
			continue
		}
		if !cs.started {
			cs.started = true
			a.on(Event{Kind: EventToolStart, Index: i, ToolCall: cs.snapshot()})
		}
		tc := finishCalls([]openai.ToolCall{cs.snapshot()})[0]
		cs.id = tc.ID
		cs.final = &tc
		a.on(Event{Kind: EventToolDone, Index: i, ToolCall: tc})
	}
}

// reply returns the reply as far as it has arrived; calls not yet
// complete are included as they are.
func (a *accumulator) reply() *Reply {
	r := &Reply{
		Content:      a.text.String(),
		Reasoning:    a.reasoning.String(),
		FinishReason: a.finishRsn,
		Usage:        usageOf(a.usage),
	}
	for _, cs := range a.calls {
		if cs.final != nil {
			r.ToolCalls = append(r.ToolCalls, *cs.final)
		} else {
			r.ToolCalls = append(r.ToolCalls, cs.snapshot())
		}
	}
	return r
}
