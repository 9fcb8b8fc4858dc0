// Package llmtest is a fake OpenAI-compatible chat server for tests. It
// speaks the real wire format of POST /v1/chat/completions: a plain JSON
// reply, or, when the request asks for "stream": true, server-sent events
// with text and reasoning split over several chunks, tool calls whose
// arguments arrive in pieces and interleave across parallel calls, a
// closing usage chunk and "data: [DONE]". A test scripts the replies in
// order, can answer from the request (Func), inject HTTP errors, raw
// bodies, delays, hangs and dropped connections, and inspects every
// request the server received.
//
//	srv := llmtest.New(t,
//		llmtest.Error(500, "overloaded"),
//		llmtest.Text("hello"),
//	)
//	c, _ := llm.New(llm.Config{BaseURL: srv.URL, Model: "test-model"})
//	...
//	got := srv.Requests()[1].LastUser()
//
// A request with no scripted reply left (and no Default) fails the test
// and is answered 400, which clients do not retry; scripted replies that
// were never requested fail the test at cleanup.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/miramem/mira/internal/text"
)

// DefaultChunkSize is the number of runes of text per streamed chunk when
// a Reply does not set ChunkSize. It is small on purpose, so that every
// streamed reply exercises the client's accumulation.
const DefaultChunkSize = 4

// created is the fixed "created" timestamp of every reply, so recorded
// replies are reproducible.
const created = 1700000000

// Server is a running fake chat server. Its methods are safe for
// concurrent use; the server itself answers requests concurrently, taking
// scripted replies in the order the requests arrive.
type Server struct {
	// URL is the API root clients are configured with; it ends in "/v1".
	URL string

	t    testing.TB
	hs   *httptest.Server
	done chan struct{} // closed at cleanup to release hanging handlers

	mu       sync.Mutex
	script   []Reply
	fallback *Reply
	reqs     []Request
}

// New starts a server that answers with replies in order and is shut down
// when the test ends.
func New(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{t: t, done: make(chan struct{}), script: append([]Reply(nil), replies...)}
	s.hs = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.hs.URL + "/v1"
	t.Cleanup(s.close)
	return s
}

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Default sets the reply given whenever the script is empty, for tests
// that do not care how many requests are made. A Func reply makes it
// answer each request on its own terms.
func (s *Server) Default(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = &r
}

// Pending returns the number of scripted replies not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Requests returns the requests received so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Last returns the most recent request, failing the test when there was
// none.
func (s *Server) Last() Request {
	s.t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		s.t.Fatalf("llmtest: no request was received")
	}
	return reqs[len(reqs)-1]
}

// close releases handlers that are hanging, shuts the server down and
// reports scripted replies that were never used.
func (s *Server) close() {
	close(s.done)
	s.hs.Close()
	if n := s.Pending(); n > 0 && !s.t.Failed() {
		s.t.Errorf("llmtest: %d scripted replies were never requested (%d requests received)", n, len(s.Requests()))
	}
}

// Request is one request the server received: the decoded chat request
// and the raw HTTP parts.
type Request struct {
	openai.ChatCompletionRequest

	Method string
	Path   string
	Header http.Header
	Body   []byte // the body as sent
}

// JSONMode reports whether the request asked for a JSON object reply
// (response_format json_object or json_schema).
func (r Request) JSONMode() bool {
	return r.ResponseFormat != nil &&
		(r.ResponseFormat.Type == openai.ChatCompletionResponseFormatTypeJSONObject ||
			r.ResponseFormat.Type == openai.ChatCompletionResponseFormatTypeJSONSchema)
}

// IncludeUsage reports whether a streaming request asked for the closing
// usage chunk.
func (r Request) IncludeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// System returns the text of the system and developer messages, joined by
// blank lines.
func (r Request) System() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == openai.ChatMessageRoleSystem || m.Role == openai.ChatMessageRoleDeveloper {
			parts = append(parts, messageText(m))
		}
	}
	return strings.Join(parts, "\n\n")
}

// LastUser returns the text of the last user message, or "" if there is
// none.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == openai.ChatMessageRoleUser {
			return messageText(r.Messages[i])
		}
	}
	return ""
}

// Text returns the text of every message, joined by blank lines: what a
// test searches to answer according to the prompt.
func (r Request) Text() string {
	parts := make([]string, 0, len(r.Messages))
	for _, m := range r.Messages {
		parts = append(parts, messageText(m))
	}
	return strings.Join(parts, "\n\n")
}

