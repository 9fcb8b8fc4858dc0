package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

func TestDecodeArgs(t *testing.T) {
	schema := object(map[string]jsonschema.Definition{
		"path":   {Type: jsonschema.String},
		"offset": {Type: jsonschema.Integer},
		"all":    {Type: jsonschema.Boolean},
		"mode":   {Type: jsonschema.String, Enum: []string{"a", "b"}},
		"tags":   {Type: jsonschema.Array, Items: &jsonschema.Definition{Type: jsonschema.String}},
	}, "path")
	type args struct {
		Path   string   `json:"path"`
		Offset int      `json:"offset"`
		All    bool     `json:"all"`
		Mode   string   `json:"mode"`
		Tags   []string `json:"tags"`
	}
	tests := []struct {
		name, raw string
		want      args
		wantErr   []string // parts of the error message
	}{
		{name: "all fields", raw: `{"path":"a.go","offset":3,"all":true,"mode":"b","tags":["x","y"]}`,
			want: args{Path: "a.go", Offset: 3, All: true, Mode: "b", Tags: []string{"x", "y"}}},
		{name: "integral float", raw: `{"path":"a","offset":10.0}`, want: args{Path: "a", Offset: 10}},
		{name: "null optional", raw: `{"path":"a","offset":null}`, want: args{Path: "a"}},
		{name: "missing required", raw: `{"offset":1}`, wantErr: []string{`missing required argument "path"; the arguments are path (required), all, mode, offset, tags`}},
		// Integers up to 2^53 are exact in a float64; past it 10.0 and 10
		// no longer tell a fraction from an integer.
		{name: "largest exact integer", raw: `{"path":"a","offset":9007199254740992}`, want: args{Path: "a", Offset: 1 << 53}},
		{name: "smallest exact integer", raw: `{"path":"a","offset":-9007199254740992}`, want: args{Path: "a", Offset: -1 << 53}},
		{name: "integer past 2^53", raw: `{"path":"a","offset":9007199254740994}`, wantErr: []string{`argument "offset" must be an integer, not 9007199254740994`}},
		// A wrong value is quoted whole up to 40 characters, cut beyond.
		{name: "40-character value", raw: `{"path":"a","offset":"` + strings.Repeat("x", 38) + `"}`, wantErr: []string{`("` + strings.Repeat("x", 38) + `")`}},
		{name: "41-character value", raw: `{"path":"a","offset":"` + strings.Repeat("x", 39) + `"}`, wantErr: []string{`("` + strings.Repeat("x", 36) + `...)`}},
		{name: "empty arguments", raw: ``, wantErr: []string{`missing required argument "path"`}},
		{name: "null required", raw: `{"path":null}`, wantErr: []string{`missing required argument "path"`}},
		{name: "unknown field", raw: `{"file_path":"a"}`, wantErr: []string{`unknown argument "file_path"`, "path (required)"}},
		{name: "two unknown fields", raw: `{"path":"a","x":1,"y":2}`, wantErr: []string{`unknown arguments "x", "y"`}},
		{name: "string for integer", raw: `{"path":"a","offset":"10"}`, wantErr: []string{`argument "offset" must be an integer, not a string ("10")`}},
		{name: "fraction for integer", raw: `{"path":"a","offset":1.5}`, wantErr: []string{`argument "offset" must be an integer, not 1.5`}},
		{name: "number for string", raw: `{"path":5}`, wantErr: []string{`argument "path" must be a string, not a number (5)`}},
		{name: "string for boolean", raw: `{"path":"a","all":"yes"}`, wantErr: []string{`argument "all" must be true or false, not a string`}},
		{name: "bad enum", raw: `{"path":"a","mode":"c"}`, wantErr: []string{`argument "mode" must be one of a, b, not "c"`}},
		{name: "bad array item", raw: `{"path":"a","tags":["x",1]}`, wantErr: []string{`argument "tags[1]" must be a string`}},
		{name: "string for array", raw: `{"path":"a","tags":"x"}`, wantErr: []string{`argument "tags" must be an array, not a string`}},
		{name: "not JSON", raw: `{"path":`, wantErr: []string{"not valid JSON"}},
		{name: "not an object", raw: `["a"]`, wantErr: []string{"must be a JSON object"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got args
			err := decodeArgs(json.RawMessage(tt.raw), schema, &got)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("decodeArgs(%s) = %+v, want an error", tt.raw, got)
				}
				wantContains(t, "error", err.Error(), tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatalf("decodeArgs(%s) error = %v", tt.raw, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decodeArgs(%s) diff (-want +got):\n%s", tt.raw, diff)
			}
		})
	}
}

