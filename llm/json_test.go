package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/llm/llmtest"
)

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // compact JSON; "" when an error is expected
	}{
		{"plain object", `{"a": 1}`, `{"a":1}`},
		{"plain array", ` [1, 2, 3] `, `[1,2,3]`},
		{"fenced json", "```json\n{\"a\": [1, 2]}\n```", `{"a":[1,2]}`},
		{"fenced without tag", "```\n[{\"x\": \"y\"}]\n```", `[{"x":"y"}]`},
		{"prose around fence", "Here you go:\n\n```json\n{\"ok\": true}\n```\n\nLet me know!", `{"ok":true}`},
		{"prose before", "Sure! The facts are: {\"facts\": [\"a\"]}", `{"facts":["a"]}`},
		{"prose after", "{\"n\": 2}\nI hope this helps.", `{"n":2}`},
		{"prose with brackets before", "Step [1] done, {see below}: {\"k\": \"v\"}", `{"k":"v"}`},
		{"fence beats earlier braces", "Use {name} as key.\n```json\n{\"name\": \"x\"}\n```", `{"name":"x"}`},
		{"first of two equal values", `{"a":1} {"b":2}`, `{"a":1}`},
		{"longest of two values", `Example: {"a":1}. Answer: {"facts":["x"]}`, `{"facts":["x"]}`},
		{"braces inside strings", `{"text": "a } and ] and {", "n": 1}`, `{"text":"a } and ] and {","n":1}`},
		{"trailing commas", "{\"a\": [1, 2,], \"b\": {\"c\": 3,},\n}", `{"a":[1,2],"b":{"c":3}}`},
		{"comma in string kept", `{"a": "x,}", "b": [1,]}`, `{"a":"x,}","b":[1]}`},
		{"think block", "<think>maybe {\"wrong\": 1}?</think>\n{\"right\": 2}", `{"right":2}`},
		{"lone closing think", "The user wants {json}.\n</think>\n\n{\"right\": 2}", `{"right":2}`},
		{"unclosed fence", "```json\n{\"a\": 1}", `{"a":1}`},
		{"unicode", `Résumé: {"name": "Zoë", "emoji": "🦀"}`, `{"name":"Zoë","emoji":"🦀"}`},
		{"nested", `{"a": {"b": [{"c": null}]}}`, `{"a":{"b":[{"c":null}]}}`},
		{"empty", "", ""},
		{"prose only", "I cannot help with that.", ""},
		{"truncated", `{"facts": ["a", "b`, ""},
		{"scalar only", `42`, ""},
		{"single quotes", `{'a': 1}`, ""},
		{"unclosed think, last resort", "<think>still thinking {\"a\":1}", `{"a":1}`},
		{"closing think inside a string", `{"a": "</think>"}`, `{"a":"</think>"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExtractJSON(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ExtractJSON(%q) = %s, want an error", tt.in, got)
				}
				if !errors.Is(err, ErrNoJSON) {
					t.Errorf("ExtractJSON(%q) error %v does not wrap ErrNoJSON", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ExtractJSON(%q) error: %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("ExtractJSON(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestExtractJSONSyntaxErrorReported(t *testing.T) {
	_, err := ExtractJSON(`Here: {"a": 1 "b": 2}`)
	if err == nil || !strings.Contains(err.Error(), "invalid character") {
		t.Errorf("ExtractJSON error = %v, want the syntax error named", err)
	}
}

func TestExtractJSONBoundedWork(t *testing.T) {
	// Thousands of stray brackets: only the first maxStarts positions are
	// tried, so this stays linear-ish and fails rather than searching on.
	in := strings.Repeat("[x ", 5000) + `{"a":1}`
	if _, err := ExtractJSON(in); err == nil {
		t.Errorf("ExtractJSON found a value past %d starts", maxStarts)
	}
}

func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, "```json\n[1,2]\n```", "text {\"a\": [1,]} more", "<think>{</think>[]",
		`{"s":"\"}\\"}`, "", "[[[[", `{"a":"é"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ExtractJSON(s)
		if err != nil {
			if !errors.Is(err, ErrNoJSON) {
				t.Fatalf("error %v does not wrap ErrNoJSON", err)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("ExtractJSON(%q) = %q, not valid JSON", s, got)
		}
		if got[0] != '{' && got[0] != '[' {
			t.Fatalf("ExtractJSON(%q) = %q, not an object or array", s, got)
		}
		// The result is its own extraction: it is clean JSON.
		again, err := ExtractJSON(string(got))
		if err != nil || string(again) != string(got) {
			t.Fatalf("ExtractJSON(%q) = %q, %v; want it unchanged", got, again, err)
		}
	})
}

// facts is the shape a caller of CompleteJSON might want.
type facts struct {
	Facts []string `json:"facts"`
	Kind  string   `json:"kind"`
}

func checkFacts(f *facts) func() error {
	return func() error {
		if len(f.Facts) == 0 {
			return errors.New(`missing field "facts"`)
		}
		if f.Kind == "" {
			return errors.New(`missing field "kind"`)
		}
		return nil
	}
}

func TestCompleteJSON(t *testing.T) {
	good := `{"facts": ["uses PostgreSQL"], "kind": "decision"}`
	want := facts{Facts: []string{"uses PostgreSQL"}, Kind: "decision"}
	rejectFormat := llmtest.Error(400, "'response_format' of type 'json_object' is not supported with this model")
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		wantErr  []string // substrings of the error; nil for success
		jsonMode []bool   // response_format sent, per request
		repair   int      // request (from 0) that must carry a repair prompt, -1 none
	}{
		{
			name:     "clean",
			replies:  []llmtest.Reply{llmtest.Text(good)},
			jsonMode: []bool{true},
			repair:   -1,
		},
		{
			name:     "fenced",
			replies:  []llmtest.Reply{llmtest.Text("```json\n" + good + "\n```")},
			jsonMode: []bool{true},
			repair:   -1,
		},
		{
			name:     "prose around",
			replies:  []llmtest.Reply{llmtest.Text("Sure, here are the facts:\n" + good + "\nAnything else?")},
			jsonMode: []bool{true},
			repair:   -1,
		},
		{
			name:     "json mode refused, then plain",
			replies:  []llmtest.Reply{rejectFormat, llmtest.Text(good)},
			jsonMode: []bool{true, false},
			repair:   -1,
		},
		{
			name: "wrong shape, repaired",
			replies: []llmtest.Reply{
				llmtest.Text(`{"fact": "uses PostgreSQL"}`),
				llmtest.Text(good),
			},
			jsonMode: []bool{true, true},
			repair:   1,
		},
		{
			name: "not JSON, repaired",
			replies: []llmtest.Reply{
				llmtest.Text("The user decided to use PostgreSQL."),
				llmtest.Text(good),
			},
			jsonMode: []bool{true, true},
			repair:   1,
		},
		{
			name: "wrong type, repaired",
			replies: []llmtest.Reply{
				llmtest.Text(`{"facts": "uses PostgreSQL", "kind": "decision"}`),
				llmtest.Text(good),
			},
			jsonMode: []bool{true, true},
			repair:   1,
		},
		{
			name: "wrong shape twice",
			replies: []llmtest.Reply{
				llmtest.Text(`{"fact": "uses PostgreSQL"}`),
				llmtest.Text(`{"facts": ["uses PostgreSQL"]}`),
			},
			wantErr:  []string{`model "m" gave no usable JSON`, `missing field "kind"`, `reply: "{\"facts\": [\"uses PostgreSQL\"]}"`},
			jsonMode: []bool{true, true},
			repair:   1,
		},
		{
			name: "cut off twice",
			replies: []llmtest.Reply{
				llmtest.Text(`{"facts": ["uses Post`).WithFinish("length"),
				llmtest.Text(`{"facts": ["uses Post`).WithFinish("length"),
			},
			wantErr:  []string{"cut off at the token limit", "unexpected EOF"},
			jsonMode: []bool{true, true},
			repair:   1,
		},
		{
			name:     "server error is not a repair",
			replies:  []llmtest.Reply{llmtest.Error(401, "bad key")},
			wantErr:  []string{"401"},
			jsonMode: []bool{true},
			repair:   -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.replies...)
			c, _ := testClient(t, srv, "m")
			var got facts
			err := c.CompleteJSON(t.Context(), "Extract facts as JSON.", "We chose PostgreSQL.", &got, checkFacts(&got))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("CompleteJSON: %v", err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("decoded diff (-want +got):\n%s", diff)
				}
			} else {
				if err == nil {
					t.Fatalf("CompleteJSON succeeded with %+v, want an error", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("CompleteJSON error %q lacks %q", err, w)
					}
				}
				if tt.repair >= 0 && !errors.Is(err, ErrUnusableReply) {
					t.Errorf("CompleteJSON error %v does not wrap ErrUnusableReply", err)
				}
			}
			reqs := srv.Requests()
			if len(reqs) != len(tt.jsonMode) {
				t.Fatalf("server got %d requests, want %d", len(reqs), len(tt.jsonMode))
			}
			for i, r := range reqs {
				if r.JSONMode() != tt.jsonMode[i] {
					t.Errorf("request %d: JSON mode %v, want %v", i, r.JSONMode(), tt.jsonMode[i])
				}
				isRepair := strings.Contains(r.LastUser(), "could not be used")
				if isRepair != (i == tt.repair) {
					t.Errorf("request %d: repair prompt %v, want %v", i, isRepair, i == tt.repair)
				}
				if isRepair {
					// The repair shows the model its reply and the error.
					prev := r.Messages[len(r.Messages)-2]
					if prev.Role != "assistant" || prev.Content != tt.replies[0].Content {
						t.Errorf("repair request's previous message = %+v, want the first reply", prev)
					}
				}
			}
		})
	}
}

