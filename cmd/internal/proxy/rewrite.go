package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// chatRequest is a chat completions request as the client sent it, with
// where its parts are in the body: the proxy changes the body only by
// inserting one message into the messages array, so that every other byte
// (tools, response_format, stream_options, fields no one here knows)
// reaches the server as the client wrote it.
type chatRequest struct {
	body   []byte
	msgs   []message
	user   string
	stream bool
	// arrayEnd is the offset of the messages array's closing bracket.
	arrayEnd int
}

// message is one element of the messages array.
type message struct {
	start, end int // its bytes in the body
	Role       string
	Text       string // the text of its content (string, or the text parts)
	ToolCallID string
	Name       string
}

// parseChat reads a chat completions request body. It fails on a body
// that is no JSON object or has no messages array; such a request is
// passed on untouched, for the server to judge.
func parseChat(body []byte) (*chatRequest, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("the body is not a JSON object")
	}
	r := &chatRequest{body: body, arrayEnd: -1}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		start := end - len(raw)
		switch key {
		case "messages":
			if err := r.parseMessages(start, raw); err != nil {
				return nil, fmt.Errorf("messages: %w", err)
			}
		case "user":
			json.Unmarshal(raw, &r.user)
		case "stream":
			json.Unmarshal(raw, &r.stream)
		}
	}
	if r.arrayEnd < 0 {
		return nil, errors.New("no messages")
	}
	return r, nil
}

// parseMessages finds each message of the array that starts at base.
func (r *chatRequest) parseMessages(base int, raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return errors.New("not an array")
	}
	r.msgs = r.msgs[:0]
	for dec.More() {
		var el json.RawMessage
		if err := dec.Decode(&el); err != nil {
			return err
		}
		end := int(dec.InputOffset())
		var m struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			Name       string          `json:"name"`
		}
		if err := json.Unmarshal(el, &m); err != nil {
			return err
		}
		r.msgs = append(r.msgs, message{start: base + end - len(el), end: base + end, Role: m.Role,
			Text: contentText(m.Content), ToolCallID: m.ToolCallID, Name: m.Name})
	}
	// The array's closing bracket is its last byte.
	r.arrayEnd = base + len(raw) - 1
	return nil
}

// contentText is the text of a message's content: a string, or the text
// parts of an array of parts (images and audio are not text).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" && p.Text != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// lastUser is the index of the last message from the user, or -1.
func (r *chatRequest) lastUser() int {
	for i := len(r.msgs) - 1; i >= 0; i-- {
		if r.msgs[i].Role == "user" {
			return i
		}
	}
	return -1
}

// texts are the texts of the request's messages, as sameText compares
// them.
func (r *chatRequest) texts() map[string]bool {
	out := make(map[string]bool, len(r.msgs))
	for _, m := range r.msgs {
		if t := sameText(m.Text); t != "" {
			out[t] = true
		}
	}
	return out
}

// insertBefore returns the body with msg (one JSON value) inserted as a
// message just before message i; every other byte stays as it was.
func (r *chatRequest) insertBefore(i int, msg []byte) []byte {
	at := r.msgs[i].start
	out := make([]byte, 0, len(r.body)+len(msg)+1)
	out = append(out, r.body[:at]...)
	out = append(out, msg...)
	out = append(out, ',')
	return append(out, r.body[at:]...)
}

// systemMessage is the JSON of a system message with text as its content.
func systemMessage(text string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}{"system", text})
	return bytes.TrimRight(b.Bytes(), "\n")
}