// Every built-in tool answers bad arguments with an error Result, not a
// panic or a Go error.
func TestBadArgumentsEveryTool(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Memory = &fakeMemory{} })
	for _, name := range f.reg.Names() {
		for _, raw := range []string{`{"nonsense":1}`, `[1,2]`, `{`, `null`, `{"path":7,"pattern":7,"command":7,"text":7,"query":7}`} {
			res := f.call(t, name, raw)
			if !res.IsError || res.Content == "" {
				t.Errorf("%s(%s) = %+v, want an error result", name, raw, res)
			}
		}
	}
}

func TestDefinitions(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Memory = &fakeMemory{} })
	defs := f.reg.Definitions()
	var names []string
	for _, d := range defs {
		names = append(names, d.Function.Name)
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("marshal %s: %v", d.Function.Name, err)
		}
		var back struct {
			Type     string `json:"type"`
			Function struct {
				Name       string `json:"name"`
				Parameters struct {
					Type       string                     `json:"type"`
					Properties map[string]json.RawMessage `json:"properties"`
					Required   []string                   `json:"required"`
					Additional *bool                      `json:"additionalProperties"`
				} `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		p := back.Function.Parameters
		if back.Type != "function" || p.Type != "object" || len(p.Properties) == 0 || len(p.Required) == 0 || p.Additional == nil || *p.Additional {
			t.Errorf("%s definition = %s, want a function with an object schema", d.Function.Name, b)
		}
		for _, r := range p.Required {
			if _, ok := p.Properties[r]; !ok {
				t.Errorf("%s requires %q, which is not a property", d.Function.Name, r)
			}
		}
	}
	want := []string{"read_file", "write_file", "edit_file", "bash", "glob", "grep", "remember", "recall"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tool names diff (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(names, f.reg.Names()); diff != "" {
		t.Errorf("Names() differs from Definitions(): %s", diff)
	}
	// Without a Memory, remember and recall are not offered.
	if got := newFixture(t).reg.Names(); len(got) != 6 {
		t.Errorf("Names() without memory = %v, want the six file and shell tools", got)
	}
}

func TestUnknownTool(t *testing.T) {
	f := newFixture(t)
	res := f.call(t, "delete_everything", obj{})
	if !res.IsError {
		t.Fatalf("unknown tool result = %+v, want an error", res)
	}
	wantContains(t, "content", res.Content, `no tool named "delete_everything"`, "read_file", "grep")
}

// panicky is a tool that panics.
type panicky struct{}

func (panicky) Definition() openai.Tool {
	return schemaTool("panicky", "panics", object(map[string]jsonschema.Definition{"x": {Type: jsonschema.String}}, "x"))
}

func (panicky) Run(context.Context, json.RawMessage) (Result, error) { panic("boom") }

func TestRegisterAndPanic(t *testing.T) {
	f := newFixture(t)
	if err := f.reg.Register(panicky{}); err != nil {
		t.Fatal(err)
	}
	if err := f.reg.Register(panicky{}); err == nil {
		t.Error("registering a name twice succeeded")
	}
	res := f.call(t, "panicky", obj{"x": "y"})
	if !res.IsError {
		t.Fatalf("panicking tool = %+v, want an error result", res)
	}
	wantContains(t, "content", res.Content, "internal error in tool panicky", "boom")
}

// fakeMemory records what remember stores and answers recall from it.
type fakeMemory struct {
	texts []string
	kinds []string
	tags  [][]string
	fail  error
}

func (m *fakeMemory) Remember(_ context.Context, text, kind string, tags []string) (string, error) {
	if m.fail != nil {
		return "", m.fail
	}
	m.texts, m.kinds, m.tags = append(m.texts, text), append(m.kinds, kind), append(m.tags, tags)
	return "stored as 01MEM", nil
}

func (m *fakeMemory) Recall(_ context.Context, query string, k int) (string, error) {
	if m.fail != nil {
		return "", m.fail
	}
	var out []string
	for _, t := range m.texts {
		if strings.Contains(t, query) && len(out) < k {
			out = append(out, "- "+t)
		}
	}
	return strings.Join(out, "\n"), nil
}

func TestMemoryTools(t *testing.T) {
	m := &fakeMemory{}
	f := newFixture(t, func(c *Config) { c.Memory = m })
	res := f.call(t, "remember", obj{"text": "  We chose PostgreSQL for JSONB ", "kind": "decision", "tags": []string{"db"}})
	if res.IsError || res.Content != "stored as 01MEM" {
		t.Fatalf("remember = %+v", res)
	}
	f.call(t, "remember", obj{"text": "PostgreSQL runs on port 5433"})
	if diff := cmp.Diff([]string{"decision", "note"}, m.kinds); diff != "" {
		t.Errorf("kinds diff (-want +got):\n%s", diff)
	}
	if m.texts[0] != "We chose PostgreSQL for JSONB" {
		t.Errorf("stored text = %q, want it trimmed", m.texts[0])
	}

	tests := []struct {
		name    string
		args    obj
		want    string
		isError bool
	}{
		{"match", obj{"query": "PostgreSQL"}, "- We chose PostgreSQL for JSONB\n- PostgreSQL runs on port 5433", false},
		{"k", obj{"query": "PostgreSQL", "k": 1}, "- We chose PostgreSQL for JSONB", false},
		{"nothing", obj{"query": "MySQL"}, `No memories match "MySQL".`, false},
		{"empty query", obj{"query": " "}, "query is empty", true},
		{"negative k", obj{"query": "x", "k": -1}, "k must be positive", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t, "recall", tt.args)
			if res.Content != tt.want || res.IsError != tt.isError {
				t.Errorf("recall(%v) = %q (error %v), want %q (error %v)", tt.args, res.Content, res.IsError, tt.want, tt.isError)
			}
		})
	}

	m.fail = errors.New("text looks like a secret")
	res = f.call(t, "remember", obj{"text": "x", "kind": "fact"})
	if !res.IsError {
		t.Errorf("failing remember = %+v, want an error", res)
	}
	wantContains(t, "content", res.Content, "could not remember it: text looks like a secret")
	if res := f.call(t, "remember", obj{"text": "x", "kind": "turn"}); !res.IsError {
		t.Errorf("remember with kind turn = %+v, want refused", res)
	}
}

// The fields an error message lists come required first, then by name,
// the same every time whatever the order of the schema's map.
func TestFieldListOrder(t *testing.T) {
	schema := object(map[string]jsonschema.Definition{
		"offset": {Type: jsonschema.Integer},
		"query":  {Type: jsonschema.String},
		"all":    {Type: jsonschema.Boolean},
		"path":   {Type: jsonschema.String},
		"limit":  {Type: jsonschema.Integer},
	}, "query", "path")
	const want = "path (required), query (required), all, limit, offset"
	for range 20 {
		if got := fieldList(schema); got != want {
			t.Fatalf("fieldList = %q, want %q", got, want)
		}
	}
	if got := fieldList(object(nil)); got != "(none)" {
		t.Errorf("fieldList of no fields = %q, want (none)", got)
	}
}
