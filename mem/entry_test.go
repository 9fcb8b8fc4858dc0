package mem

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseFillsFromPath(t *testing.T) {
	e, err := Parse("entries/shop/decisions/20261121T100000Z__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md", []byte("---\ntags: [db]\n---\nWe chose PostgreSQL.\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := []string{e.ID, e.Kind, e.Scope, e.Body, strings.Join(e.Tags, ",")}
	want := []string{"01JD3ZK4Q8V6N2M7T5R9W1X0YB", "decision", "shop", "We chose PostgreSQL.", "db"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse fields (-want +got):\n%s", diff)
	}
}

func TestRoundTripKeepsUnknownFieldsAndOrder(t *testing.T) {
	in := `---
# a comment the user wrote
owner: alice
id: 01JD3ZK4Q8V6N2M7T5R9W1X0YB
kind: fact
answer: no
nested:
  b: 2
  a: 1
created_at: 2026-11-21T10:00:00Z
tags: [a, b]
weird: "quoted"
---
Body line one.

Body line three.
`
	e, err := Parse("entries/global/facts/x__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, string(out)); diff != "" {
		t.Errorf("unchanged entry did not round-trip (-want +got):\n%s", diff)
	}

	// Changing known fields keeps the unknown ones where they were.
	e.Tags = []string{"c"}
	e.Pin = PinSticky
	out, err = e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{"# a comment the user wrote\nowner: alice\nid:", "answer: no\n", "nested:\n  b: 2\n  a: 1\n", "tags: [c]\n", "pin: sticky\n", "weird: \"quoted\"\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("rewrite lost %q:\n%s", want, s)
		}
	}
	if strings.Index(s, "owner:") > strings.Index(s, "id:") {
		t.Errorf("field order changed:\n%s", s)
	}
	if got := e.Fields()["answer"]; got != "no" {
		t.Errorf(`Fields()["answer"] = %v, want "no" (YAML 1.2: a string)`, got)
	}
}

// TestRewriteKeepsValueComments: a comment on a field's value stays with
// the field when Mira changes the value, and an alias in the front matter
// is read as the value it names.
func TestRewriteKeepsValueComments(t *testing.T) {
	in := "---\nid: 01JD3ZK4Q8V6N2M7T5R9W1X0YB\nsort: &k fact\nkind: *k\ntags: [a] # why we tag\n---\nbody\n"
	e, err := Parse("entries/global/facts/x__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != "fact" {
		t.Errorf("kind through an alias = %q, want fact", e.Kind)
	}
	e.Tags = []string{"b"}
	out, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "tags: [b] # why we tag\n") {
		t.Errorf("rewrite lost the value's comment:\n%s", out)
	}
	if strings.Count(string(out), "# why we tag") != 1 {
		t.Errorf("comment copied elsewhere:\n%s", out)
	}
}

// TestRewriteKeepsSpelling: a known field whose value did not change keeps
// the user's spelling (quotes, flow style, an anchor), a changed one is
// rewritten, and a cleared one is removed.
func TestRewriteKeepsSpelling(t *testing.T) {
	in := "---\nid: 01JD3ZK4Q8V6N2M7T5R9W1X0YB\nkind: \"fact\"\ntags: [\"a\", 'b']\nproject: &p \"web\"\nsource: *p\ncreated_at: \"2026-11-21T10:00:00Z\"\npin: sticky\npriority: low\n---\nbody\n"
	e, err := Parse("entries/global/facts/x__01JD3ZK4Q8V6N2M7T5R9W1X0YB.md", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	e.Pin = ""
	out, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// An alias is written out as its value: Mira cannot tell whether the
	// anchor would still name what the field holds.
	want := strings.NewReplacer("pin: sticky\n", "", "source: *p\n", "source: web\n").Replace(in)
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("clearing pin changed more than its line (-want +got):\n%s", diff)
	}
	e.Tags = []string{"a", "c"}
	e.Priority = "high"
	e.Kind = "note"
	out, err = e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"tags: [a, c]\n", "priority: high\n", "kind: note\n", "project: &p \"web\"\n", "created_at: \"2026-11-21T10:00:00Z\"\n"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("rewrite lacks %q:\n%s", w, out)
		}
	}
}

func TestNewEntryMarshal(t *testing.T) {
	e := &Entry{ID: "01JD3ZK4Q8V6N2M7T5R9W1X0YB", Kind: KindDecision, Scope: "global",
		CreatedAt: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC), Tags: []string{"db"}, Project: "shop",
		Source: "cli", Body: "We chose PostgreSQL for JSONB", Extra: map[string]any{"speaker": "Caroline", "turn": 3}}
	out, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `---
id: 01JD3ZK4Q8V6N2M7T5R9W1X0YB
kind: decision
scope: global
created_at: 2026-11-21T10:00:00Z
project: shop
source: cli
tags: [db]
speaker: Caroline
turn: 3
---
We chose PostgreSQL for JSONB
`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
	back, err := Parse("entries/global/decisions/x.md", out)
	if err != nil {
		t.Fatal(err)
	}
	if !back.CreatedAt.Equal(e.CreatedAt) || back.Body != e.Body || back.Fields()["turn"] != 3 {
		t.Errorf("Parse(Marshal(e)) = %+v", back)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"no front matter", "just text\n", "no front matter"},
		{"unclosed", "---\nkind: fact\nbody\n", "not closed"},
		{"bad yaml", "---\nkind: fact\ntags: [oops\n---\nx\n", "invalid YAML: line"},
		{"not a mapping", "---\n- a\n- b\n---\nx\n", "must be a YAML mapping"},
		{"bad kind", "---\nkind: banana\n---\nx\n", `line 2: field "kind": unknown kind "banana"`},
		{"bad time", "---\ncreated_at: yesterday\n---\nx\n", `line 2: field "created_at": cannot parse time`},
		{"list for scalar", "---\nkind: [a, b]\n---\nx\n", `line 2: field "kind" must be a single value`},
		{"duplicate field", "---\nkind: fact\nkind: note\n---\nx\n", `field "kind" appears twice`},
		{"bad pin", "---\nkind: fact\npin: forever\n---\nx\n", `line 3: field "pin": "forever" is neither sticky nor leased`},
		{"bad yaml line", "---\nkind: fact\n\ntext: \"a\n  b: c\n---\nx\n", "invalid YAML: line 4:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("entries/global/notes/20260101T000000Z__01JX.md", []byte(tt.in))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error = %v, want a *ParseError", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "entries/global/notes/") {
				t.Errorf("Parse error = %q, want path and %q", err, tt.want)
			}
		})
	}
}

