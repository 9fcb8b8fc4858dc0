package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/miramem/mira/internal/text"
)

// ErrNoJSON is wrapped by the error of ExtractJSON when a text holds no
// well-formed JSON object or array.
var ErrNoJSON = errors.New("no JSON object or array in the reply")

// ErrUnusableReply is wrapped by the error of CompleteJSON when the
// model's reply could not be used even after it was asked to correct it.
// Callers with an offline fallback use it to tell a weak model from a
// failing server.
var ErrUnusableReply = errors.New("unusable model reply")

// maxStarts bounds the positions ExtractJSON tries a value from, so that a
// long reply full of stray brackets costs linear time, not quadratic.
// Positions inside a value already found are not tried.
const maxStarts = 32

// ExtractJSON finds the JSON object or array in a model's reply and
// returns it. It accepts what models wrap their JSON in: a leading
// <think>…</think> block, code fences (```json … ```), prose before and
// after, and trailing commas before a closing bracket (which it removes).
// Fenced blocks are tried first, then the whole text; of the values found
// the longest wins, so a stray "[1]" in the prose does not hide the
// answer. JSON inside the thinking is used only when the rest has none. The error wraps ErrNoJSON and, when something
// looked like JSON, says why it did not parse.
func ExtractJSON(s string) ([]byte, error) {
	stripped := stripThinking(s)
	v, err := extractJSON(stripped)
	if err != nil && stripped != s {
		// What looked like thinking may have been part of the answer (a
		// string mentioning </think>), or the model never closed it: the
		// whole text is the last resort.
		if v2, err2 := extractJSON(s); err2 == nil {
			return v2, nil
		}
	}
	return v, err
}

// extractJSON is ExtractJSON without the thinking removed.
func extractJSON(s string) ([]byte, error) {
	var firstErr error
	tries := 0
	// longest returns the longest value found in text: a stray "[1]" or
	// "{}" in prose is shorter than the answer.
	longest := func(text string) []byte {
		var best []byte
		for i := 0; i < len(text) && tries < maxStarts; i++ {
			if text[i] != '{' && text[i] != '[' {
				continue
			}
			tries++
			v, n, err := decodeFirst(text[i:])
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			if len(v) > len(best) {
				best = v
			}
			// Values inside this one are shorter: skip them.
			i += n - 1
		}
		return best
	}
	for _, block := range fencedBlocks(s) {
		if v := longest(block); v != nil {
			return v, nil
		}
	}
	if v := longest(s); v != nil {
		return v, nil
	}
	if firstErr != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoJSON, firstErr)
	}
	return nil, ErrNoJSON
}

// decodeFirst decodes the JSON value at the start of s, ignoring what
// follows it, and returns it compacted with the number of bytes of s it
// spans. A value that fails only for trailing commas is accepted without
// them (its span is then given as 1, so the caller looks inside it too).
func decodeFirst(s string) ([]byte, int, error) {
	v, n, err := firstValue(s)
	if err == nil {
		return v, n, nil
	}
	if fixed, ok := dropTrailingCommas(s); ok {
		if v, _, err2 := firstValue(fixed); err2 == nil {
			return v, 1, nil
		}
	}
	return nil, 0, err
}

// firstValue returns the compacted first JSON value of s and the number
// of bytes it spans.
func firstValue(s string) ([]byte, int, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, 0, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, 0, err
	}
	return b.Bytes(), int(dec.InputOffset()), nil
}

// dropTrailingCommas removes each comma (outside strings) that is followed
// by nothing but white space and a closing bracket, and reports whether
// it removed any.
func dropTrailingCommas(s string) (string, bool) {
	var (
		b        strings.Builder
		inString bool
		escaped  bool
		dropped  bool
	)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			}
			b.WriteByte(ch)
			continue
		}
		if ch == '"' {
			inString = true
		}
		if ch == ',' {
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				dropped = true
				continue
			}
		}
		b.WriteByte(ch)
	}
	return b.String(), dropped
}

// fencedBlocks returns the contents of the Markdown code fences in s, in
// order. An unclosed fence (a reply cut off at the token limit) runs to
// the end.
func fencedBlocks(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "```")
		if i < 0 {
			return out
		}
		s = s[i+3:]
		// The rest of the opening line is the language tag.
		if nl := strings.IndexByte(s, '\n'); nl >= 0 {
			s = s[nl+1:]
		} else {
			return out
		}
		end := strings.Index(s, "```")
		if end < 0 {
			return append(out, s)
		}
		out = append(out, s[:end])
		s = s[end+3:]
	}
}

// stripThinking removes the thinking that local reasoning models (Qwen3,
// DeepSeek-R1 distills) put before their answer: a leading
// <think>…</think> or <thinking>…</thinking> block, or everything up to a
// lone </think> when the chat template already opened the block. An
// unclosed block leaves nothing: the model never got to its answer.
func stripThinking(s string) string {
	for _, tag := range []string{"think", "thinking"} {
		open, closing := "<"+tag+">", "</"+tag+">"
		t := strings.TrimLeft(s, " \t\r\n")
		if strings.HasPrefix(t, open) {
			end := strings.Index(t, closing)
			if end < 0 {
				return ""
			}
			return t[end+len(closing):]
		}
		if end := strings.Index(s, closing); end >= 0 && !strings.Contains(s[:end], open) {
			return s[end+len(closing):]
		}
	}
	return s
}

