package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/internal/text"
	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// previewLines is how many lines of new content an approval summary shows.
const previewLines = 12

// markRefusal explains why content holding a redaction mark is not written.
const markRefusal = "contains %s…], a mark standing for a secret that was hidden from you; writing it would replace the real secret with the mark. Leave the secret's lines out of the change (edit_file with a smaller old_string), or ask the user to make that change"

// writeFile is the write_file tool.
type writeFile struct{ e *env }

var writeFileSchema = object(map[string]jsonschema.Definition{
	"path":    {Type: jsonschema.String, Description: "The file to write: relative to the project root or absolute. Missing parent directories are created."},
	"content": {Type: jsonschema.String, Description: "The whole new content of the file."},
}, "path", "content")

// Definition implements Tool.
func (writeFile) Definition() openai.Tool {
	return schemaTool("write_file", "Create a file, or replace the whole content of one. To change part of an existing file use edit_file; read a file before replacing it. Needs the user's approval.", writeFileSchema)
}

// Run implements Tool.
func (t writeFile) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decodeArgs(args, writeFileSchema, &a); err != nil {
		return errorf("%v", err), nil
	}
	tg, err := t.e.ws.resolve(a.Path, false)
	if err != nil {
		return errorf("%v", err), nil
	}
	perm := os.FileMode(0o644)
	verb, action := "Created", "create"
	fi, err := os.Stat(tg.abs)
	switch {
	case err == nil && fi.IsDir():
		return errorf("%s is a directory", tg.show), nil
	case err == nil && !fi.Mode().IsRegular():
		return errorf("%s is not a regular file", tg.show), nil
	case err == nil:
		perm, verb, action = fi.Mode().Perm(), "Overwrote", "overwrite"
	case !errors.Is(err, fs.ErrNotExist):
		return errorf("cannot write %s: %v", tg.show, err), nil
	}
	var old []byte
	if verb == "Overwrote" {
		if old, err = os.ReadFile(tg.abs); err != nil {
			return errorf("cannot read %s: %v", tg.show, err), nil
		}
		if string(old) == a.Content {
			return Result{Content: fmt.Sprintf("%s already has this content; nothing was written.", tg.show)}, nil
		}
	}
	if strings.Contains(a.Content, redactedPrefix) && !strings.Contains(string(old), redactedPrefix) {
		return errorf("the content "+markRefusal, redactedPrefix), nil
	}
	lines := len(splitLines(a.Content))
	size := fmt.Sprintf("%s, %s", plural(lines, "line"), text.Size(int64(len(a.Content))))
	summary := fmt.Sprintf("%s %s (%s)\n%s", action, tg.show, size, preview("+ ", a.Content))
	if res, ok, err := t.e.approve(ctx, "write_file", summary); !ok {
		return res, err
	}
	if err := os.MkdirAll(filepath.Dir(tg.abs), 0o755); err != nil {
		return errorf("cannot create the directory of %s: %v", tg.show, err), nil
	}
	if err := atomicfile.Write(tg.abs, []byte(a.Content), perm, true); err != nil {
		return errorf("cannot write %s: %v", tg.show, err), nil
	}
	return Result{Content: fmt.Sprintf("%s %s (%s).", verb, tg.show, size)}, nil
}

// editFile is the edit_file tool.
type editFile struct{ e *env }

var editFileSchema = object(map[string]jsonschema.Definition{
	"path":        {Type: jsonschema.String, Description: "The file to edit: relative to the project root or absolute."},
	"old_string":  {Type: jsonschema.String, Description: "The exact text to replace, including indentation and line breaks, without read_file's line-number prefixes. It must occur once in the file unless replace_all is set; add neighbouring lines to make it unique."},
	"new_string":  {Type: jsonschema.String, Description: "The text to put in its place."},
	"replace_all": {Type: jsonschema.Boolean, Description: "Replace every occurrence of old_string instead of exactly one. Default false."},
}, "path", "old_string", "new_string")

// Definition implements Tool.
func (editFile) Definition() openai.Tool {
	return schemaTool("edit_file", "Replace text in a file: old_string must match the file exactly, indentation included, and occur exactly once unless replace_all is set. Read the file first. Needs the user's approval.", editFileSchema)
}

