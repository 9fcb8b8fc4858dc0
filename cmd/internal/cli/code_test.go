package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira"
)

// TestCodeTextEscapes: a source file's name, doc comment or code printed
// for a person cannot drive the terminal or forge a line: control
// characters are escaped, tabs and the code's own line breaks kept.
func TestCodeTextEscapes(t *testing.T) {
	card := mira.CodeCard{
		Kind: "func", Name: "Evil\x1b]0;title\x07", Path: "a\nb.go", Line: 3,
		Signature: "func Evil()\x1b[2J", Doc: "says \x1b[31mred\x1b[0m\nline two",
		Snippet:  "func Evil() {\n\treturn \"\x1b[H\"\n}",
		Memories: []string{"01ABC: note: \x1b[1mbold"},
	}
	var out bytes.Buffer
	// NO_COLOR: no escapes of our own either.
	o := &IO{Out: &out, Err: &out, OutTTY: true, Getenv: func(k string) string { return map[string]string{"NO_COLOR": "1"}[k] }}
	if err := writeCode(o, "text", []mira.CodeCard{card}, func(b *strings.Builder, st styler, c mira.CodeCard) { writeCard(b, st, c, "") }); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.ContainsAny(got, "\x1b\x07") {
		t.Errorf("text output holds a control character:\n%q", got)
	}
	if strings.Contains(got, "a\nb.go") {
		t.Errorf("a path's line break starts a line of its own:\n%q", got)
	}
	if !strings.Contains(got, "\n    \treturn") {
		t.Errorf("the snippet's tab or line break is lost:\n%q", got)
	}
}

// TestCodeJSON: results are JSON lines with snake_case fields, an
// embedded card's fields at the top level, empty fields left out, RFC
// 3339 times in UTC and durations in milliseconds.
func TestCodeJSON(t *testing.T) {
	when := time.Date(2026, 11, 27, 11, 0, 0, 0, time.FixedZone("CET", 3600))
	tp := mira.CodeTouchpoint{Card: mira.CodeCard{Kind: "func", Name: "Total", Parent: "Cart", Path: "cart/cart.go", Line: 9, EndLine: 15},
		Score: 1.5, Why: []string{"memory X: decision: cents"}}
	got := roundTrip(t, tp)
	want := map[string]any{"kind": "func", "name": "Total", "parent": "Cart", "path": "cart/cart.go", "line": 9.0, "end_line": 15.0,
		"score": 1.5, "why": []any{"memory X: decision: cents"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("touchpoint: diff (-want +got)\n%s", diff)
	}
	got = roundTrip(t, mira.CodeCommit{Hash: "abc", When: when.UTC(), Files: []string{"a.go"}})
	want = map[string]any{"hash": "abc", "when": "2026-11-27T10:00:00Z", "files": []any{"a.go"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commit: diff (-want +got)\n%s", diff)
	}
	got = roundTrip(t, mira.CodeStats{Files: 2, Walk: 1500 * time.Microsecond, Took: 3 * time.Second})
	want = map[string]any{"files": 2.0, "walk_ms": 1.0, "took_ms": 3000.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats: diff (-want +got)\n%s", diff)
	}
	got = roundTrip(t, mira.CodeStatus{Root: "/p&q", Files: 3, Languages: map[string]mira.CodeLang{"go": {Files: 3}, "": {Files: 1}},
		Updated: time.Date(2026, 11, 27, 11, 0, 0, 123456789, time.FixedZone("CET", 3600))})
	want = map[string]any{"root": "/p&q", "files": 3.0, "languages": map[string]any{"go": map[string]any{"files": 3.0}, "": map[string]any{"files": 1.0}},
		"updated": "2026-11-27T10:00:00Z"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status: diff (-want +got)\n%s", diff)
	}
	got = roundTrip(t, mira.CodeEdge{From: mira.CodeCard{Name: "A"}, To: mira.CodeCard{}, Depth: 1})
	want = map[string]any{"from": map[string]any{"name": "A"}, "to": map[string]any{}, "depth": 1.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("edge: diff (-want +got)\n%s", diff)
	}
}

// TestCodeJSONKeepsHTML: a value that marshals itself is written as it
// is, so it must not escape what a path or a signature holds.
func TestCodeJSONKeepsHTML(t *testing.T) {
	var out bytes.Buffer
	o := &IO{Out: &out, Err: &out}
	if err := writeCode(o, "jsonl", []mira.CodeStatus{{Root: "/a&b<c>"}}, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), `{"root":"/a&b<c>"}`+"\n"; got != want {
		t.Errorf("status line = %q, want %q", got, want)
	}
}

func roundTrip(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