// jsonFormat is the response format that asks for a JSON object.
var jsonFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}

// CompleteJSON asks for a JSON reply to a system prompt and a user
// message, decodes it into out (a non-nil pointer) and validates it with
// check (may be nil), which inspects out and returns what is wrong with
// it: missing fields, values out of range.
//
// It is built to survive real local models:
//   - It asks for JSON mode (response_format json_object). A server that
//     refuses the parameter (a 400 naming it) is asked again without, and
//     the client never sends it again.
//   - OpenAI's JSON mode needs the word "JSON" in the prompt; when
//     neither message has it, the system prompt gets a line asking for
//     JSON only.
//   - The reply is read by ExtractJSON (code fences, prose around the
//     JSON, thinking blocks, trailing commas).
//   - When out is a slice and the reply an object with a single array
//     field ({"facts": […]}, what JSON mode forces), that array is
//     decoded; when out is a struct or map and the reply a one-element
//     array of an object, that object is.
//   - When the reply does not parse, decode or pass check, the model is
//     shown its reply and the error once and asked for corrected JSON.
//
// If that fails too, the error wraps ErrUnusableReply, says what was
// wrong and quotes the start of the reply. Server errors are returned as
// Chat returns them.
func (c *Client) CompleteJSON(ctx context.Context, system, user string, out any, check func() error) error {
	rv := reflect.ValueOf(out)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("llm: CompleteJSON needs a non-nil pointer, got %T", out)
	}
	if !strings.Contains(strings.ToLower(system+user), "json") {
		system = strings.TrimRight(system, "\n") + "\n\nReply with JSON only."
		system = strings.TrimLeft(system, "\n")
	}
	msgs := messages(system, user)
	var (
		lastErr   error
		lastReply string
	)
	for attempt := range 2 {
		r, err := c.chatJSON(ctx, msgs)
		if err != nil {
			if attempt > 0 {
				return fmt.Errorf("asking for corrected JSON: %w", err)
			}
			return err
		}
		err = decodeReply(r.Content, rv, check)
		if err == nil {
			return nil
		}
		if r.FinishReason == string(openai.FinishReasonLength) {
			err = fmt.Errorf("%w (the reply was cut off at the token limit)", err)
		}
		lastErr, lastReply = err, r.Content
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: r.Content},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: repairPrompt(err)},
		)
	}
	return fmt.Errorf("%w: model %q gave no usable JSON, also when asked to correct it: %w; reply: %q",
		ErrUnusableReply, c.model, lastErr, excerpt(lastReply))
}

// repairPrompt asks the model to correct a reply that failed with err.
func repairPrompt(err error) string {
	return "Your reply could not be used: " + err.Error() + ".\n" +
		"Reply again with only the corrected JSON: no code fences, no explanation."
}

// chatJSON sends msgs in JSON mode unless the server refused it before.
func (c *Client) chatJSON(ctx context.Context, msgs []openai.ChatCompletionMessage) (*Reply, error) {
	for {
		req := openai.ChatCompletionRequest{Messages: msgs}
		jsonMode := !c.noJSONMode.Load()
		if jsonMode {
			req.ResponseFormat = jsonFormat
		}
		r, err := c.Chat(ctx, req)
		if err != nil && jsonMode && mentions(err, "response_format", "response format", "json_object") {
			c.noJSONMode.Store(true)
			continue
		}
		return r, err
	}
}

// decodeReply extracts the JSON of a reply, decodes it into the value out
// points to (zeroed first, so nothing of an earlier attempt is left) and
// runs check.
func decodeReply(reply string, out reflect.Value, check func() error) error {
	if strings.TrimSpace(reply) == "" {
		return errors.New("the reply is empty")
	}
	raw, err := ExtractJSON(reply)
	if err != nil {
		return err
	}
	raw = adaptShape(raw, out.Type().Elem())
	out.Elem().SetZero()
	if err := json.Unmarshal(raw, out.Interface()); err != nil {
		return fmt.Errorf("the JSON does not have the expected shape: %w", err)
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// adaptShape unwraps raw when its top level is the wrong kind for t in one
// of the two ways models get it wrong: an object around the wanted array,
// or an array around the wanted object.
func adaptShape(raw []byte, t reflect.Type) []byte {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	wantArray := (t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8) || t.Kind() == reflect.Array
	wantObject := t.Kind() == reflect.Struct || t.Kind() == reflect.Map
	switch {
	case wantArray && raw[0] == '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil && len(m) == 1 {
			for _, v := range m {
				if v = bytes.TrimSpace(v); len(v) > 0 && v[0] == '[' {
					return v
				}
			}
		}
	case wantObject && raw[0] == '[':
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) == nil && len(a) == 1 {
			if v := bytes.TrimSpace(a[0]); len(v) > 0 && v[0] == '{' {
				return v
			}
		}
	}
	return raw
}

// excerpt returns the start of a reply for an error message, on one line.
func excerpt(s string) string {
	return text.Shorten(strings.Join(strings.Fields(s), " "), 200)
}
