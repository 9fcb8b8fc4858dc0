package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Limits.ReadBytes = 4 << 10; c.Limits.LineBytes = 100 })
	f.write(t, "three.txt", "one\n\ttwo\nthree")
	var many strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	f.write(t, "many.txt", many.String())
	f.write(t, "long.txt", "short\n"+strings.Repeat("x", 250)+"\n")
	f.write(t, "empty.txt", "")
	f.write(t, "bin.dat", "PK\x03\x04\x00\x00binary")
	f.write(t, "dir/inner.txt", "x\n")
	f.write(t, "wide.txt", strings.Repeat(strings.Repeat("w", 90)+"\n", 200))
	// Numbered, each line takes 64 bytes: 64 of them fill the 4 KiB cap.
	f.write(t, "exact.txt", strings.Repeat(strings.Repeat("e", 56)+"\n", 70))

	tests := []struct {
		name    string
		args    obj
		want    string   // exact content, if set
		parts   []string // else parts of the content
		isError bool
	}{
		{name: "whole file", args: obj{"path": "three.txt"}, want: "     1\tone\n     2\t\ttwo\n     3\tthree"},
		{name: "offset and limit", args: obj{"path": "many.txt", "offset": 10, "limit": 2},
			want: "    10\tline 10\n    11\tline 11\n[Lines 10-11 of 300. To read on, call read_file with offset 12.]"},
		{name: "to the end", args: obj{"path": "many.txt", "offset": 299},
			want: "   299\tline 299\n   300\tline 300\n[Lines 299-300 of 300.]"},
		{name: "offset zero means the start", args: obj{"path": "three.txt", "offset": 0, "limit": 1},
			want: "     1\tone\n[Lines 1-1 of 3. To read on, call read_file with offset 2.]"},
		{name: "long line clipped", args: obj{"path": "long.txt"},
			parts: []string{"     2\t" + strings.Repeat("x", 100) + "… [line clipped: 150 more bytes]"}},
		{name: "byte cap pages", args: obj{"path": "wide.txt"},
			parts: []string{"    41\t", "[Lines 1-41 of 200. To read on, call read_file with offset 42.]"}},
		{name: "byte cap filled exactly", args: obj{"path": "exact.txt"},
			parts: []string{"    64\t", "[Lines 1-64 of 70. To read on, call read_file with offset 65.]"}},
		{name: "last line", args: obj{"path": "three.txt", "offset": 3}, want: "     3\tthree\n[Lines 3-3 of 3.]"},
		{name: "line that fits exactly", args: obj{"path": "long.txt", "limit": 1}, want: "     1\tshort\n[Lines 1-1 of 2. To read on, call read_file with offset 2.]"},
		{name: "empty", args: obj{"path": "empty.txt"}, want: "empty.txt is empty."},
		{name: "past the end", args: obj{"path": "three.txt", "offset": 4}, parts: []string{"offset 4 is past the end of three.txt, which has 3 lines"}, isError: true},
		{name: "binary", args: obj{"path": "bin.dat"}, parts: []string{"bin.dat is a binary file"}, isError: true},
		{name: "directory", args: obj{"path": "dir"}, parts: []string{"dir is a directory; use glob"}, isError: true},
		{name: "missing", args: obj{"path": "nope.txt"}, parts: []string{"nope.txt does not exist"}, isError: true},
		{name: "negative limit", args: obj{"path": "three.txt", "limit": -1}, parts: []string{"must not be negative"}, isError: true},
		{name: "empty path", args: obj{"path": ""}, parts: []string{"the path is empty"}, isError: true},
		{name: "unknown artifact", args: obj{"path": "artifact://01NOPE"}, parts: []string{"there is no artifact artifact://01NOPE"}, isError: true},
		{name: "artifact id with a slash", args: obj{"path": "artifact://../../etc/passwd"}, parts: []string{"not a valid artifact id"}, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t, "read_file", tt.args)
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v (%s)", res.IsError, tt.isError, res.Content)
			}
			if tt.want != "" && res.Content != tt.want {
				t.Errorf("content = %q\nwant      %q", res.Content, tt.want)
			}
			wantContains(t, "content", res.Content, tt.parts...)
		})
	}
	// A page under the cap is never stored as an artifact.
	if res := f.call(t, "read_file", obj{"path": "many.txt"}); len(res.Artifacts) != 0 {
		t.Errorf("read_file made artifacts %v", res.Artifacts)
	}
}