func TestCompleteJSONRemembersRefusedFormat(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Error(400, "Unrecognized request argument supplied: response_format"),
		llmtest.Text(`{"a": 1}`),
		llmtest.Text(`{"a": 2}`),
	)
	c, _ := testClient(t, srv, "m")
	for want := 1; want <= 2; want++ {
		var v struct{ A int }
		if err := c.CompleteJSON(t.Context(), "JSON please", "x", &v, nil); err != nil || v.A != want {
			t.Fatalf("CompleteJSON = %+v, %v, want a=%d", v, err, want)
		}
	}
	var modes []bool
	for _, r := range srv.Requests() {
		modes = append(modes, r.JSONMode())
	}
	if diff := cmp.Diff([]bool{true, false, false}, modes); diff != "" {
		t.Errorf("JSON mode per request (-want +got):\n%s", diff)
	}
}

func TestCompleteJSONOther400NotAFormatRefusal(t *testing.T) {
	srv := llmtest.New(t, llmtest.Error(400, "messages: too many"))
	c, _ := testClient(t, srv, "m")
	var v map[string]any
	if err := c.CompleteJSON(t.Context(), "JSON", "x", &v, nil); err == nil {
		t.Fatal("CompleteJSON succeeded")
	}
	if c.noJSONMode.Load() {
		t.Error("an unrelated 400 turned JSON mode off")
	}
}

