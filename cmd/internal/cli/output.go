package cli

import (
	"fmt"
	"github.com/miramem/mira"
	"strings"

	"github.com/miramem/mira/internal/text"
	"github.com/miramem/mira/mem"
)

// writeEntries prints entries as JSONL records or, on a terminal, as text.
func writeEntries(o *IO, mode string, es []*mem.Entry) error {
	recs := make([]mem.Record, len(es))
	for i, e := range es {
		recs[i] = e.Record()
	}
	return writeRecords(o, mode, recs, false)
}

// WriteRecords prints records as writeRecords does, for commands defined
// in other packages.
func WriteRecords(o *IO, mode string, recs []mem.Record, explain bool) error {
	return writeRecords(o, mode, recs, explain)
}

// writeRecords prints records; explain adds the score breakdown in text.
func writeRecords(o *IO, mode string, recs []mem.Record, explain bool) error {
	if !o.textOutput(mode) {
		w := newRecordWriter(o.Out)
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				return err
			}
		}
		return w.Flush()
	}
	var b strings.Builder
	color := o.Color()
	style := func(code, s string) string {
		if !color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	// Every value is printed with its control characters escaped: an id
	// from a file name with a line break, or a tag holding a terminal
	// escape, must not forge a line or change the terminal.
	esc := func(s string) string { return mem.Escape(s, false) }
	for i, r := range recs {
		if i > 0 {
			b.WriteByte('\n')
		}
		head := style("1", esc(r.ID)) + "  " + style("36", esc(r.Kind)) + "  " + esc(r.Scope)
		if r.CreatedAt != nil {
			head += "  " + r.CreatedAt.Format("2006-01-02 15:04")
		}
		if len(r.Tags) > 0 {
			head += "  " + style("33", esc("#"+strings.Join(r.Tags, " #")))
		}
		if r.Pin != "" {
			head += "  " + style("35", "pinned:"+esc(r.Pin))
		}
		if r.Score != nil {
			head += fmt.Sprintf("  %s", style("2", fmt.Sprintf("score %.3f", *r.Score)))
		}
		b.WriteString(head + "\n")
		text, cut := clipText(r.Text)
		for _, l := range strings.Split(mem.Escape(text, true), "\n") {
			b.WriteString("    " + l + "\n")
		}
		if cut > 0 {
			b.WriteString("    " + style("2", fmt.Sprintf("… %d more bytes (--output jsonl prints it all)", cut)) + "\n")
		}
		if explain && r.Why != nil {
			b.WriteString("    " + style("2", esc(mira.ExplainText(r.Why))) + "\n")
		}
	}
	_, err := fmt.Fprint(o.Out, b.String())
	return err
}

// writeOps prints --dry-run operations as JSONL (always: they are for review
// and for scripts).
func writeOps(o *IO, ops []mem.Op) error {
	w := newRecordWriter(o.Out)
	for _, op := range ops {
		if err := w.Write(op); err != nil {
			return err
		}
	}
	return w.Flush()
}

// A terminal shows the beginning of a long memory: the whole of a huge
// hand-made file would scroll everything else away.
const (
	maxTextLines = 40
	maxTextBytes = 4 << 10
)

// clipText returns the part of text a terminal shows and how many bytes
// it leaves out.
func clipText(s string) (string, int) {
	n := len(s)
	if i := nthIndex(s, '\n', maxTextLines); i >= 0 && i < n {
		n = i
	}
	cut := text.Cut(s[:n], maxTextBytes)
	return cut, len(s) - len(cut)
}

// nthIndex is the index of the n-th c in s, or -1.
func nthIndex(s string, c byte, n int) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			if n--; n == 0 {
				return i
			}
		}
	}
	return -1
}