func TestWriteFile(t *testing.T) {
	f := newFixture(t)
	script := f.write(t, "run.sh", "#!/bin/sh\necho old\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	f.write(t, "adir/keep", "")

	tests := []struct {
		name    string
		args    obj
		want    string
		isError bool
		file    string // the file's content afterwards, when checked
	}{
		{"create with parents", obj{"path": "a/b/c.txt", "content": "one\ntwo\n"}, "Created a/b/c.txt (2 lines, 8 B).", false, "one\ntwo\n"},
		{"overwrite", obj{"path": "run.sh", "content": "#!/bin/sh\necho new\n"}, "Overwrote run.sh (2 lines, 19 B).", false, "#!/bin/sh\necho new\n"},
		{"same content", obj{"path": "run.sh", "content": "#!/bin/sh\necho new\n"}, "run.sh already has this content; nothing was written.", false, ""},
		{"empty file", obj{"path": "empty", "content": ""}, "Created empty (0 lines, 0 B).", false, ""},
		{"directory", obj{"path": "adir", "content": "x"}, "adir is a directory", true, ""},
		{"artifact", obj{"path": "artifact://01X", "content": "x"}, "artifact://01X is a stored artifact and cannot be changed; write to a file in the project instead", true, ""},
		{"missing content", obj{"path": "x.txt"}, `missing required argument "content"; the arguments are content (required), path (required)`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t, "write_file", tt.args)
			if res.Content != tt.want || res.IsError != tt.isError {
				t.Errorf("write_file = %q (error %v), want %q (error %v)", res.Content, res.IsError, tt.want, tt.isError)
			}
			if tt.file != "" {
				if got := f.read(t, tt.args["path"].(string)); got != tt.file {
					t.Errorf("file = %q, want %q", got, tt.file)
				}
			}
		})
	}
	if fi, _ := os.Stat(script); fi.Mode().Perm() != 0o755 {
		t.Errorf("overwriting changed the mode to %v", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(f.root); len(ents) != 4 {
		t.Errorf("root holds %d entries, want 4 (no temporary files): %v", len(ents), ents)
	}
}

func TestEditFile(t *testing.T) {
	const goSrc = "package main\n\nfunc main() {\n\tx := 1\n\tif x > 0 {\n\t\tprintln(x)\n\t}\n\tprintln(x)\n}\n"
	tests := []struct {
		name    string
		file    string
		args    obj
		isError bool
		parts   []string // in the result
		after   string   // the file afterwards; "" means unchanged
	}{
		{
			name:  "unique",
			file:  goSrc,
			args:  obj{"old_string": "x := 1", "new_string": "x := 2"},
			parts: []string{"Edited f.go: replaced 1 occurrence at line 4.", "Lines 1-7 now read:", "     4\t\tx := 2"},
			after: strings.Replace(goSrc, "x := 1", "x := 2", 1),
		},
		{
			name:  "a file of one line",
			file:  "x := 1",
			args:  obj{"old_string": "1", "new_string": "2"},
			parts: []string{"Edited f.go: replaced 1 occurrence at line 1.", "Lines 1-1 now read:\n     1\tx := 2"},
			after: "x := 2",
		},
		{
			name:    "not unique",
			file:    goSrc,
			args:    obj{"old_string": "println(x)", "new_string": "fmt.Println(x)"},
			isError: true,
			parts:   []string{"old_string occurs 2 times in f.go (at lines 6, 8)", "set replace_all"},
		},
		{
			name:  "not unique made unique by indentation",
			file:  goSrc,
			args:  obj{"old_string": "\t\tprintln(x)", "new_string": "\t\tprintln(x + 1)"},
			parts: []string{"replaced 1 occurrence at line 6"},
			after: strings.Replace(goSrc, "\t\tprintln(x)", "\t\tprintln(x + 1)", 1),
		},
		{
			name:  "replace all",
			file:  goSrc,
			args:  obj{"old_string": "println(x)", "new_string": "fmt.Println(x)", "replace_all": true},
			parts: []string{"replaced 2 occurrences at lines 6, 8"},
			after: strings.ReplaceAll(goSrc, "println(x)", "fmt.Println(x)"),
		},
		{
			name:    "wrong indentation",
			file:    goSrc,
			args:    obj{"old_string": "    if x > 0 {\n        println(x)", "new_string": "if true {"},
			isError: true,
			parts:   []string{"old_string was not found in f.go", "Lines 5-6 have the same text with different indentation", "     5\t\tif x > 0 {\n     6\t\t\tprintln(x)"},
		},
		{
			name:    "not found",
			file:    goSrc,
			args:    obj{"old_string": "y := 3", "new_string": "y := 4"},
			isError: true,
			parts:   []string{"old_string was not found in f.go. Read the file again"},
		},
		{
			name:    "redaction mark in old_string",
			file:    goSrc,
			args:    obj{"old_string": "key = [REDACTED:aws-access-key-id]", "new_string": "key = x"},
			isError: true,
			parts:   []string{"It contains a [REDACTED:…] mark"},
		},
		{
			name:    "redaction mark in new_string",
			file:    goSrc,
			args:    obj{"old_string": "x := 1", "new_string": "x := [REDACTED:jwt]"},
			isError: true,
			parts:   []string{"new_string contains [REDACTED:…], a mark standing for a secret"},
		},
		{
			name:    "same strings",
			file:    goSrc,
			args:    obj{"old_string": "x := 1", "new_string": "x := 1"},
			isError: true,
			parts:   []string{"the same"},
		},
		{
			name:    "empty old_string",
			file:    goSrc,
			args:    obj{"old_string": "", "new_string": "x"},
			isError: true,
			parts:   []string{"old_string is empty; to create a file use write_file"},
		},
		{
			name:  "CRLF file",
			file:  "a\r\nb\r\nc\r\n",
			args:  obj{"old_string": "a\nb", "new_string": "A\nB"},
			parts: []string{"replaced 1 occurrence at line 1", "     1\tA\n     2\tB\n     3\tc"},
			after: "A\r\nB\r\nc\r\n",
		},
		{
			name:  "multi-line replacement with new lines",
			file:  "one\ntwo\nthree\n",
			args:  obj{"old_string": "two\n", "new_string": "two\ntwo and a half\n"},
			parts: []string{"     3\ttwo and a half\n     4\tthree"},
			after: "one\ntwo\ntwo and a half\nthree\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.write(t, "f.go", tt.file)
			if err := os.Chmod(p, 0o600); err != nil {
				t.Fatal(err)
			}
			tt.args["path"] = "f.go"
			res := f.call(t, "edit_file", tt.args)
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v: %s", res.IsError, tt.isError, res.Content)
			}
			wantContains(t, "result", res.Content, tt.parts...)
			want := tt.after
			if want == "" {
				want = tt.file
			}
			if got := f.read(t, "f.go"); got != want {
				t.Errorf("file = %q, want %q", got, want)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode = %v, want 0600 kept", fi.Mode().Perm())
			}
		})
	}
}

