package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/mem"
)

func TestReadRecordsNamesBadLines(t *testing.T) {
	in := "{\"text\":\"one\"}\n\n{\"text\": 2}\nnot json\n{\"text\":\"four\",\"x\":1}\n"
	var got []string
	bad := readRecords(strings.NewReader(in), "<stdin>", false, func(line int, r mem.Record) error {
		got = append(got, r.Text)
		return nil
	})
	if strings.Join(got, ",") != "one,four" {
		t.Errorf("records = %q, want one,four", got)
	}
	want := []string{`<stdin>:3: invalid JSON: field "text": cannot use number as string`, "<stdin>:4: invalid JSON: invalid character 'o' in literal null (expecting 'u')"}
	if len(bad) != len(want) {
		t.Fatalf("errors = %v, want %d", bad, len(want))
	}
	for i, err := range bad {
		var ie *InputError
		if !errors.As(err, &ie) || err.Error() != want[i] {
			t.Errorf("error %d = %q, want %q", i, err, want[i])
		}
	}
	// Stop at the first bad line (commands that change the store).
	bad = readRecords(strings.NewReader(in), "<stdin>", true, func(int, mem.Record) error { return nil })
	if len(bad) != 1 || exitCode(bad[0]) != ExitUsage {
		t.Errorf("stopAtFirst errors = %v", bad)
	}
}

func TestReadRecordsLongLine(t *testing.T) {
	long := `{"text":"` + strings.Repeat("x", 1<<20) + `"}`
	n := 0
	bad := readRecords(strings.NewReader(long+"\n"), "<stdin>", false, func(_ int, r mem.Record) error {
		n = len(r.Text)
		return nil
	})
	if len(bad) != 0 || n != 1<<20 {
		t.Errorf("1 MiB line: read %d bytes, errors %v", n, bad)
	}
}

func FuzzReadRecords(f *testing.F) {
	f.Add([]byte("{\"text\":\"a\",\"tags\":[\"x\"],\"created_at\":\"2026-01-01T00:00:00Z\"}\n"))
	f.Add([]byte("{\"text\":\"a\",\"extra\":{\"n\":[1,2,{\"k\":null}]}}\n{}\n"))
	f.Add([]byte("\n\n{\"text\":\"\\u0000\"}\r\n{"))
	f.Add([]byte(`{"text":"x","score":"high","why":[1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := 0
		bad := readRecords(strings.NewReader(string(data)), "<stdin>", false, func(line int, r mem.Record) error {
			lines++
			// What was read must write back as one JSON line and read
			// back the same text.
			out, err := r.MarshalJSON()
			if err != nil {
				return nil // values JSON cannot hold (NaN) are refused, not lost silently
			}
			var back mem.Record
			if err := back.UnmarshalJSON(out); err != nil {
				t.Fatalf("re-read of %s: %v", out, err)
			}
			if back.Text != r.Text || back.ID != r.ID {
				t.Fatalf("round trip changed the record: %+v -> %+v", r, back)
			}
			return nil
		})
		for _, err := range bad {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Line < 1 {
				t.Fatalf("bad line error without a line: %v", err)
			}
		}
	})
}

// TestRecordWriterAsEncoder: records are written as their own
// MarshalJSON gives them, which must be what an encoder without HTML
// escaping writes, one line each.
func TestRecordWriterAsEncoder(t *testing.T) {
	score := 0.5
	recs := []any{
		mem.Record{ID: "01A", Text: "a <b> & \"c\"\nline", Tags: []string{"x"}, Score: &score,
			Why:   map[string]any{"bm25": 1.5, "rank": 1},
			Extra: map[string]any{"zeta": []any{1.0, "two"}, "alpha": map[string]any{"k": nil}}},
		mem.Record{ID: "01B", Kind: "fact", Text: "plain"},
		map[string]string{"not": "a record"},
	}
	var got, want strings.Builder
	w := newRecordWriter(&got)
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("record writer wrote\n%s\nan encoder writes\n%s", got.String(), want.String())
	}
}

// TestClipText: a terminal shows the first 40 lines or 4 KiB of a memory,
// cut at a character, and says how much it left out.
func TestClipText(t *testing.T) {
	long := strings.Repeat("line\n", 100)
	if got, cut := clipText(long); strings.Count(got, "\n") != 39 || cut != len(long)-len(got) {
		t.Errorf("clipText(100 lines) = %d lines, %d cut", strings.Count(got, "\n")+1, cut)
	}
	wide := strings.Repeat("é", 5000)
	got, cut := clipText(wide)
	if len(got) > maxTextBytes || !utf8.ValidString(got) || cut != len(wide)-len(got) {
		t.Errorf("clipText(10 KB line) = %d bytes, valid %v, %d cut", len(got), utf8.ValidString(got), cut)
	}
	if got, cut := clipText("short"); got != "short" || cut != 0 {
		t.Errorf("clipText(short) = %q, %d", got, cut)
	}
}

// FuzzStdinReaders: what mira-forget and mira-context read from stdin is
// taken or reported by line, never a panic.
func FuzzStdinReaders(f *testing.F) {
	f.Add("01J9ABC\n{\"id\":\"01J9DEF\"}\n")
	f.Add("{\"text\":\"x\",\"kind\":\"fact\"}\nplain text\n{bad\n")
	f.Add("{}\n\n  \n")
	f.Fuzz(func(t *testing.T, in string) {
		var out, errb strings.Builder
		o := &IO{In: strings.NewReader(in), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
		readIDs(o)
		o.In = strings.NewReader(in)
		readContextInput(o, func(plan.Item) {})
	})
}
