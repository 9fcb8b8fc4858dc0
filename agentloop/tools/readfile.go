package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/miramem/mira/internal/text"
	"io/fs"
	"os"
	"strings"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// readFile is the read_file tool.
type readFile struct{ e *env }

func (t readFile) schema() *jsonschema.Definition {
	return object(map[string]jsonschema.Definition{
		"path":   {Type: jsonschema.String, Description: "The file to read: relative to the project root or absolute, or artifact://ID to read a stored output."},
		"offset": {Type: jsonschema.Integer, Description: "The line to start at, counting from 1. Default 1."},
		"limit":  {Type: jsonschema.Integer, Description: fmt.Sprintf("How many lines to read. Default %d.", t.e.limits.ReadLines)},
	}, "path")
}

// Definition implements Tool.
func (t readFile) Definition() openai.Tool {
	return schemaTool("read_file", fmt.Sprintf("Read a text file. Lines are shown numbered as by `cat -n` (number, tab, line); the numbers are not part of the file. "+
		"At most %d lines or %s are returned at a time and lines longer than %d bytes are clipped; use offset and limit to read on. "+
		"Read a file before editing it. Also reads stored outputs: path artifact://ID.",
		t.e.limits.ReadLines, text.Size(int64(t.e.limits.ReadBytes)), t.e.limits.LineBytes), t.schema())
}

// Run implements Tool.
func (t readFile) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := decodeArgs(args, t.schema(), &a); err != nil {
		return errorf("%v", err), nil
	}
	if err := ctx.Err(); err != nil {
		return errorf("read_file was interrupted"), err
	}
	if a.Offset < 0 || a.Limit < 0 {
		return errorf("offset and limit must not be negative (offset counts lines from 1)"), nil
	}
	tg, err := t.e.ws.resolve(a.Path, true)
	if err != nil {
		return errorf("%v", err), nil
	}
	if tg.artifact != "" {
		if fi, err := os.Stat(tg.abs); err == nil && fi.Size() > t.e.limits.ReadFileBytes {
			// A long artifact is paged through without reading it whole;
			// it was redacted as it was stored.
			return t.pageLarge(ctx, tg, a.Offset, a.Limit)
		}
	}
	text, err := readText(tg, t.e.limits.ReadFileBytes)
	if err != nil {
		return errorf("%v", err), nil
	}
	// Redact the whole file before paging, so that a key block is
	// recognised even when the page starts in its middle.
	lines := splitLines(Redact(text))
	if len(lines) == 0 {
		return Result{Content: fmt.Sprintf("%s is empty.", tg.show), paged: true}, nil
	}
	first := max(a.Offset, 1)
	if first > len(lines) {
		return errorf("offset %d is past the end of %s, which has %s", first, tg.show, plural(len(lines), "line")), nil
	}
	limit := a.Limit
	if limit == 0 {
		limit = t.e.limits.ReadLines
	}
	last := min(len(lines), first-1+limit) // 1-based, inclusive

	var b strings.Builder
	shown := 0
	for n := first; n <= last; n++ {
		line := fmt.Sprintf("%6d\t%s\n", n, clipLine(lines[n-1], t.e.limits.LineBytes))
		if shown > 0 && b.Len()+len(line) > t.e.limits.ReadBytes {
			break
		}
		b.WriteString(line)
		shown++
	}
	last = first + shown - 1
	if first > 1 || last < len(lines) {
		fmt.Fprintf(&b, "[Lines %d-%d of %d.", first, last, len(lines))
		if last < len(lines) {
			fmt.Fprintf(&b, " To read on, call read_file with offset %d.", last+1)
		}
		b.WriteString("]\n")
	}
	return Result{Content: strings.TrimSuffix(b.String(), "\n"), paged: true}, nil
}

// readText reads a text file for read_file and edit_file, refusing
// directories, devices, binary files and files over maxBytes.
func readText(tg target, maxBytes int64) (string, error) {
	fi, err := os.Stat(tg.abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s does not exist", tg.show)
	}
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", tg.show, err)
	}
	switch {
	case fi.IsDir():
		return "", fmt.Errorf("%s is a directory; use glob to list its files", tg.show)
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", tg.show)
	case fi.Size() > maxBytes:
		return "", fmt.Errorf("%s is too large (%s; the limit is %s); find the part you need with grep, or print it with bash (sed -n 'FROM,TOp')",
			tg.show, text.Size(int64(fi.Size())), text.Size(int64(maxBytes)))
	}
	data, err := os.ReadFile(tg.abs)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", tg.show, err)
	}
	if isBinary(data) {
		return "", fmt.Errorf("%s is a binary file (%s); only text files can be read or edited", tg.show, text.Size(int64(len(data))))
	}
	return string(data), nil
}