// Run implements Tool.
func (t editFile) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Path       string `json:"path"`
		Old        string `json:"old_string"`
		New        string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	if err := decodeArgs(args, editFileSchema, &a); err != nil {
		return errorf("%v", err), nil
	}
	switch {
	case a.Old == "":
		return errorf("old_string is empty; to create a file use write_file, to insert text include a neighbouring line in old_string and new_string"), nil
	case a.Old == a.New:
		return errorf("old_string and new_string are the same; there is nothing to change"), nil
	}
	tg, err := t.e.ws.resolve(a.Path, false)
	if err != nil {
		return errorf("%v", err), nil
	}
	text, err := readText(tg, t.e.limits.ReadFileBytes)
	if err != nil {
		return errorf("%v", err), nil
	}
	old, repl := a.Old, a.New
	n := strings.Count(text, old)
	if n == 0 && strings.Contains(text, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r\n") {
		// The model sees lines, not their CR LF endings.
		crlf := strings.ReplaceAll(old, "\n", "\r\n")
		if c := strings.Count(text, crlf); c > 0 {
			old, repl, n = crlf, strings.ReplaceAll(repl, "\n", "\r\n"), c
		}
	}
	if n == 0 {
		return errorf("%s", notFound(text, a.Old, tg.show, t.e.limits.LineBytes)), nil
	}
	at := occurrenceLines(text, old)
	if n > 1 && !a.ReplaceAll {
		return errorf("old_string occurs %d times in %s (at lines %s); include more of the surrounding lines to make it unique, or set replace_all to replace every occurrence", n, tg.show, lineList(at)), nil
	}
	if strings.Contains(repl, redactedPrefix) && !strings.Contains(old, redactedPrefix) {
		return errorf("new_string "+markRefusal, redactedPrefix), nil
	}
	var updated string
	if a.ReplaceAll {
		updated = strings.ReplaceAll(text, old, repl)
	} else {
		updated = strings.Replace(text, old, repl, 1)
	}
	what := "1 occurrence at line " + strconv.Itoa(at[0])
	if n > 1 {
		what = fmt.Sprintf("%d occurrences at lines %s", n, lineList(at))
	}
	summary := fmt.Sprintf("edit %s: replace %s\n%s\n%s", tg.show, what, preview("- ", a.Old), preview("+ ", a.New))
	if res, ok, err := t.e.approve(ctx, "edit_file", summary); !ok {
		return res, err
	}
	fi, err := os.Stat(tg.abs)
	if err != nil {
		return errorf("cannot edit %s: %v", tg.show, err), nil
	}
	if err := atomicfile.Write(tg.abs, []byte(updated), fi.Mode().Perm(), true); err != nil {
		return errorf("cannot write %s: %v", tg.show, err), nil
	}

	// Show the first changed passage as it is now, so the model can check
	// the edit without reading the file again.
	lines := splitLines(strings.ReplaceAll(updated, "\r\n", "\n"))
	from := max(1, at[0]-3)
	to := min(len(lines), at[0]+strings.Count(a.New, "\n")+3, from+39)
	var b strings.Builder
	fmt.Fprintf(&b, "Edited %s: replaced %s.\n", tg.show, what)
	if from <= to {
		fmt.Fprintf(&b, "Lines %d-%d now read:\n", from, to)
		numbered(&b, lines[from-1:to], from, t.e.limits.LineBytes)
	}
	return Result{Content: strings.TrimSuffix(b.String(), "\n")}, nil
}

// notFound explains why old_string did not match, as helpfully as it can.
func notFound(text, old, show string, lineBytes int) string {
	msg := fmt.Sprintf("old_string was not found in %s.", show)
	if strings.Contains(old, redactedPrefix) {
		return msg + " It contains a [REDACTED:…] mark: the file holds a secret there, hidden from you, so the mark never matches. Choose an old_string that leaves the secret's lines out."
	}
	if i, k := similarAt(text, old); k > 0 {
		lines := strings.Split(text, "\n")
		var b strings.Builder
		fmt.Fprintf(&b, "%s Lines %d-%d have the same text with different indentation or spacing; old_string must match exactly, leading whitespace included. The file has:\n", msg, i+1, i+k)
		numbered(&b, lines[i:i+k], i+1, lineBytes)
		return strings.TrimSuffix(b.String(), "\n")
	}
	return msg + " Read the file again to see its current text; old_string must match it exactly, indentation and line breaks included, without line-number prefixes."
}

// similarAt finds the first run of lines in text that equals old's lines
// once both are stripped of surrounding white space; it returns the run's
// 0-based first line and length, or k == 0.
func similarAt(text, old string) (i, k int) {
	want := strings.Split(strings.Trim(old, "\r\n"), "\n")
	for j := range want {
		want[j] = strings.TrimSpace(want[j])
	}
	if strings.Join(want, "") == "" {
		return 0, 0
	}
	lines := strings.Split(text, "\n")
outer:
	for i := 0; i+len(want) <= len(lines); i++ {
		for j, w := range want {
			got := strings.TrimSpace(lines[i+j])
			// The first and last lines of old_string may be parts of
			// lines.
			switch {
			case len(want) == 1 && strings.Contains(got, w),
				j == 0 && len(want) > 1 && strings.HasSuffix(got, w),
				j == len(want)-1 && j > 0 && strings.HasPrefix(got, w),
				got == w:
				continue
			}
			continue outer
		}
		return i, len(want)
	}
	return 0, 0
}

// occurrenceLines returns the 1-based line of every occurrence of old in
// text.
func occurrenceLines(text, old string) []int {
	var at []int
	line, pos := 1, 0
	for {
		i := strings.Index(text[pos:], old)
		if i < 0 {
			return at
		}
		line += strings.Count(text[pos:pos+i], "\n")
		at = append(at, line)
		line += strings.Count(old, "\n")
		pos += i + len(old)
	}
}

// lineList formats line numbers for a message, at most ten of them.
func lineList(at []int) string {
	s := make([]string, 0, 10)
	for i, n := range at {
		if i == 10 {
			s = append(s, fmt.Sprintf("and %d more", len(at)-10))
			break
		}
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ", ")
}

// preview shows the first lines of s for an approval summary, each after
// prefix.
func preview(prefix, s string) string {
	lines := splitLines(s)
	var b strings.Builder
	for i, l := range lines {
		if i == previewLines {
			fmt.Fprintf(&b, "%s… (%s)\n", prefix, plural(len(lines)-previewLines, "more line"))
			break
		}
		b.WriteString(prefix + text.Cut(l, 200) + "\n")
	}
	if len(lines) == 0 {
		b.WriteString(prefix + "(empty)\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
