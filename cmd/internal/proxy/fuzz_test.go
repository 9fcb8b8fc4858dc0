package proxy

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzParseChat: whatever body a client sends, parsing it never panics,
// and where a message is inserted the body stays valid JSON, every other
// byte stays where it was, and the parse of the result finds the inserted
// message in its place.
func FuzzParseChat(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"system","content":"be terse"},{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}}]}],"tools":[{"type":"function"}],"stream":true,"user":"u"}`,
		`{"messages":[],"x":{"messages":[1]}}`,
		`{"messages":[{"role":"user","content":"a"}],"messages":[{"role":"user","content":"b"}]}`,
		` { "messages" : [ { "role" : "assistant" , "tool_calls" : [ ] } , {"role":"user"} ] } `,
		`[]`, `{"messages":{}}`, `{`,
	} {
		f.Add([]byte(s))
	}
	block := systemMessage("memory: the user's wife is Anne")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseChat(body)
		if err != nil {
			return
		}
		i := r.lastUser()
		if i < 0 {
			return
		}
		out := r.insertBefore(i, block)
		at := r.msgs[i].start
		if !slices.Equal(out[:at], body[:at]) || !slices.Equal(out[at+len(block)+1:], body[at:]) {
			t.Fatalf("bytes outside the inserted message changed:\n%s\n%s", body, out)
		}
		if !json.Valid(body) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("valid body became invalid:\n%s\n%s", body, out)
		}
		r2, err := parseChat(out)
		if err != nil {
			t.Fatalf("the rewritten body does not parse: %v\n%s", err, out)
		}
		if len(r2.msgs) != len(r.msgs)+1 || r2.msgs[i].Role != "system" || r2.msgs[i].Text != "memory: the user's wife is Anne" || r2.lastUser() != i+1 {
			t.Fatalf("rewritten messages %+v, from %+v", r2.msgs, r.msgs)
		}
	})
}

// FuzzSSE: an upstream stream, however it is cut into pieces on the way,
// gives the same answer as the whole stream read at once, and no input
// makes the reader panic.
func FuzzSSE(f *testing.F) {
	f.Add([]byte("data: {\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"), uint(17))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"get\",\"arguments\":\"{\\\"a\"}}]}}]}\r\n\r\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\":1}\"}}]}}]}\r\n\r\n"), uint(40))
	f.Add([]byte(": keep-alive\n\nevent: x\ndata:{\"choices\":[]}\n"), uint(3))
	f.Fuzz(func(t *testing.T, stream []byte, cut uint) {
		var whole answer
		w := &sseReader{a: &whole}
		w.Write(stream)
		var pieces answer
		p := &sseReader{a: &pieces}
		c := int(cut % uint(len(stream)+1))
		p.Write(stream[:c])
		p.Write(stream[c:])
		if whole.text.String() != pieces.text.String() || !slices.Equal(whole.calls, pieces.calls) || whole.finished != pieces.finished || whole.model != pieces.model {
			t.Fatalf("cut at %d: %q %+v vs %q %+v", c, whole.text.String(), whole.calls, pieces.text.String(), pieces.calls)
		}
	})
}
