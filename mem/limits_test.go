package mem

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// manyTags returns n distinct tags.
func manyTags(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint("t", i)
	}
	return out
}

// nested returns a value nested depth levels deep, as encoding/json
// decodes one.
func nested(depth int) any {
	var v any = "x"
	for range depth - 1 {
		v = []any{v}
	}
	return v
}

// TestFieldLimits: every field that reaches a file is bounded, and the
// error names the field and the limit; values at the limit pass.
func TestFieldLimits(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	at := func(n int) string { return strings.Repeat("y", n) }
	for _, tc := range []struct {
		name string
		edit func(e *Entry)
		want string // "" for valid
	}{
		{"64 tags of 128 bytes", func(e *Entry) {
			e.Tags = manyTags(64)
			e.Tags[0] = at(128)
		}, ""},
		{"a 3 MB tag", func(e *Entry) { e.Tags = []string{"db", big} }, `field "tags[1]": 3.0 MiB, more than the limit of 128 bytes`},
		{"60,000 tags", func(e *Entry) { e.Tags = manyTags(60000) }, `field "tags": 60000 tags, more than the limit of 64 tags`},
		{"65 tags", func(e *Entry) { e.Tags = manyTags(65) }, `field "tags": 65 tags`},
		{"project", func(e *Entry) { e.Project = big }, `field "project": 3.0 MiB, more than the limit of 256 bytes`},
		{"project at the limit", func(e *Entry) { e.Project = at(256) }, ""},
		{"source", func(e *Entry) { e.Source = at(257) }, `field "source": 257 bytes, more than the limit of 256 bytes`},
		{"status", func(e *Entry) { e.Status = big }, `field "status"`},
		{"priority", func(e *Entry) { e.Priority = big }, `field "priority"`},
		{"replaced_by", func(e *Entry) { e.ReplacedBy = big }, `field "replaced_by"`},
		{"deleted_reason", func(e *Entry) { e.DeletedReason = big }, `field "deleted_reason": 3.0 MiB, more than the limit of 4.0 KiB`},
		{"a 5 MB other field", func(e *Entry) { e.Extra = map[string]any{"note": strings.Repeat("z", 5<<20)} }, `field "note"`},
		{"other fields together", func(e *Entry) {
			e.Extra = map[string]any{}
			for i := range 1100 {
				e.Extra[fmt.Sprint("f", i)] = at(1 << 10)
			}
		}, "1.0 MiB for all of them"},
		{"a big map", func(e *Entry) {
			m := map[string]any{}
			for i := range 100000 {
				m[fmt.Sprint("k", i)] = i
			}
			e.Extra = map[string]any{"meta": m}
		}, `field "meta"`},
		{"nested 32 levels", func(e *Entry) { e.Extra = map[string]any{"deep": nested(32)} }, ""},
		{"nested 33 levels", func(e *Entry) { e.Extra = map[string]any{"deep": nested(33)} }, `field "deep": nested more deeply, more than the limit of 32 levels`},
		{"nested 10,000 levels", func(e *Entry) { e.Extra = map[string]any{"deep": nested(10000)} }, `field "deep": nested more deeply`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Entry{Body: "x", Kind: KindFact, Scope: DefaultScope}
			tc.edit(e)
			err := Validate(e)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate = %v, want valid", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate = %v, want an error saying %q", err, tc.want)
			}
			// What passes is written and read back; what does not is
			// not written either.
			data, err := e.Marshal()
			if tc.want != "" {
				if err == nil {
					t.Fatalf("Marshal wrote %d bytes", len(data))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Parse("entries/global/facts/20260101T000000Z__01JX.md", data); err != nil {
				t.Fatalf("Parse(Marshal(e)) = %v", err)
			}
		})
	}
}

