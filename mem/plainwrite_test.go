package mem

import (
	"strings"
	"testing"
	"time"
)

// plainWords are values the plain writer must either write exactly as
// the YAML encoder does or leave to it: words of every shape an id, a
// kind, a tag or a project takes, and those YAML reads as something else.
var plainWords = []string{
	"note", "global", "01KEJR535R16BDZ0CREHQ123YD", "01234567890123456789012345", "0x1F", "0o17", "0b101",
	"1e3", "1E5", "1_000", "12.5", ".5", "2026-01-02", "2026-01-02T03:04:05Z", "20260102", "1-2", "7days",
	"true", "True", "FALSE", "null", "Null", "~", "yes", "No", "on", "OFF", "y", "N", "<<", ".inf", "-.inf", "nan",
	"Infinity", "NaN", "a b", "a: b", "a #b", "#a", "-a", "a-", "a/b", "a.b", "a_b", "_a", "/a", ".a",
	"a,b", "[a]", "{a}", "a'b", `a"b`, "a\tb", "a\nb", "é", "a\u00a0b", "@a", "%a", "*a", "&a", "!a", "|a", ">a", "?a",
	strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("ab ", 40), "mira-code", "v1.5", "auth/login",
}

// TestWritePlainMeta holds the plain writer to the YAML encoder's bytes:
// for every value it writes, in every field, alone and together, and for
// tag lists short and long, it writes what the encoder writes, and the
// entry reads back the same.
func TestWritePlainMeta(t *testing.T) {
	at := time.Date(2026, 1, 10, 1, 25, 55, 0, time.UTC)
	base := func() *Entry {
		return &Entry{ID: "01KEJR535R16BDZ0CREHQ123YD", Kind: KindFact, Scope: DefaultScope, CreatedAt: at,
			Project: "L200", Source: "cli", Tags: []string{"gen", "t15"}, Body: "a body"}
	}
	set := []struct {
		name string
		put  func(e *Entry, v string)
	}{
		{"id", func(e *Entry, v string) { e.ID = v }},
		{"scope", func(e *Entry, v string) { e.Scope = v }},
		{"project", func(e *Entry, v string) { e.Project = v }},
		{"source", func(e *Entry, v string) { e.Source = v }},
		{"status", func(e *Entry, v string) { e.Status = v }},
		{"priority", func(e *Entry, v string) { e.Priority = v }},
		{"pin_task", func(e *Entry, v string) { e.PinTask = v }},
		{"replaced_by", func(e *Entry, v string) { e.ReplacedBy = v }},
		{"deleted_reason", func(e *Entry, v string) { e.DeletedReason = v }},
		{"tag", func(e *Entry, v string) { e.Tags = []string{v} }},
		{"tags", func(e *Entry, v string) { e.Tags = []string{"a", v, "b"} }},
	}
	wrote := 0
	check := func(e *Entry) {
		t.Helper()
		got, ok := writePlainMeta(e)
		if !ok {
			return
		}
		wrote++
		want, err := e.encodeMeta()
		if err != nil {
			t.Fatalf("the encoder refused what the plain writer wrote %q: %v", got, err)
		}
		if string(got) != string(want) {
			t.Fatalf("plain writer:\n%s\nthe encoder:\n%s", got, want)
		}
	}
	check(base())
	for _, w := range plainWords {
		for _, f := range set {
			e := base()
			f.put(e, w)
			check(e)
		}
	}
	for n := 1; n <= 20; n++ {
		e := base()
		e.Tags = nil
		for i := range n {
			e.Tags = append(e.Tags, strings.Repeat("t", i%7+1))
		}
		check(e)
	}
	for _, tm := range []time.Time{at.Add(123456789 * time.Nanosecond), at.Add(time.Millisecond), time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))} {
		e := base()
		e.CreatedAt, e.UpdatedAt, e.PinUntil, e.DeletedAt = tm, tm, tm, tm
		check(e)
	}
	if wrote < 150 {
		t.Errorf("the plain writer wrote %d of the cases, want most of them", wrote)
	}
	// What it declines goes to the encoder: the file reads back the same.
	for _, w := range plainWords {
		e := base()
		e.Project, e.Tags = w, []string{w}
		data, err := e.Marshal()
		if err != nil {
			continue // a value no memory may hold
		}
		back, err := Parse("entries/global/facts/x.md", data)
		if err != nil {
			t.Fatalf("%q: %v\n%s", w, err, data)
		}
		if back.Project != w || len(back.Tags) != 1 || back.Tags[0] != w {
			t.Errorf("%q came back as project %q, tags %q", w, back.Project, back.Tags)
		}
	}
}

// FuzzWritePlainMeta: whatever the values, the plain writer writes the
// encoder's bytes or declines.
func FuzzWritePlainMeta(f *testing.F) {
	for _, w := range plainWords {
		f.Add(w, w)
	}
	f.Fuzz(func(t *testing.T, project, tag string) {
		e := &Entry{ID: "01KEJR535R16BDZ0CREHQ123YD", Kind: KindNote, Scope: DefaultScope, Project: project, Tags: []string{tag, "x"}}
		got, ok := writePlainMeta(e)
		if !ok {
			return
		}
		want, err := e.encodeMeta()
		if err != nil || string(got) != string(want) {
			t.Fatalf("plain writer:\n%s\nthe encoder (%v):\n%s", got, err, want)
		}
	})
}
