package mcpserver

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miramem/mira"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session connects a client to a server over a fresh store, in memory.
func session(t *testing.T) *mcp.ClientSession {
	t.Helper()
	m, err := mira.Open(t.Context(), mira.Options{Home: filepath.Join(t.TempDir(), "home"), Config: &mira.Config{},
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ct, st := mcp.NewInMemoryTransports()
	ss, err := New(m, Options{Version: "test"}).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// unions returns where a schema, as JSON, has a "type" that is not a
// single string.
func unions(v any, at string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if _, isString := c.(string); k == "type" && !isString {
				if _, isObject := c.(map[string]any); !isObject { // a property named "type"
					out = append(out, fmt.Sprintf("%s: %v", at, c))
				}
			}
			out = append(out, unions(c, at+"/"+k)...)
		}
	case []any:
		for i, c := range x {
			out = append(out, unions(c, fmt.Sprintf("%s/%d", at, i))...)
		}
	}
	return out
}

// TestToolSchemasPlainTypes: no tool's schema, input or output, has a
// union of types ("type": ["null", "array"]), which the MCP Inspector
// and hosts backed by Gemini cannot use; optional fields are simply not
// required.
func TestToolSchemasPlainTypes(t *testing.T) {
	cs := session(t)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var served any
	if err := json.Unmarshal(data, &served); err != nil {
		t.Fatal(err)
	}
	if u := unions(served, "tools"); len(u) > 0 {
		t.Errorf("type unions in tools/list:\n%s", strings.Join(u, "\n"))
	}
	for _, tl := range res.Tools {
		in, _ := json.Marshal(tl.InputSchema)
		var sc struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(in, &sc); err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		switch tl.Name {
		case "remember":
			if sc.Properties["tags"].Type != "array" || strings.Join(sc.Required, ",") != "text" {
				t.Errorf("remember: tags %+v, required %v", sc.Properties["tags"], sc.Required)
			}
		case "recall":
			if sc.Properties["min_score"].Type != "number" || sc.Properties["kinds"].Type != "array" {
				t.Errorf("recall: %+v", sc.Properties)
			}
		case "forget":
			if sc.Properties["ids"].Type != "array" || strings.Join(sc.Required, ",") != "ids" {
				t.Errorf("forget: ids %+v, required %v", sc.Properties["ids"], sc.Required)
			}
		}
	}
	// The tools take what the schemas say: an array of tags, ids.
	rem, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"text": "We chose PostgreSQL", "tags": []string{"db"}}})
	if err != nil || rem.IsError {
		t.Fatalf("remember = %v, %v", err, rem)
	}
	var out RememberOut
	b, _ := json.Marshal(rem.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || len(out.Memories) != 1 || strings.Join(out.Memories[0].Tags, ",") != "db" {
		t.Fatalf("remember = %s (%v)", b, err)
	}
	fg, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "forget", Arguments: map[string]any{"ids": []string{out.Memories[0].ID}}})
	if err != nil || fg.IsError {
		t.Fatalf("forget = %v, %v", err, fg)
	}
	// Too many tags: refused, naming the limit.
	tags := make([]string, 60000)
	for i := range tags {
		tags[i] = fmt.Sprint("t", i)
	}
	res2, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"text": "x", "tags": tags}})
	if err == nil && !res2.IsError {
		t.Errorf("remember with 60,000 tags succeeded")
	}
}

// TestResourcesList: resources/list gives the newest memories, newest
// first, each as mira://memory/<id> in Markdown with its first line as
// the title; ListedMemories at most; no conversation turns.
func TestResourcesList(t *testing.T) {
	cs := session(t)
	empty, err := cs.ListResources(t.Context(), nil)
	if err != nil || len(empty.Resources) != 0 {
		t.Fatalf("resources/list of an empty store = %v, %v", empty, err)
	}
	var ids []string
	for i := range ListedMemories + 5 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"text": fmt.Sprintf("memory number %d\nsecond line", i)}})
		if err != nil || res.IsError {
			t.Fatalf("remember %d = %v, %v", i, err, res)
		}
		var out RememberOut
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		ids = append(ids, out.Memories[0].ID)
	}
	res, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) != ListedMemories {
		t.Fatalf("resources/list = %d resources, want %d", len(res.Resources), ListedMemories)
	}
	for i, r := range res.Resources {
		n := len(ids) - 1 - i
		want := ids[n]
		if r.URI != "mira://memory/"+want || r.Name != want || r.MIMEType != "text/markdown" || r.Title != fmt.Sprintf("memory number %d", n) {
			t.Fatalf("resource %d = %+v, want memory %d (%s)", i, r, n, want)
		}
	}
	rr, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: res.Resources[0].URI})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "memory number") {
		t.Errorf("reading %s = %v, %v", res.Resources[0].URI, rr, err)
	}
}