// TestParseBlankLines: blank lines inside the front matter and before the
// body are kept apart from the closing delimiter.
func TestParseBlankLines(t *testing.T) {
	e, err := Parse("entries/global/notes/20260101T000000Z__01JX.md", []byte("---\nkind: fact\n\ntags: [a]\n---\n\nbody\n"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Kind != "fact" || len(e.Tags) != 1 || e.Tags[0] != "a" || strings.TrimSpace(e.Body) != "body" {
		t.Errorf("Parse = %+v", e)
	}
}

func TestDeletedPath(t *testing.T) {
	tests := map[string]string{
		"entries/global/facts/a.md":          "entries/global/deleted/facts/a.md",
		"entries/c1/turns/user/a.md":         "entries/c1/deleted/turns/user/a.md",
		"entries/c1/deleted/turns/user/a.md": "entries/c1/deleted/turns/user/a.md",
	}
	for in, want := range tests {
		if got := DeletedPath(in); got != want {
			t.Errorf("DeletedPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseTime(t *testing.T) {
	for _, s := range []string{"2026-11-21T10:00:00Z", "2026-11-21T11:00:00+01:00", "2026-11-21 10:00:00", "2026-11-21 10:00"} {
		got, err := ParseTime(s)
		if err != nil || !got.Equal(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)) {
			t.Errorf("ParseTime(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseTime("tomorrow"); err == nil {
		t.Error("ParseTime(tomorrow) succeeded")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nkind: fact\ntags: [a]\n---\nbody\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\nx: &a [1]\ny: *a\n---\n"))
	f.Add([]byte("---\nkind: fact\ncreated_at: 2026-01-01\n---\n---\nnot front matter\n"))
	f.Add([]byte("\ufeff---\r\nkind: note\r\n---\r\nwindows\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse("entries/global/notes/20260101T000000Z__01JFUZZ.md", data)
		if err != nil {
			return
		}
		out, err := e.Marshal()
		if err != nil {
			return // values YAML cannot re-encode are reported, not lost
		}
		again, err := Parse("entries/global/notes/20260101T000000Z__01JFUZZ.md", out)
		if err != nil {
			t.Fatalf("re-parse of marshalled entry failed: %v\n%s", err, out)
		}
		if strings.TrimSpace(again.Body) != strings.TrimSpace(e.Body) && !strings.HasPrefix(strings.TrimSpace(e.Body), "---") {
			t.Fatalf("body changed: %q -> %q", e.Body, again.Body)
		}
		if again.ID != e.ID || again.Kind != e.Kind || again.Scope != e.Scope {
			t.Fatalf("known fields changed: %+v -> %+v", e, again)
		}
	})
}

func TestRecordJSONKeepsExtraFields(t *testing.T) {
	in := `{"id":"X","kind":"turn","text":"hi <b>","speaker":"Caroline","turn":{"n":3},"tags":["a"]}`
	var r Record
	if err := r.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	out, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"X","kind":"turn","text":"hi <b>","tags":["a"],"speaker":"Caroline","turn":{"n":3}}`
	if string(out) != want {
		t.Errorf("MarshalJSON = %s, want %s", out, want)
	}
}

// TestParseKeepsNoInput: an entry read from a buffer stays the same when
// the buffer is overwritten afterwards, as Store.ReadSized does with the
// buffer it lends (rawfile.ReadWith), for front matter read by the plain
// reader and by the YAML parser.
func TestParseKeepsNoInput(t *testing.T) {
	for _, file := range []string{
		"---\nid: 01J0000000000000000000000A\nkind: fact\ntags: [alpha, beta]\ncreated: 2026-11-20T10:00:00Z\nowner: ops\n---\nthe body, with words\n",
		"---\nid: 01J0000000000000000000000A\nkind: fact\ntags:\n  - alpha\n  - beta\nnote: &a {x: 1}\nagain: *a\n---\nthe body, with words\n",
	} {
		buf := []byte(file)
		e, err := Parse("entries/global/facts/x.md", buf)
		if err != nil {
			t.Fatal(err)
		}
		before, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		rec := e.Record()
		for i := range buf {
			buf[i] = 'X'
		}
		after, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if string(after) != string(before) {
			t.Errorf("the entry changed with its input:\n%s\nwas\n%s", after, before)
		}
		if diff := cmp.Diff(rec, e.Record()); diff != "" {
			t.Errorf("the record changed with its input:\n%s", diff)
		}
	}
}