// messageText returns a message's text, including the text parts of a
// multi-part message.
func messageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var parts []string
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolCall is a tool call in a scripted reply. An empty ID becomes
// "call_<n>" with n its position in the reply.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON text, sent as is
}

// Usage is the token usage reported for a reply.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int // prompt_tokens_details.cached_tokens
	ReasoningTokens  int // completion_tokens_details.reasoning_tokens
}

// Reply is one scripted answer. The zero Reply is an empty assistant
// message; the constructors (Text, JSON, Tools, Error, Raw, Func, Hang)
// cover the common cases and the With methods adjust a copy.
type Reply struct {
	// Content is the assistant text.
	Content string
	// Reasoning is sent as reasoning_content (DeepSeek's and vLLM's field
	// for the model's thinking), before the content when streamed.
	Reasoning string
	// ToolCalls are the tool calls of the reply. Streamed, each call's
	// first chunk carries its index, id, type and name with empty
	// arguments, then the arguments follow in pieces, the calls taking
	// turns chunk by chunk.
	ToolCalls []ToolCall
	// FinishReason defaults to "tool_calls" when there are tool calls and
	// "stop" otherwise.
	FinishReason string
	// Usage is the reported usage. Nil reports a made-up but
	// deterministic count: words of the prompt and words of the reply.
	Usage *Usage
	// ChunkSize is the number of runes of text, reasoning or arguments per
	// streamed chunk (default DefaultChunkSize).
	ChunkSize int
	// SplitNames sends each tool name in two chunks, as some servers do.
	SplitNames bool

	// Status is the HTTP status (default 200).
	Status int
	// Header holds extra response headers, e.g. Retry-After.
	Header http.Header
	// Body, when not empty, is sent as is instead of a generated reply,
	// with Content-Type application/json (text/event-stream for a
	// streaming request) unless Header sets one.
	Body string

	// Delay is waited before answering.
	Delay time.Duration
	// Hang never answers: the handler waits until the client gives up
	// (or the test ends).
	Hang bool
	// Drop cuts the connection without answering, as a crashed server or
	// a broken network does.
	Drop bool
	// HangBeforeChunk, when positive, makes a streamed reply send its
	// chunks up to but not including this 1-based chunk and then hang
	// with the connection open; 1 hangs right after the headers.
	HangBeforeChunk int
	// DropBeforeChunk, when positive, makes a streamed reply send its
	// chunks up to but not including this 1-based chunk and then cut the
	// connection.
	DropBeforeChunk int

	fn func(Request) Reply
}

// Text returns a reply whose content is s.
func Text(s string) Reply { return Reply{Content: s} }

// JSON returns a reply whose content is v encoded as JSON. It panics if v
// cannot be encoded, which is a mistake in the test.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmtest.JSON: %v", err))
	}
	return Reply{Content: string(b)}
}

// Tools returns a reply that calls the given tools.
func Tools(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Error returns a failed reply with status and an error body in OpenAI's
// shape: {"error": {"message", "type", "code"}}.
func Error(status int, message string) Reply {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": nil, "code": nil,
	}})
	return Reply{Status: status, Body: string(b)}
}

// Raw returns a reply with the given status, content type and body, sent
// byte for byte: for malformed replies and servers with other error
// shapes.
func Raw(status int, contentType, body string) Reply {
	r := Reply{Status: status, Body: body}
	if contentType != "" {
		r.Header = http.Header{"Content-Type": {contentType}}
	}
	return r
}

// Func returns a reply computed from the request when it arrives.
func Func(f func(Request) Reply) Reply { return Reply{fn: f} }

// Hang returns a reply that never comes.
func Hang() Reply { return Reply{Hang: true} }

// WithHeader returns a copy of r that also sends the header key: value.
func (r Reply) WithHeader(key, value string) Reply {
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	r.Header = h
	return r
}

// WithUsage returns a copy of r reporting the given token counts.
func (r Reply) WithUsage(prompt, completion, cached int) Reply {
	r.Usage = &Usage{PromptTokens: prompt, CompletionTokens: completion, CachedTokens: cached}
	return r
}

// WithDelay returns a copy of r that is sent after d.
func (r Reply) WithDelay(d time.Duration) Reply {
	r.Delay = d
	return r
}

// WithFinish returns a copy of r with the given finish reason.
func (r Reply) WithFinish(reason string) Reply {
	r.FinishReason = reason
	return r
}