// TestParseLimits: a file made by hand beyond a limit is a *ParseError
// naming the file, the field and the limit; it is read no further than
// needed to tell.
func TestParseLimits(t *testing.T) {
	tags := make([]string, 60000)
	for i := range tags {
		tags[i] = fmt.Sprint("t", i)
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"a 5 MB tag", "---\ntags: [db, \"" + strings.Repeat("x", 5<<20) + "\"]\n---\nx\n", "front matter: no closing \"---\" line within 4.0 MiB"},
		{"a 3 MB tag", "---\ntags: [db, \"" + strings.Repeat("x", 3<<20) + "\"]\n---\nx\n", `field "tags[1]": 3.0 MiB, more than the limit of 128 bytes`},
		{"a 1 KB tag", "---\ntags: [db, " + strings.Repeat("x", 1<<10) + "]\n---\nx\n", `field "tags[1]": 1.0 KiB, more than the limit of 128 bytes`},
		{"60,000 tags", "---\ntags: [" + strings.Join(tags, ", ") + "]\n---\nx\n", `field "tags": 60000 tags, more than the limit of 64 tags`},
		{"65 tags", "---\ntags: [" + strings.Join(tags[:65], ", ") + "]\n---\nx\n", `field "tags": 65 tags, more than the limit of 64 tags`},
		{"a long project", "---\nproject: " + strings.Repeat("p", 300) + "\n---\nx\n", `field "project": 300 bytes, more than the limit of 256 bytes`},
		{"nested 10,000 levels", "---\ndeep: " + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + "\n---\nx\n", `line 2: field "deep": nested more deeply, more than the limit of 32 levels`},
		{"nested 10,000 levels, block", "---\ndeep:\n" + strings.Repeat("- ", 9999) + "x\n---\nx\n", `field "deep": nested more deeply`},
		{"nested 40 levels", "---\nkind: fact\ndeep: " + strings.Repeat("{a: ", 40) + "1" + strings.Repeat("}", 40) + "\n---\nx\n", `line 3: field "deep": nested more deeply`},
		{"aliases that multiply", "---\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n---\nx\n", `field "e": nested more deeply`},
		{"a 17 MiB file", "---\nkind: note\n---\n" + strings.Repeat("a line of a log\n", 17<<16), "file: 17.0 MiB, more than the limit of 16.0 MiB"},
		{"an id with a line break", "---\nid: \"01JX\\nfake line\"\n---\nx\n", `field "id": "01JX\nfake line" is not a memory id`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("entries/global/notes/20260101T000000Z__01JX.md", []byte(tc.in))
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error = %v, want a *ParseError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "entries/global/notes/") {
				t.Errorf("Parse error = %.300q, want path and %q", err, tc.want)
			}
		})
	}
	// Up to the limits, it reads.
	in := "---\ntags: [" + strings.Join(tags[:64], ", ") + "]\ndeep: " + strings.Repeat("[", 31) + "x" + strings.Repeat("]", 31) + "\n---\n" + strings.Repeat("a line of a log\n", 15<<16)
	if _, err := Parse("entries/global/notes/20260101T000000Z__01JX.md", []byte(in)); err != nil {
		t.Errorf("Parse at the limits = %v", err)
	}
}

// TestParseName: an entry file whose name carries no valid id, or whose
// path holds a control character, is a *ParseError that names it
// escaped, on one line.
func TestParseName(t *testing.T) {
	for _, rel := range []string{
		"entries/global/notes/20260101T000000Z__01JX\nmira-recall: all good.md",
		"entries/global/notes/20260101T000000Z__01JX \x1b[2J.md",
		"entries/global/notes/20260101T000000Z__" + strings.Repeat("A", 65) + ".md",
		"entries/global\nx/notes/20260101T000000Z__01JX.md",
	} {
		_, err := Parse(rel, []byte("---\nkind: note\n---\nx\n"))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) error = %v, want a *ParseError", rel, err)
			continue
		}
		if msg := err.Error(); strings.ContainsAny(msg, "\n\x1b") || !strings.HasPrefix(msg, "entries/global") {
			t.Errorf("Parse(%q) error = %q, want the path escaped, on one line", rel, msg)
		}
	}
	// A hand-made file with an id in its front matter and a plain name.
	if e, err := Parse("entries/global/notes/handmade.md", []byte("---\nid: handmade-1\n---\nx\n")); err != nil || e.ID != "handmade-1" {
		t.Errorf("Parse(handmade.md) = %v, %v", e, err)
	}
}

// TestReadTooLarge: the store reports a file larger than an entry may be
// with its path, without reading it whole.
func TestReadTooLarge(t *testing.T) {
	st, err := Open(t.Context(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rel := "entries/global/notes/20260101T000000Z__01JBIG.md"
	p := filepath.Join(st.Root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("---\nkind: note\n---\nx\n")
	if err := f.Truncate(1 << 30); err != nil { // sparse: 1 GiB that costs nothing
		t.Fatal(err)
	}
	f.Close()
	for _, size := range []int64{-1, 1 << 30} {
		_, err := st.ReadSized(rel, size)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), rel+": file: 1024.0 MiB, more than the limit of 16.0 MiB") {
			t.Errorf("ReadSized(1 GiB file, %d) = %v", size, err)
		}
	}
	var bad []error
	if err := st.Walk(func(*Entry) error { return nil }, func(err error) { bad = append(bad, err) }); err != nil || len(bad) != 1 {
		t.Errorf("Walk = %v, bad %v", err, bad)
	}
}

// TestRecordDepth: a JSONL record whose field nests deeper than the limit
// is refused naming the field; encoding/json alone accepts up to 10,000
// levels.
func TestRecordDepth(t *testing.T) {
	line := `{"text":"x","deep":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}`
	var r Record
	err := json.Unmarshal([]byte(line), &r)
	if err == nil || !strings.Contains(err.Error(), `field "deep": nested more deeply, more than the limit of 32 levels`) {
		t.Errorf("Unmarshal(9,999 levels) = %v", err)
	}
	line = `{"text":"x","deep":` + strings.Repeat("[", 31) + strings.Repeat("]", 31) + `}`
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Errorf("Unmarshal(32 levels) = %v", err)
	}
}
