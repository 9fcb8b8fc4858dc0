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
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

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
		rec, err := parseRecord(b)
		if err != nil {
			return err
		}
		return fn(line, rec)
	})
}

// parseRecord reads one JSONL record.
func parseRecord(b []byte) (mem.Record, error) {
	var rec mem.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("invalid JSON: %w", jsonReason(err))
	}
	return rec, nil
}

// readError is the error of a read that stopped at a line: one longer
// than max is named as such.
func readError(err error, max int) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("line longer than %s, the limit of a record", mem.ByteSize(max))
	}
	return err
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
		bad = append(bad, &InputError{Name: name, Line: line + 1, Err: readError(err, max)})
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

// readRecordsEach is readRecordsMax with stopAtFirst for work each record
// does on its own (a bulk load parses and checks a million): the lines are
// read here in batches, and the batches parsed and handed to a function
// of work on every core, each goroutine with its own (work is called once
// for each). It returns the results in the order of the lines, or the
// error of the first bad line; the lines after it may or may not have
// been handed over.
func readRecordsEach[T any](r io.Reader, name string, limit int, work func() func(line int, rec mem.Record) (T, error)) ([]T, error) {
	const batchLines = 2048
	type batch struct {
		seq   int
		lines []int
		ends  []int // where each line ends in data
		data  []byte
		out   []T
		err   error
	}
	todo := make(chan *batch, 4)
	done := make(chan *batch, 4)
	var (
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			fn := work()
			for b := range todo {
				b.out = make([]T, 0, len(b.lines))
				start := 0
				for i, line := range b.lines {
					rec := b.data[start:b.ends[i]]
					start = b.ends[i]
					var v T
					m, err := parseRecord(rec)
					if err == nil {
						v, err = fn(line, m)
					}
					if err != nil {
						b.err = &InputError{Name: name, Line: line, Err: err}
						failed.Store(true)
						break
					}
					b.out = append(b.out, v)
				}
				b.data = nil
				done <- b
			}
		})
	}
	var batches []*batch
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for b := range done {
			batches = append(batches, b)
		}
	}()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, limit)), limit)
	line, seq := 0, 0
	fresh := func() *batch {
		return &batch{seq: seq, lines: make([]int, 0, batchLines), ends: make([]int, 0, batchLines), data: make([]byte, 0, 256*batchLines)}
	}
	cur := fresh()
	send := func() {
		if len(cur.lines) > 0 {
			todo <- cur
			seq++
			cur = fresh()
		}
	}
	for !failed.Load() && sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		cur.data = append(cur.data, b...)
		cur.lines = append(cur.lines, line)
		cur.ends = append(cur.ends, len(cur.data))
		if len(cur.lines) == batchLines {
			send()
		}
	}
	if !failed.Load() {
		send()
	}
	close(todo)
	wg.Wait()
	close(done)
	<-collected
	slices.SortFunc(batches, func(a, b *batch) int { return a.seq - b.seq })
	n := 0
	for _, b := range batches {
		if b.err != nil {
			return nil, b.err
		}
		n += len(b.out)
	}
	if err := sc.Err(); err != nil && !failed.Load() {
		return nil, &InputError{Name: name, Line: line + 1, Err: readError(err, limit)}
	}
	out := make([]T, 0, n)
	for _, b := range batches {
		out = append(out, b.out...)
	}
	return out, nil
}
