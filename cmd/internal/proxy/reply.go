package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
)

// answer is the assistant's answer as the proxy stores it: its text and
// tool calls, gathered from a plain reply or from the chunks of a stream.
type answer struct {
	text     strings.Builder
	calls    []toolCall
	finished bool // a finish_reason or [DONE] was seen
	done     bool // [DONE] was seen: nothing more comes
	model    string
	// failed, when set, says how the reply failed: a stream that carried
	// an error event. A failed reply is no answer, and is not stored.
	failed string
}

// toolCall is one tool call of an answer.
type toolCall struct {
	ID        string `json:"id" yaml:"id"`
	Name      string `json:"name" yaml:"name"`
	Arguments string `json:"arguments" yaml:"arguments"`
}

// wireCall is a tool call, or a piece of one in a stream's delta.
type wireCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// wireMessage is a reply's message or a chunk's delta.
type wireMessage struct {
	Content   *string    `json:"content"`
	ToolCalls []wireCall `json:"tool_calls"`
}

// parseReply reads a plain (not streamed) chat completion.
func (a *answer) parseReply(body []byte) {
	var r struct {
		Model   string `json:"model"`
		Choices []struct {
			Message      wireMessage `json:"message"`
			FinishReason *string     `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &r) != nil || len(r.Choices) == 0 {
		return
	}
	a.model = r.Model
	c := r.Choices[0]
	if c.Message.Content != nil {
		a.text.WriteString(*c.Message.Content)
	}
	for _, tc := range c.Message.ToolCalls {
		a.calls = append(a.calls, toolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	a.finished = true
}

// sseReader gathers an answer from a stream of server-sent events as it
// passes through, whatever size the pieces it is fed come in.
type sseReader struct {
	a       *answer
	evType  string // the type of the event being read (its event: line)
	line    []byte
	byIndex map[int]int // a tool call's index in the stream → its place in a.calls
}

// Write feeds the next bytes of the stream.
func (s *sseReader) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.line = append(s.line, p...)
			break
		}
		s.line = append(s.line, p[:i]...)
		s.event(bytes.TrimRight(s.line, "\r"))
		s.line = s.line[:0]
		p = p[i+1:]
	}
	return n, nil
}

// event reads one line of the stream.
func (s *sseReader) event(line []byte) {
	if len(line) == 0 {
		s.evType = "" // the end of an event
		return
	}
	if ev, ok := bytes.CutPrefix(line, []byte("event:")); ok {
		s.evType = string(bytes.TrimSpace(ev))
		return
	}
	data, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return
	}
	data = bytes.TrimSpace(data)
	if s.evType == "error" {
		s.a.failed = "the stream ended in an error event: " + clip(string(data))
		return
	}
	if string(data) == "[DONE]" {
		s.a.finished, s.a.done = true, true
		return
	}
	var c struct {
		Error   json.RawMessage `json:"error"`
		Model   string          `json:"model"`
		Choices []struct {
			Index        int         `json:"index"`
			Delta        wireMessage `json:"delta"`
			FinishReason *string     `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal(data, &c) != nil {
		return
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		s.a.failed = "the stream ended in an error event: " + clip(string(c.Error))
		return
	}
	if c.Model != "" {
		s.a.model = c.Model
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // the proxy keeps the first choice, as clients show it
		}
		if ch.Delta.Content != nil {
			s.a.text.WriteString(*ch.Delta.Content)
		}
		for _, tc := range ch.Delta.ToolCalls {
			idx := len(s.a.calls)
			if tc.Index != nil {
				idx = *tc.Index
			}
			if s.byIndex == nil {
				s.byIndex = map[int]int{}
			}
			at, seen := s.byIndex[idx]
			if !seen {
				at = len(s.a.calls)
				s.byIndex[idx] = at
				s.a.calls = append(s.a.calls, toolCall{})
			}
			c := &s.a.calls[at]
			if tc.ID != "" {
				c.ID = tc.ID
			}
			c.Name += tc.Function.Name
			c.Arguments += tc.Function.Arguments
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.a.finished = true
		}
	}
}

// clip shortens a server's message for a log line.
func clip(s string) string {
	if r := []rune(s); len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return s
}

// describeCalls is the body of an answer that only called tools, so that
// the file and the summaries say what was asked.
func describeCalls(calls []toolCall) string {
	var lines []string
	for _, c := range calls {
		args := strings.Join(strings.Fields(c.Arguments), " ")
		if r := []rune(args); len(r) > 200 {
			args = string(r[:200]) + "…"
		}
		lines = append(lines, "→ "+c.Name+" "+args)
	}
	return strings.Join(lines, "\n")
}
