package mira

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/miramem/mira/mem"
)

// DefaultPlanLogMiB is the default of the configuration's
// agent.plan_log_mib: the most each conversation's call records keep, in
// MiB.
const DefaultPlanLogMiB = 16

// maxCallLine bounds one call record when read back: a line longer than
// this is no record the agent wrote.
const maxCallLine = 16 << 20

// callDir is where the call records live under the store: beside the
// plans mira-context --log writes, ignored by git like them.
func (m *Memory) callDir() string { return filepath.Join(m.home, "plans", "calls") }

// callFiles are a conversation's record files, oldest first: the rotated
// one, then the one being written. Only the one being written ends in
// .jsonl, so no conversation's file is another's rotated one (a
// conversation may be called chat.1).
func (m *Memory) callFiles(conversation string) (old, cur string) {
	base := filepath.Join(m.callDir(), conversation)
	return base + ".jsonl.1", base + ".jsonl"
}

// planLogBytes is the cap on a conversation's records.
func (m *Memory) planLogBytes() int64 {
	mib := DefaultPlanLogMiB
	if m.cfg != nil && m.cfg.Agent.PlanLogMiB > 0 {
		mib = m.cfg.Agent.PlanLogMiB
	}
	return int64(mib) << 20
}

// AppendCall appends one call record, a JSON object on one line, to the
// conversation's record log under plans/calls/. The log keeps the newest
// records within the configured cap (agent.plan_log_mib): when the file
// being written would pass half the cap, it becomes the rotated file (the
// older rotated one goes) and a new one starts, so the two never hold more
// than the cap. A record is written with one write; one cut short by a
// kill is a torn last line, which the next append moves past and readers
// skip with a note, so no older record is lost.
func (m *Memory) AppendCall(conversation string, line []byte) error {
	if m.home == "" {
		return errors.New("no store to keep call records in")
	}
	if err := mem.ValidScope(conversation); err != nil {
		return invalidField("conversation", err)
	}
	if len(line) == 0 || bytes.ContainsAny(line, "\n\r") || !json.Valid(line) {
		return invalidf("a call record is one JSON object on one line")
	}
	if err := os.MkdirAll(m.callDir(), mem.DirMode); err != nil {
		return err
	}
	old, cur := m.callFiles(conversation)
	return appendRotated(cur, old, line, m.planLogBytes())
}

// appendRotated appends line and a newline to cur, first moving cur to
// old when it would grow past half of limit.
func appendRotated(cur, old string, line []byte, limit int64) error {
	f, err := os.OpenFile(cur, os.O_RDWR|os.O_APPEND|os.O_CREATE, mem.FileMode)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	size := fi.Size()
	if size > 0 && size+int64(len(line))+2 > limit/2 {
		f.Close()
		// Another writer may have rotated the file since it was opened:
		// only the file that was measured moves.
		if now, err := os.Stat(cur); err == nil && os.SameFile(now, fi) {
			if err := os.Rename(cur, old); err != nil {
				return err
			}
		}
		if f, err = os.OpenFile(cur, os.O_RDWR|os.O_APPEND|os.O_CREATE, mem.FileMode); err != nil {
			return err
		}
		if fi, err = f.Stat(); err != nil {
			f.Close()
			return err
		}
		size = fi.Size()
	}
	buf := make([]byte, 0, len(line)+2)
	if size > 0 {
		// A record torn by a kill ends without a newline: start on a line
		// of its own, so the torn one stays the only bad line.
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			f.Close()
			return err
		}
		if last[0] != '\n' {
			buf = append(buf, '\n')
		}
	}
	buf = append(buf, line...)
	buf = append(buf, '\n')
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CallLineError is a line of a call record log that is no record: torn
// by a kill mid-write, or edited by hand. Readers skip it.
type CallLineError struct {
	Path string
	Line int
	Err  error
}