func TestCompleteJSONShapes(t *testing.T) {
	type item struct {
		Name string `json:"name"`
	}
	t.Run("array wrapped in object", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Text(`{"items": [{"name": "a"}, {"name": "b"}]}`))
		c, _ := testClient(t, srv, "m")
		var got []item
		if err := c.CompleteJSON(t.Context(), "List as JSON.", "x", &got, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]item{{"a"}, {"b"}}, got); diff != "" {
			t.Errorf("diff (-want +got):\n%s", diff)
		}
	})
	t.Run("object wrapped in array", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Text("```json\n[{\"name\": \"solo\"}]\n```"))
		c, _ := testClient(t, srv, "m")
		var got item
		if err := c.CompleteJSON(t.Context(), "JSON", "x", &got, nil); err != nil {
			t.Fatal(err)
		}
		if got.Name != "solo" {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("earlier attempt leaves nothing behind", func(t *testing.T) {
		srv := llmtest.New(t,
			llmtest.Text(`{"facts": ["stale"]}`),
			llmtest.Text(`{"kind": "fact", "facts": ["fresh"]}`),
		)
		c, _ := testClient(t, srv, "m")
		var got facts
		if err := c.CompleteJSON(t.Context(), "JSON", "x", &got, checkFacts(&got)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(facts{Facts: []string{"fresh"}, Kind: "fact"}, got); diff != "" {
			t.Errorf("diff (-want +got):\n%s", diff)
		}
	})
}

func TestCompleteJSONAsksForJSON(t *testing.T) {
	tests := []struct {
		system, user string
		wantSystem   string
	}{
		{"Summarize.", "text", "Summarize.\n\nReply with JSON only."},
		{"", "text", "Reply with JSON only."},
		{"Answer in json.", "text", "Answer in json."},
		{"Summarize.", "Give JSON.", "Summarize."},
	}
	for _, tt := range tests {
		srv := llmtest.New(t, llmtest.Text(`{}`))
		c, _ := testClient(t, srv, "m")
		var v map[string]any
		if err := c.CompleteJSON(t.Context(), tt.system, tt.user, &v, nil); err != nil {
			t.Fatal(err)
		}
		if got := srv.Last().System(); got != tt.wantSystem {
			t.Errorf("CompleteJSON(%q, %q) sent system %q, want %q", tt.system, tt.user, got, tt.wantSystem)
		}
	}
}

func TestCompleteJSONNeedsPointer(t *testing.T) {
	srv := llmtest.New(t)
	c, _ := testClient(t, srv, "m")
	var v facts
	for _, out := range []any{v, nil, (*facts)(nil)} {
		if err := c.CompleteJSON(t.Context(), "", "", out, nil); err == nil || !strings.Contains(err.Error(), "non-nil pointer") {
			t.Errorf("CompleteJSON(out %T) error = %v", out, err)
		}
	}
}

func TestCompleteJSONAnswersFromPrompt(t *testing.T) {
	// A Func reply answers from the request, as extraction tests do.
	srv := llmtest.New(t, llmtest.Func(func(r llmtest.Request) llmtest.Reply {
		return llmtest.JSON(map[string]any{"facts": []string{strings.ToUpper(r.LastUser())}, "kind": "fact"})
	}))
	c, _ := testClient(t, srv, "m")
	var got facts
	if err := c.CompleteJSON(t.Context(), "JSON", "shout", &got, checkFacts(&got)); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Facts) != "[SHOUT]" {
		t.Errorf("facts = %v", got.Facts)
	}
}

func BenchmarkExtractJSON(b *testing.B) {
	var facts []string
	for i := range 40 {
		facts = append(facts, fmt.Sprintf(`{"text": "fact number %d about the {project} [draft]", "kind": "fact"}`, i))
	}
	body := `{"facts": [` + strings.Join(facts, ", ") + `]}`
	inputs := map[string]string{
		"clean":  body,
		"fenced": "Here are the facts [1]:\n\n```json\n" + body + "\n```\n",
		"prose":  "<think>The user wants {facts}.</think>\nSure! " + body + " Anything else?",
	}
	for name, in := range inputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := ExtractJSON(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