func TestEditFileErrors(t *testing.T) {
	f := newFixture(t)
	f.write(t, "bin", "a\x00b")
	tests := []struct {
		args obj
		want string
	}{
		{obj{"path": "missing.go", "old_string": "a", "new_string": "b"}, "missing.go does not exist"},
		{obj{"path": "bin", "old_string": "a", "new_string": "b"}, "bin is a binary file"},
		{obj{"path": "x", "old_string": "a"}, `missing required argument "new_string"`},
		{obj{"path": "x", "old_string": "a", "new_string": "b", "replace_all": "yes"}, `argument "replace_all" must be true or false`},
	}
	for _, tt := range tests {
		res := f.call(t, "edit_file", tt.args)
		if !res.IsError {
			t.Errorf("edit_file(%v) = %+v, want an error", tt.args, res)
		}
		wantContains(t, "error", res.Content, tt.want)
	}
}

// A file holding a secret is shown redacted; the model's copy of it, marks
// and all, must not overwrite the real secret.
func TestRedactedFileRoundTrip(t *testing.T) {
	f := newFixture(t)
	key := fakeAWSKey(7)
	orig := "region = eu-west-1\naws_access_key_id = " + key + "\n"
	f.write(t, "config.ini", orig)
	res := f.call(t, "read_file", obj{"path": "config.ini"})
	if strings.Contains(res.Content, key) {
		t.Fatalf("read_file showed the key: %s", res.Content)
	}
	wantContains(t, "read_file", res.Content, "     2\taws_access_key_id = [REDACTED:aws-access-key-id]")

	shown := "region = eu-central-1\naws_access_key_id = [REDACTED:aws-access-key-id]\n"
	res = f.call(t, "write_file", obj{"path": "config.ini", "content": shown})
	if !res.IsError {
		t.Errorf("write_file with a redaction mark = %+v, want refused", res)
	}
	// Editing around the secret works.
	res = f.call(t, "edit_file", obj{"path": "config.ini", "old_string": "eu-west-1", "new_string": "eu-central-1"})
	if res.IsError {
		t.Fatalf("edit_file: %s", res.Content)
	}
	if got, want := f.read(t, "config.ini"), strings.Replace(orig, "eu-west-1", "eu-central-1", 1); got != want {
		t.Errorf("config.ini = %q, want %q", got, want)
	}
	if strings.Contains(res.Content, key) {
		t.Errorf("edit_file result showed the key: %s", res.Content)
	}
	// The approval summary shows the change, not the file.
	ap := &approverFunc{fn: func(string, string) (Decision, error) { return AllowOnce, nil }}
	f.policy.Yes, f.policy.Interactive, f.policy.Approver = false, true, ap
	f.call(t, "edit_file", obj{"path": "config.ini", "old_string": "eu-central-1", "new_string": "us-east-1"})
	if len(ap.asked) != 1 {
		t.Fatalf("asked %d times, want 1", len(ap.asked))
	}
	wantContains(t, "summary", ap.asked[0], "edit_file: edit config.ini: replace 1 occurrence at line 1\n- eu-central-1\n+ us-east-1")
	if _, err := os.Stat(filepath.Join(f.root, "config.ini")); err != nil {
		t.Fatal(err)
	}
}

// A file of exactly the size limit is read; one byte more is not. A line
// longer than the page's byte cap is still shown, alone.
func TestReadFileLimits(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Limits.ReadFileBytes = 64; c.Limits.ReadBytes = 50; c.Limits.LineBytes = 100 })
	f.write(t, "fits.txt", strings.Repeat("a", 63)+"\n")
	f.write(t, "over.txt", strings.Repeat("a", 64)+"\n")
	f.write(t, "wide.txt", strings.Repeat("w", 55)+"\nnext\n")
	if res := f.call(t, "read_file", obj{"path": "fits.txt"}); res.IsError || res.Content != "     1\t"+strings.Repeat("a", 63) {
		t.Errorf("file of the size limit: %+v", res)
	}
	if res := f.call(t, "read_file", obj{"path": "over.txt"}); !res.IsError || !strings.Contains(res.Content, "over.txt is too large") {
		t.Errorf("file over the size limit: %+v", res)
	}
	want := "     1\t" + strings.Repeat("w", 55) + "\n[Lines 1-1 of 2. To read on, call read_file with offset 2.]"
	if res := f.call(t, "read_file", obj{"path": "wide.txt"}); res.Content != want {
		t.Errorf("line over the page cap = %q, want %q", res.Content, want)
	}
}