func (e *CallLineError) Error() string {
	return fmt.Sprintf("%s:%d: call record skipped: %v", e.Path, e.Line, e.Err)
}

func (e *CallLineError) Unwrap() error { return e.Err }

// ReadCalls returns a conversation's call records, oldest first, as the
// JSON lines AppendCall was given. A line that is no JSON object is
// skipped and reported to warn as a *CallLineError. A conversation with
// none has none, not an error.
func (m *Memory) ReadCalls(conversation string, warn func(error)) ([][]byte, error) {
	if err := mem.ValidScope(conversation); err != nil {
		return nil, invalidField("conversation", err)
	}
	if m.home == "" {
		return nil, nil
	}
	var out [][]byte
	old, cur := m.callFiles(conversation)
	for _, p := range []string{old, cur} {
		err := readCallFile(p, warn, func(line []byte) bool {
			out = append(out, line)
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ErrNoCall is wrapped by FindCall's error for an id no record has.
var ErrNoCall = errors.New("no call record")

// FindCall returns the call record with the given id from any
// conversation's log, newest files first. An id no record has is an
// *InvalidError wrapping ErrNoCall; so is one that cannot be an id.
func (m *Memory) FindCall(id string, warn func(error)) ([]byte, error) {
	if id == "" || strings.ContainsAny(id, "\"\\/ \t\n") {
		return nil, invalidField("id", fmt.Errorf("%w with id %q", ErrNoCall, id))
	}
	var files []string
	if m.home != "" {
		ents, err := os.ReadDir(m.callDir())
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for _, e := range ents {
			if (strings.HasSuffix(e.Name(), ".jsonl") || strings.HasSuffix(e.Name(), ".jsonl.1")) && e.Type().IsRegular() {
				files = append(files, filepath.Join(m.callDir(), e.Name()))
			}
		}
	}
	// The current files before the rotated ones: the newest record wins.
	slices.SortStableFunc(files, func(a, b string) int {
		return boolInt(strings.HasSuffix(a, ".1")) - boolInt(strings.HasSuffix(b, ".1"))
	})
	want := []byte(`"id":"` + id + `"`)
	for _, p := range files {
		var found []byte
		err := readCallFile(p, warn, func(line []byte) bool {
			if !bytes.Contains(line, want) {
				return true
			}
			var head struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(line, &head) == nil && head.ID == id {
				found = line
			}
			return true // the last record with the id is the one
		})
		if err != nil {
			return nil, err
		}
		if found != nil {
			return found, nil
		}
	}
	return nil, invalidField("id", fmt.Errorf("%w with id %q (the agent writes one per model call under %s)", ErrNoCall, id, filepath.Join("plans", "calls")))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readCallFile calls each with every record of a log file, reporting the
// lines that are none; a missing file has none.
func readCallFile(path string, warn func(error), each func([]byte) bool) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(r, maxCallLine)
		if err == io.EOF && line == nil {
			return nil
		}
		if err != nil && err != io.EOF && !errors.Is(err, errLongLine) {
			return err
		}
		switch {
		case errors.Is(err, errLongLine):
			report(warn, &CallLineError{Path: path, Line: n, Err: err})
		case len(bytes.TrimSpace(line)) == 0:
		case line[0] != '{' || !json.Valid(line):
			report(warn, &CallLineError{Path: path, Line: n, Err: errors.New("not a JSON object (torn by a kill mid-write, or edited)")})
		default:
			if !each(line) {
				return nil
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

func report(warn func(error), err error) {
	if warn != nil {
		warn(err)
	}
}

var errLongLine = errors.New("line too long")

// readLine reads one line without its newline; a line past limit is read
// to its end and reported as errLongLine.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	long := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > limit {
				long, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(line) == 0 && !long && len(chunk) == 0 {
			return nil, io.EOF
		}
		if long {
			if err == nil || err == io.EOF {
				return []byte{}, errLongLine
			}
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}
