package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/miramem/mira"
	"github.com/miramem/mira/mem"
)

// streamPart is how many records a load in parts stores at a time: a few
// tens of megabytes of entries. A variable for tests.
var streamPart = 16384

// rememberStream stores the records of --jsonl in parts
// (mira.RememberStream), so that a load of a million holds what its commit
// needs of each record rather than every record: 1.9 GB of RSS at a
// million, held whole. The records are read twice: first checked, each
// named by its line as collect does, into a spool file, before the store
// is opened (refused input creates nothing and stores nothing); then from
// the spool, a part at a time, into the store. What was stored is printed
// once it is committed, from a second spool.
func (c *RememberCmd) rememberStream(ctx context.Context, o *IO, opt mira.RememberOptions) error {
	limit := mira.MaxRecordBytes(opt.MaxBytes)
	in, err := spoolFile()
	if err != nil {
		return err
	}
	defer in.Close()
	iw := bufio.NewWriterSize(in, 1<<20)
	checked, err := readRecordsEach(io.TeeReader(o.In, iw), "<stdin>", limit, func() func(int, mem.Record) (struct{}, error) {
		entry := c.jsonlEntry(opt, true)
		return func(_ int, r mem.Record) (struct{}, error) {
			_, err := entry(r)
			return struct{}{}, err
		}
	})
	if err != nil {
		return err
	}
	if len(checked) == 0 {
		return usagef("nothing to remember: no records on stdin")
	}
	if err := iw.Flush(); err != nil {
		return fmt.Errorf("spool stdin: %w", err)
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("spool stdin: %w", err)
	}
	loadGC(len(checked), streamRecordBytes)
	checked = nil

	out, err := spoolFile()
	if err != nil {
		return err
	}
	defer out.Close()
	ow := bufio.NewWriterSize(out, 1<<20)
	spooled := *o
	spooled.Out = ow
	var (
		recs  []mem.Record
		wrote bool
	)
	flush := func() error {
		if len(recs) == 0 {
			return nil
		}
		if wrote && o.textOutput(c.Output) {
			ow.WriteByte('\n') // between records, as writeRecords puts it
		}
		wrote = true
		err := writeRecords(&spooled, c.Output, recs, false)
		recs = recs[:0]
		return err
	}

	m, err := c.openWith(ctx, o, "mira-remember", project(o, ""), openOptions{})
	if err != nil {
		return err
	}
	defer m.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), limit)
	line := 0
	var part []byte
	next := func() ([]*mem.Entry, error) {
		first, n := line, 0
		part = part[:0]
		for n < streamPart && sc.Scan() {
			line++
			b := sc.Bytes()
			part = append(append(part, b...), '\n')
			if len(bytes.TrimSpace(b)) > 0 {
				n++
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read the spooled records: %w", err)
		}
		if n == 0 {
			return nil, nil
		}
		es, err := readRecordsEach(bytes.NewReader(part), "<stdin>", limit, func() func(int, mem.Record) (*mem.Entry, error) {
			entry := c.jsonlEntry(opt, false)
			return func(_ int, r mem.Record) (*mem.Entry, error) { return entry(r) }
		})
		if ie := (*InputError)(nil); errors.As(err, &ie) {
			ie.Line += first
		}
		return es, err
	}
	_, err = m.RememberStream(ctx, next, opt, func(r mira.Remembered) error {
		if r.Duplicate {
			o.Warnf("already remembered as %s (%s); not stored twice", r.Entry.ID, r.Entry.Path)
		}
		recs = append(recs, r.Entry.Record())
		if len(recs) == 1024 {
			return flush()
		}
		return nil
	})
	if err != nil {
		return c.rememberError(err)
	}
	if err := flush(); err != nil {
		return err
	}
	if err := ow.Flush(); err != nil {
		return fmt.Errorf("spool the records stored: %w", err)
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("spool the records stored: %w", err)
	}
	_, err = io.Copy(o.Out, out)
	return err
}

// spoolFile returns a new temporary file, private to the user and already
// without a name where the system allows: nothing is left of it once it
// is closed, whatever ends the process.
func spoolFile() (*os.File, error) {
	f, err := os.CreateTemp("", "mira-remember-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	os.Remove(f.Name())
	return f, nil
}
