// Package cli holds Mira's commands: their grammars, options, input and
// output, configuration and exit codes. A command turns its flags into a
// call of package mira and the result into output, and does nothing else.
// Each binary's main calls one function here, or, for a front end with
// more than a grammar, in its own package (agent, mcpserver) built on this
// one's IO, Main and errors; the domain packages know nothing of flags,
// terminals or exit codes.
package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/miramem/mira"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/secret"
	"github.com/miramem/mira/mem"
	"golang.org/x/term"
)

// IO is a command's standard streams and environment.
type IO struct {
	In       io.Reader
	Out      io.Writer
	Err      io.Writer
	InTTY    bool
	OutTTY   bool
	ErrTTY   bool
	Getenv   func(string) string
	Getwd    func() (string, error)
	progName string
	cfg      *Config // the configuration Main read
	// keep, in a process that serves recalls, keeps the vectors loaded
	// between them (index.Options.Keep).
	keep *index.Keep
	// progress is the command's indexing bar, shared by every index open
	// it makes and cleared when it ends.
	progress *progress
	// parsers, in the same process, keeps the commands' parsers.
	parsers *parsers
	// records, in the same process, keeps the records of files read.
	records *mira.RecordCache
	// ready, when set, is waited for before the store and the index are
	// opened: a served recall's taking in of the latest changes.
	ready func() error
	// served: the command runs in a server for a relay client, which has
	// its own stdin (see errNotServed).
	served bool
}

// Config returns the configuration file's contents, as config does.
func (o *IO) Config() *Config { return o.config() }

// TextOutput reports whether --output mode means text on this IO: text, or
// auto on a terminal.
func (o *IO) TextOutput(mode string) bool { return o.textOutput(mode) }

// config returns the configuration file's contents, read once per command
// (Main has already reported a file that does not parse; it counts as
// empty here).
func (o *IO) config() *Config {
	if o.cfg == nil {
		c, err := loadConfig(o.Getenv)
		if err != nil {
			c = &Config{}
		}
		o.cfg = c
	}
	return o.cfg
}

// StdIO returns the process's streams.
func StdIO(name string) *IO {
	isTTY := func(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
	o := &IO{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		InTTY: isTTY(os.Stdin), OutTTY: isTTY(os.Stdout), ErrTTY: isTTY(os.Stderr),
		Getenv: os.Getenv, Getwd: os.Getwd, progName: name,
	}
	if os.Getenv("MIRA_FORCE_TTY") == "1" {
		o.OutTTY = true
	}
	return o
}

// Color reports whether escapes may be written to stdout.
func (o *IO) Color() bool {
	return o.OutTTY && o.Getenv("NO_COLOR") == "" && o.Getenv("TERM") != "dumb" && o.Getenv("MIRA_FORCE_TTY") != "1"
}

// Warnf writes one diagnostic line to stderr, prefixed with the command name.
func (o *IO) Warnf(format string, args ...any) {
	// A message may quote a value the user gave (an unknown kind, a bad
	// field); a credential in it is masked, as the store would mask it.
	// Its control characters are escaped: a value from a file (a name
	// with a line break, a tag with a terminal escape) must not make a
	// line of its own or change the terminal.
	fmt.Fprintf(o.Err, "%s: %s\n", o.progName, mem.Escape(secret.Redact(fmt.Sprintf(format, args...)), true))
}

// textOutput decides between JSONL and text for --output.
func (o *IO) textOutput(mode string) bool {
	switch mode {
	case "text":
		return true
	case "jsonl":
		return false
	}
	return o.OutTTY
}

// recordWriter writes records as JSONL.
type recordWriter struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func newRecordWriter(w io.Writer) *recordWriter {
	size := 64 << 10
	if _, ok := w.(*bytes.Buffer); ok {
		size = 4 << 10 // a served command's output, in memory: no system calls to save
	}
	bw := bufio.NewWriterSize(w, size)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &recordWriter{w: bw, enc: enc}
}

// Write writes v as one JSON line. A value that marshals itself (a
// record) is written as it marshals, which is compact already: checking
// and compacting it again took half of the time of writing a recall.
func (rw *recordWriter) Write(v any) error {
	m, ok := v.(json.Marshaler)
	if !ok {
		return rw.enc.Encode(v)
	}
	b, err := m.MarshalJSON()
	if err != nil {
		return err
	}
	rw.w.Write(b)
	return rw.w.WriteByte('\n')
}

func (rw *recordWriter) Flush() error { return rw.w.Flush() }

// maxLine bounds one JSONL line: memories can be long, a prompt's worth.
const maxLine = 64 << 20

// readRecords reads JSONL records from r. Blank lines are skipped. Each bad
// line becomes an *InputError naming name:line; with stopAtFirst the first
// bad line ends the read.
func readRecords(r io.Reader, name string, stopAtFirst bool, fn func(line int, rec mem.Record) error) []error {
	return readRecordsMax(r, name, maxLine, stopAtFirst, fn)
}

// readRecordsMax is readRecords with lines of at most max bytes.
func readRecordsMax(r io.Reader, name string, max int, stopAtFirst bool, fn func(line int, rec mem.Record) error) []error {
	return readLinesMax(r, name, max, stopAtFirst, func(line int, b []byte) error {
		var rec mem.Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("invalid JSON: %w", jsonReason(err))
		}
		return fn(line, rec)
	})
}

// readLines calls fn with each non-blank line of r, without its line
// break; lines may be long (up to maxLine). An error from fn, or a line too
// long to read, becomes an *InputError naming name:line; with stopAtFirst
// the first one ends the read.
func readLines(r io.Reader, name string, stopAtFirst bool, fn func(line int, b []byte) error) []error {
	return readLinesMax(r, name, maxLine, stopAtFirst, fn)
}

// readLinesMax is readLines with lines of at most max bytes.
func readLinesMax(r io.Reader, name string, max int, stopAtFirst bool, fn func(line int, b []byte) error) []error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, max)), max)
	var bad []error
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		if err := fn(line, b); err != nil {
			bad = append(bad, &InputError{Name: name, Line: line, Err: err})
			if stopAtFirst {
				return bad
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %s, the limit of a record", mem.ByteSize(max))
		}
		bad = append(bad, &InputError{Name: name, Line: line + 1, Err: err})
	}
	return bad
}

// jsonReason trims encoding/json's error to what a person needs.
func jsonReason(err error) error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		return fmt.Errorf("field %q: cannot use %s as %s", ute.Field, ute.Value, ute.Type)
	}
	return err
}