// serve records a request and answers it with the next reply.
func (s *Server) serve(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		s.t.Errorf("llmtest: reading request body: %v", err)
		return
	}
	req := Request{Method: hr.Method, Path: hr.URL.Path, Header: hr.Header.Clone(), Body: body}
	if hr.Method != http.MethodPost || hr.URL.Path != "/v1/chat/completions" {
		s.t.Errorf("llmtest: unexpected request %s %s (only POST /v1/chat/completions is served)", hr.Method, hr.URL.Path)
		writeError(w, http.StatusNotFound, "llmtest serves only POST /v1/chat/completions")
		return
	}
	if err := json.Unmarshal(body, &req.ChatCompletionRequest); err != nil {
		s.t.Errorf("llmtest: request body is not a chat request: %v\n%s", err, body)
		writeError(w, http.StatusBadRequest, "llmtest: cannot decode request: "+err.Error())
		return
	}

	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, req)
	var (
		reply Reply
		ok    = true
	)
	switch {
	case len(s.script) > 0:
		reply, s.script = s.script[0], s.script[1:]
	case s.fallback != nil:
		reply = *s.fallback
	default:
		ok = false
	}
	s.mu.Unlock()

	if !ok {
		s.t.Errorf("llmtest: request %d has no scripted reply (push more replies or set a Default); last user message: %q",
			n+1, text.Shorten(req.LastUser(), 200))
		writeError(w, http.StatusBadRequest, "llmtest: no scripted reply left")
		return
	}
	for depth := 0; reply.fn != nil; depth++ {
		if depth == 10 {
			s.t.Errorf("llmtest: Func replies nested more than 10 deep")
			writeError(w, http.StatusInternalServerError, "llmtest: Func nesting")
			return
		}
		reply = reply.fn(req)
	}
	s.answer(w, hr, req, reply, n)
}

// answer writes reply, the n-th of the server (from 0), for req.
func (s *Server) answer(w http.ResponseWriter, hr *http.Request, req Request, reply Reply, n int) {
	if reply.Delay > 0 && !s.wait(hr, reply.Delay) {
		return
	}
	if reply.Hang {
		s.wait(hr, -1)
		return
	}
	if reply.Drop {
		panic(http.ErrAbortHandler)
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if reply.Body != "" {
		if w.Header().Get("Content-Type") == "" {
			ct := "application/json"
			if req.Stream && status < 300 {
				ct = "text/event-stream"
			}
			w.Header().Set("Content-Type", ct)
		}
		w.WriteHeader(status)
		io.WriteString(w, reply.Body)
		return
	}
	id := "chatcmpl-llmtest-" + strconv.Itoa(n+1)
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(completion(id, req, reply))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	for i, c := range chunks(id, req, reply) {
		if reply.HangBeforeChunk == i+1 {
			flush()
			s.wait(hr, -1)
			return
		}
		if reply.DropBeforeChunk == i+1 {
			flush()
			// The server closes the connection without ending the
			// response: the client sees a broken stream.
			panic(http.ErrAbortHandler)
		}
		b, err := json.Marshal(c)
		if err != nil {
			s.t.Errorf("llmtest: encoding chunk: %v", err)
			return
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		flush()
	}
	io.WriteString(w, "data: [DONE]\n\n")
	flush()
}

// wait sleeps d (forever if negative) unless the client goes away or the
// test ends first, and reports whether the full time passed.
func (s *Server) wait(hr *http.Request, d time.Duration) bool {
	var timeout <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-timeout:
		return true
	case <-hr.Context().Done():
	case <-s.done:
	}
	return false
}

// writeError writes an OpenAI-shaped error reply.
func writeError(w http.ResponseWriter, status int, msg string) {
	e := Error(status, msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, e.Body)
}

// Wire shapes of replies, as OpenAI sends them.

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireMessage struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireChoice struct {
	Index        int         `json:"index"`
	Message      wireMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type wireCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   wireUsage    `json:"usage"`
}

type wireDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent *string        `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireStreamChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireChunk struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []wireStreamChoice `json:"choices"`
	// Usage is null in every chunk but the last when the request asked
	// for usage, and absent otherwise, as OpenAI does.
	Usage json.RawMessage `json:"usage,omitempty"`
}

// completion builds the non-streaming reply.
func completion(id string, req Request, r Reply) wireCompletion {
	msg := wireMessage{Role: openai.ChatMessageRoleAssistant, ReasoningContent: r.Reasoning}
	if r.Content != "" || len(r.ToolCalls) == 0 {
		content := r.Content
		msg.Content = &content
	}
	for i, tc := range r.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{
			ID: callID(tc, i), Type: "function",
			Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments},
		})
	}
	return wireCompletion{
		ID: id, Object: "chat.completion", Created: created, Model: req.Model,
		Choices: []wireChoice{{Message: msg, FinishReason: finishReason(r)}},
		Usage:   usage(req, r),
	}
}

// chunks builds the streamed reply: a role chunk, reasoning and content
// pieces, tool-call chunks, a finish chunk and, when asked for, a usage
// chunk.
func chunks(id string, req Request, r Reply) []wireChunk {
	size := r.ChunkSize
	if size <= 0 {
		size = DefaultChunkSize
	}
	var usageField json.RawMessage
	if req.IncludeUsage() {
		usageField = json.RawMessage("null")
	}
	chunk := func(d wireDelta, finish *string) wireChunk {
		return wireChunk{
			ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
			Choices: []wireStreamChoice{{Delta: d, FinishReason: finish}},
			Usage:   usageField,
		}
	}
	empty := ""
	out := []wireChunk{chunk(wireDelta{Role: openai.ChatMessageRoleAssistant, Content: &empty}, nil)}
	for _, p := range split(r.Reasoning, size) {
		out = append(out, chunk(wireDelta{ReasoningContent: &p}, nil))
	}
	for _, p := range split(r.Content, size) {
		out = append(out, chunk(wireDelta{Content: &p}, nil))
	}

	// Each call opens with its id, type and name, then the calls take
	// turns sending argument pieces, so parallel calls interleave.
	pieces := make([][]string, len(r.ToolCalls))
	for i, tc := range r.ToolCalls {
		name, rest := tc.Name, ""
		if r.SplitNames && len(tc.Name) > 1 {
			cut := len(tc.Name) / 2
			name, rest = tc.Name[:cut], tc.Name[cut:]
		}
		out = append(out, chunk(wireDelta{ToolCalls: []wireToolCall{{
			Index: ptr(i), ID: callID(tc, i), Type: "function",
			Function: wireFunction{Name: name},
		}}}, nil))
		if rest != "" {
			out = append(out, chunk(wireDelta{ToolCalls: []wireToolCall{{
				Index: ptr(i), Function: wireFunction{Name: rest},
			}}}, nil))
		}
		pieces[i] = split(tc.Arguments, size)
	}
	for round := 0; ; round++ {
		sent := false
		for i := range pieces {
			if round < len(pieces[i]) {
				out = append(out, chunk(wireDelta{ToolCalls: []wireToolCall{{
					Index: ptr(i), Function: wireFunction{Arguments: pieces[i][round]},
				}}}, nil))
				sent = true
			}
		}
		if !sent {
			break
		}
	}

	finish := finishReason(r)
	out = append(out, chunk(wireDelta{}, &finish))
	if req.IncludeUsage() {
		u, _ := json.Marshal(usage(req, r))
		out = append(out, wireChunk{
			ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
			Choices: []wireStreamChoice{}, Usage: u,
		})
	}
	return out
}

// usage returns the usage to report for r.
func usage(req Request, r Reply) wireUsage {
	var u Usage
	if r.Usage != nil {
		u = *r.Usage
	} else {
		u.PromptTokens = max(1, len(strings.Fields(req.Text())))
		n := len(strings.Fields(r.Content)) + len(strings.Fields(r.Reasoning))
		for _, tc := range r.ToolCalls {
			n += 1 + len(strings.Fields(tc.Arguments))
		}
		u.CompletionTokens = max(1, n)
	}
	w := wireUsage{
		PromptTokens:     u.PromptTokens,
		CompletionTokens: u.CompletionTokens,
		TotalTokens:      u.PromptTokens + u.CompletionTokens,
	}
	w.PromptTokensDetails.CachedTokens = u.CachedTokens
	w.CompletionTokensDetails.ReasoningTokens = u.ReasoningTokens
	return w
}

func finishReason(r Reply) string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func callID(tc ToolCall, i int) string {
	if tc.ID != "" {
		return tc.ID
	}
	return "call_" + strconv.Itoa(i)
}

// split cuts s into pieces of at most size runes.
func split(s string, size int) []string {
	var out []string
	for s != "" {
		cut, n := 0, 0
		for cut < len(s) && n < size {
			_, w := utf8.DecodeRuneInString(s[cut:])
			cut += w
			n++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// SSE returns the body of a stream made of the given data lines, each
// sent as one event, followed by "data: [DONE]": for Raw replies that need
// a stream the generator would not produce.
func SSE(events ...string) string {
	var b bytes.Buffer
	for _, e := range events {
		fmt.Fprintf(&b, "data: %s\n\n", e)
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}
