package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/miramem/mira/internal/text"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/miramem/mira/internal/atomicfile"
)

// DefaultArtifactBytes is the most of one output an artifact keeps
// (Limits.ArtifactBytes).
const DefaultArtifactBytes = 256 << 20

// metaSuffix ends the name of the file that describes an artifact, beside
// it: <id>.meta.json.
const metaSuffix = ".meta.json"

// Artifact types, as Meta.Type gives them.
const (
	ArtifactCommand = "command" // the output of a bash command
	ArtifactOutput  = "output"  // another tool's long result
	ArtifactFile    = "file"    // a file the user added to the context
	ArtifactFolder  = "folder"  // a folder's listing the user added
	ArtifactSearch  = "search"  // search results the user added
)

// Meta describes a stored artifact. It is kept beside the artifact as
// <id>.meta.json, so that listing artifacts reads no artifact.
type Meta struct {
	ID string `json:"id"`
	// Type is command, output, file, folder or search.
	Type string `json:"type"`
	// Source is what the artifact holds the output of: the command, the
	// tool, the file, the folder or the query.
	Source string `json:"source,omitempty"`
	// Path is the artifact's file relative to the store root,
	// slash-separated.
	Path string `json:"path"`
	// Bytes and Lines measure what is stored.
	Bytes int64 `json:"bytes"`
	Lines int   `json:"lines"`
	// Truncated is set when the output was larger than the cap; then
	// TotalBytes and TotalLines measure the whole output, of which only
	// the first Bytes were kept.
	Truncated  bool      `json:"truncated,omitempty"`
	TotalBytes int64     `json:"total_bytes,omitempty"`
	TotalLines int       `json:"total_lines,omitempty"`
	Created    time.Time `json:"created"`
}

// ArtifactWriter streams text into a new artifact: the text is written to
// disk as it comes, up to a cap, and only the counts are held.
type ArtifactWriter struct {
	a        *Artifacts
	meta     Meta
	name     string // final file
	tmp      *os.File
	w        *bufio.Writer
	max      int64
	total    int64
	lines    int  // lines of the whole text
	open     bool // the text so far ends inside a line
	keptOpen bool // the kept text ends inside a line
	cut      bool // text was left out for the cap
	done     bool
}

// Create starts a new artifact of type typ holding the output of source,
// with the extension ext ("txt"), keeping at most max bytes
// (DefaultArtifactBytes when max <= 0). The file is private: 0600 in a
// 0700 directory. Close or Abort must follow.
func (a *Artifacts) Create(typ, source, ext string, max int64) (*ArtifactWriter, error) {
	if !validName(a.Scope) {
		return nil, fmt.Errorf("save artifact: invalid scope %q", a.Scope)
	}
	if !validName(ext) || strings.HasSuffix(ext, "json") {
		return nil, fmt.Errorf("save artifact: invalid extension %q", ext)
	}
	newID := a.NewID
	if newID == nil {
		newID = defaultID
	}
	id := newID()
	if !validName(id) {
		return nil, fmt.Errorf("save artifact: invalid id %q", id)
	}
	if max <= 0 {
		max = DefaultArtifactBytes
	}
	rel := path.Join("artifacts", a.Scope, id+"."+ext)
	name := filepath.Join(a.Store, filepath.FromSlash(rel))
	dir := filepath.Dir(name)
	if err := mkdirPrivate(dir); err != nil {
		return nil, fmt.Errorf("save artifact: %w", err)
	}
	if _, err := os.Lstat(name); err == nil {
		return nil, fmt.Errorf("save artifact: %s already exists", rel)
	}
	tmp, err := os.CreateTemp(dir, "."+id+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("save artifact: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("save artifact: %w", err)
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	return &ArtifactWriter{
		a: a, name: name, tmp: tmp, w: bufio.NewWriterSize(tmp, 64<<10), max: max,
		meta: Meta{ID: id, Type: typ, Source: clipSource(source), Path: rel, Created: now().UTC().Truncate(time.Second)},
	}, nil
}

// mkdirPrivate makes dir and its missing parents with mode 0700, and makes
// dir itself 0700 if it exists with more.
func mkdirPrivate(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, fi.Mode().Perm()&0o700)
	}
	return nil
}

// clipSource keeps a command or query short enough for a listing.
func clipSource(s string) string {
	s = strings.TrimSpace(s)
	if len(s) <= 500 {
		return s
	}
	cut := 500
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ID is the new artifact's id.
func (w *ArtifactWriter) ID() string { return w.meta.ID }

// WriteString adds text to the artifact. Past the cap the text is counted
// and not kept; the kept part ends at a line's end where it can.
func (w *ArtifactWriter) WriteString(s string) (int, error) {
	if w.done {
		return 0, errors.New("artifact already closed")
	}
	n := len(s)
	if n == 0 {
		return 0, nil
	}
	w.lines += strings.Count(s, "\n")
	w.open = s[len(s)-1] != '\n'
	room := w.max - w.total
	w.total += int64(n)
	if room <= 0 {
		w.cut = true
		return n, nil
	}
	keep := s
	if int64(len(keep)) > room {
		w.cut = true
		keep = keep[:room]
		if i := strings.LastIndexByte(keep, '\n'); i >= 0 {
			keep = keep[:i+1]
		} else {
			for len(keep) > 0 && !utf8.RuneStart(s[len(keep)]) {
				keep = keep[:len(keep)-1]
			}
		}
		w.max = w.meta.Bytes + int64(len(keep)) // keep nothing more
	}
	if len(keep) == 0 {
		return n, nil
	}
	if _, err := w.w.WriteString(keep); err != nil {
		return 0, fmt.Errorf("save artifact: %w", err)
	}
	w.meta.Bytes += int64(len(keep))
	w.meta.Lines += strings.Count(keep, "\n")
	w.keptOpen = keep[len(keep)-1] != '\n'
	return n, nil
}

// force adds s to the artifact past the cap, on a line of its own, without
// counting it as part of the output.
func (w *ArtifactWriter) force(s string) error {
	if w.done {
		return errors.New("artifact already closed")
	}
	if w.keptOpen {
		s = "\n" + s
	}
	if s == "" {
		return nil
	}
	if _, err := w.w.WriteString(s); err != nil {
		return fmt.Errorf("save artifact: %w", err)
	}
	w.meta.Bytes += int64(len(s))
	w.meta.Lines += strings.Count(s, "\n")
	w.keptOpen = s[len(s)-1] != '\n'
	return nil
}

// Truncated reports whether text was left out for the cap.
func (w *ArtifactWriter) Truncated() bool { return w.cut }

// Kept measures what the artifact holds so far: bytes and lines (a last
// line without a line feed counts).
func (w *ArtifactWriter) Kept() (int64, int) {
	l := w.meta.Lines
	if w.keptOpen {
		l++
	}
	return w.meta.Bytes, l
}

// Total measures all the text written, kept or not.
func (w *ArtifactWriter) Total() (int64, int) {
	l := w.lines
	if w.open {
		l++
	}
	return w.total, l
}

// Close stores the artifact and its description, and returns the
// description and the files written, relative to the store root.
func (w *ArtifactWriter) Close() (Meta, []string, error) {
	if w.done {
		return Meta{}, nil, errors.New("artifact already closed")
	}
	w.done = true
	fail := func(err error) (Meta, []string, error) {
		w.tmp.Close()
		os.Remove(w.tmp.Name())
		return Meta{}, nil, fmt.Errorf("save artifact: %w", err)
	}
	if err := w.w.Flush(); err != nil {
		return fail(err)
	}
	if err := w.tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := w.tmp.Close(); err != nil {
		return fail(err)
	}
	m := w.meta
	m.Bytes, m.Lines = w.Kept()
	if w.Truncated() {
		m.Truncated = true
		m.TotalBytes, m.TotalLines = w.Total()
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fail(err)
	}
	metaRel := strings.TrimSuffix(m.Path, path.Ext(m.Path)) + metaSuffix
	metaName := filepath.Join(w.a.Store, filepath.FromSlash(metaRel))
	if err := os.Rename(w.tmp.Name(), w.name); err != nil {
		os.Remove(w.tmp.Name())
		return Meta{}, nil, fmt.Errorf("save artifact: %w", err)
	}
	if err := atomicfile.Write(metaName, append(data, '\n'), 0o600, true); err != nil {
		os.Remove(w.name)
		return Meta{}, nil, fmt.Errorf("save artifact: %w", err)
	}
	return m, []string{m.Path, metaRel}, nil
}

// Abort drops the artifact.
func (w *ArtifactWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.tmp.Close()
	os.Remove(w.tmp.Name())
}

// chunkBytes is the size of the pieces text is streamed in.
const chunkBytes = 256 << 10

// streamChunks reads r in pieces of about chunkBytes that end at a line's
// end (a longer line is cut), never in the middle of a private key block
// that fits a piece, and calls fn with each.
func streamChunks(r io.Reader, fn func(string) error) error {
	br := bufio.NewReaderSize(r, chunkBytes)
	var carry []byte
	buf := make([]byte, chunkBytes)
	for {
		n, err := io.ReadFull(br, buf[:chunkBytes-min(len(carry), chunkBytes/2)])
		data := append(carry, buf[:n]...)
		carry = nil
		end := err != nil
		if !end {
			cut := bytes.LastIndexByte(data, '\n') + 1
			// A key block begun and not ended waits for the next piece.
			if b := bytes.LastIndex(data[:cut], []byte("-----BEGIN ")); b >= 0 && !bytes.Contains(data[b:cut], []byte("-----END ")) && b > 0 {
				if ls := bytes.LastIndexByte(data[:b], '\n') + 1; ls > 0 {
					cut = ls
				}
			}
			if cut == 0 {
				cut = len(data)
				for cut > 0 && !utf8.RuneStart(data[cut-1]) && len(data)-cut < utf8.UTFMax {
					cut--
				}
				if cut > 0 && !utf8.FullRune(data[cut-1:]) {
					cut--
				}
				if cut <= 0 {
					cut = len(data)
				}
			}
			carry = slices.Clone(data[cut:])
			data = data[:cut]
		}
		if len(data) > 0 {
			if ferr := fn(string(data)); ferr != nil {
				return ferr
			}
		}
		if end {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return err
		}
	}
}

// lineView keeps the first and last lines of a text streamed through it,
// each part within a byte budget, and counts the lines. It keeps the
// pieces that may hold the last lines, not the lines one by one.
type lineView struct {
	headN, tailN, partBytes int
	head                    []string
	headBytes               int
	headDone                bool
	headCur                 strings.Builder // the head's line being read
	recent                  []string        // the last pieces
	recentLines             int             // line feeds in recent
	recentBytes             int             // bytes in recent
	lines                   int             // line feeds seen
	open                    bool            // the text ends inside a line
}

func newLineView(headN, tailN, partBytes int) *lineView {
	return &lineView{headN: headN, tailN: tailN, partBytes: partBytes}
}

// add takes the next piece of text.
func (v *lineView) add(s string) {
	if s == "" {
		return
	}
	n := strings.Count(s, "\n")
	if !v.headDone {
		v.addHead(s)
	}
	v.lines += n
	v.open = s[len(s)-1] != '\n'
	v.recent = append(v.recent, s)
	v.recentLines += n
	v.recentBytes += len(s)
	// Drop old pieces while the rest still holds more than tailN lines,
	// or a few pieces' worth of one long line.
	for len(v.recent) > 1 {
		first := v.recent[0]
		nl := strings.Count(first, "\n")
		if v.recentLines-nl <= v.tailN && v.recentBytes-len(first) < 4*chunkBytes {
			break
		}
		v.recentLines -= nl
		v.recentBytes -= len(first)
		v.recent = v.recent[1:]
	}
}

// addHead takes lines for the head until it is full.
func (v *lineView) addHead(s string) {
	for len(s) > 0 && !v.headDone {
		i := strings.IndexByte(s, '\n')
		part := s
		if i >= 0 {
			part = s[:i+1]
		}
		s = s[len(part):]
		if room := v.partBytes - v.headCur.Len(); len(part) > room {
			v.headCur.WriteString(trimPartialRune(part[:max(0, room)]))
			if i >= 0 {
				v.headCur.WriteByte('\n')
			}
		} else {
			v.headCur.WriteString(part)
		}
		if i < 0 {
			return
		}
		l := v.headCur.String()
		v.headCur.Reset()
		if len(v.head) < v.headN && (len(v.head) == 0 || v.headBytes+len(l) <= v.partBytes) {
			v.head = append(v.head, l)
			v.headBytes += len(l)
		} else {
			v.headDone = true
		}
	}
}

// finish ends the text and returns the head, the tail and the number of
// lines between them.
func (v *lineView) finish() (head, tail []string, omitted int) {
	total := v.lines
	if v.open {
		total++
	}
	if !v.headDone && v.headCur.Len() > 0 && len(v.head) < v.headN {
		v.head = append(v.head, v.headCur.String())
	}
	head = v.head
	// The tail comes from the last pieces, after the head's lines.
	text := strings.Join(v.recent, "")
	all := strings.SplitAfter(strings.TrimSuffix(text, "\n"), "\n")
	avail := min(len(all), total-len(head), v.tailN)
	if avail < 0 {
		avail = 0
	}
	size := 0
	for i := len(all) - 1; i >= len(all)-avail; i-- {
		l := all[i]
		if len(l) > v.partBytes {
			nl := strings.HasSuffix(l, "\n")
			l = trimPartialRune(l[:v.partBytes])
			if nl {
				l += "\n"
			}
		}
		if size+len(l) > v.partBytes && len(tail) > 0 {
			break
		}
		size += len(l)
		tail = append(tail, l)
	}
	slices.Reverse(tail)
	if len(tail) > 0 && !strings.HasSuffix(tail[len(tail)-1], "\n") && !v.open {
		tail[len(tail)-1] += "\n"
	}
	return head, tail, total - len(head) - len(tail)
}

// storedNote is the first line of a long output the model sees: how long
// it was, what it is shown, and where the whole is.
func storedNote(lines int, size int64, head, tail int, m Meta, cap, readable int64) string {
	ref := artifactScheme + m.ID
	what := fmt.Sprintf("[The output was too long (%s, %s); its first %d and last %d lines are shown. ", plural(lines, "line"), humanBytes64(size), head, tail)
	if m.Truncated {
		what += fmt.Sprintf("It was larger than the %s artifacts keep, so only its first %s (%s) are stored, as %s; the remaining %s were not kept. ",
			humanBytes64(cap), humanBytes64(m.Bytes), plural(m.Lines, "line"), ref, plural(max(0, lines-m.Lines), "line"))
	} else {
		what += fmt.Sprintf("The whole output is stored as %s. ", ref)
	}
	what += fmt.Sprintf("Read it with read_file {\"path\": %q, \"offset\": %d, \"limit\": 200}", ref, head+1)
	if m.Bytes <= readable {
		what += fmt.Sprintf(", or search it with grep {\"pattern\": \"...\", \"path\": %q, \"output_mode\": \"content\"}", ref)
	}
	return what + ".]"
}

// humanBytes64 is humanBytes for sizes that may pass 2 GiB.
func humanBytes64(n int64) string {
	if n < 1<<30 {
		return text.Size(int64(n))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// spilled is a command's long output streamed into an artifact.
type spilled struct {
	w    *ArtifactWriter
	cap  int64
	read int64 // ReadFileBytes, for the note
	// view is what the model sees of the output: its first and last
	// lines around the number left out; note says where the rest is,
	// once finish has run.
	view, note string
	head, tail int
	// lines and size measure the whole output.
	lines int
	size  int64
	rels  []string
	// writeDenied and gitDenied report the sandbox's refusals in the
	// output, as writeDenied and gitDenied do.
	writeDenied, gitDenied bool
}

// spill streams the output in f into a new artifact: redacted, terminal
// control sequences dropped, up to Limits.ArtifactBytes. It returns nil
// when no artifact can be made; the caller then reads f as for a short
// output.
func (t bashTool) spill(f *os.File, command string) *spilled {
	w, err := t.e.arts.Create(ArtifactCommand, command, "txt", t.e.limits.ArtifactBytes)
	if err != nil {
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		w.Abort()
		return nil
	}
	sp := &spilled{w: w, cap: t.e.limits.ArtifactBytes, read: t.e.limits.ReadFileBytes}
	v := newLineView(t.e.limits.HeadLines, t.e.limits.TailLines, t.e.limits.ResultBytes/4)
	err = streamChunks(f, func(c string) error {
		c = Redact(plainOutput(c))
		sp.writeDenied = sp.writeDenied || writeDenied(c)
		sp.gitDenied = sp.gitDenied || gitDenied(c)
		v.add(c)
		_, err := w.WriteString(c)
		return err
	})
	if err != nil {
		w.Abort()
		return nil
	}
	sp.size, sp.lines = w.Total()
	if sp.lines > 0 && w.open {
		w.WriteString("\n")
	}
	head, tail, omitted := v.finish()
	sp.head, sp.tail = len(head), len(tail)
	var b strings.Builder
	for _, l := range head {
		b.WriteString(l)
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "[… %d lines omitted …]\n", omitted)
	}
	for _, l := range tail {
		b.WriteString(l)
	}
	sp.view = b.String()
	if !strings.HasSuffix(sp.view, "\n") {
		sp.view += "\n"
	}
	return sp
}

// finish ends the artifact with trailer and writes the note.
func (sp *spilled) finish(trailer string) error {
	keptBytes, keptLines := sp.w.Kept()
	// The trailer is kept even past the cap: it says how the command
	// ended.
	if err := sp.w.force(trailer); err != nil {
		sp.w.Abort()
		return err
	}
	m, rels, err := sp.w.Close()
	if err != nil {
		return err
	}
	sp.rels = rels
	// The note measures the output kept, the trailer aside.
	m.Bytes, m.Lines = keptBytes, keptLines
	sp.note = storedNote(sp.lines, sp.size, sp.head, sp.tail, m, sp.cap, sp.read)
	return nil
}

// pageLarge is read_file over an artifact larger than a file read_file
// opens: the lines asked for are found by reading the file line by line.
func (t readFile) pageLarge(ctx context.Context, tg target, offset, limit int) (Result, error) {
	f, err := os.Open(tg.abs)
	if err != nil {
		return errorf("cannot read %s: %v", tg.show, err), nil
	}
	defer f.Close()
	first := max(offset, 1)
	if limit == 0 {
		limit = t.e.limits.ReadLines
	}
	var b strings.Builder
	n, shown, full := 0, 0, false
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 || err == nil {
			text := string(line[:min(len(line), t.e.limits.LineBytes)])
			size := len(line)
			// A line longer than the buffer: read on to its end.
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				size += len(line)
			}
			n++
			if n >= first && shown < limit && !full {
				text = strings.TrimSuffix(strings.TrimSuffix(text, "\n"), "\r")
				if more := size - len(text) - 1; more > 0 && len(text) >= t.e.limits.LineBytes {
					c := trimPartialRune(text)
					text = fmt.Sprintf("%s… [line clipped: %d more bytes]", c, size-len(c)-1)
				}
				l := fmt.Sprintf("%6d\t%s\n", n, text)
				if shown > 0 && b.Len()+len(l) > t.e.limits.ReadBytes {
					full = true
				} else {
					b.WriteString(l)
					shown++
				}
			}
			if n%100000 == 0 && ctx.Err() != nil {
				return errorf("read_file was interrupted"), ctx.Err()
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return errorf("cannot read %s: %v", tg.show, err), nil
		}
	}
	if first > n {
		return errorf("offset %d is past the end of %s, which has %s", first, tg.show, plural(n, "line")), nil
	}
	last := first + shown - 1
	if first > 1 || last < n {
		fmt.Fprintf(&b, "[Lines %d-%d of %d.", first, last, n)
		if last < n {
			fmt.Fprintf(&b, " To read on, call read_file with offset %d.", last+1)
		}
		b.WriteString("]\n")
	}
	return Result{Content: strings.TrimSuffix(b.String(), "\n"), paged: true}, nil
}

// errBinary refuses to store a binary file as an artifact.
var errBinary = errors.New("a binary file: only text is stored as an artifact")

// SaveReader stores what r holds as a new artifact of type typ holding
// source, streamed and redacted piece by piece, keeping at most max bytes
// (DefaultArtifactBytes when max <= 0). Binary data (a NUL byte near the
// start) is refused. It returns the description and the files written,
// relative to the store root.
func (a *Artifacts) SaveReader(r io.Reader, typ, source, ext string, max int64) (Meta, []string, error) {
	w, err := a.Create(typ, source, ext, max)
	if err != nil {
		return Meta{}, nil, err
	}
	first := true
	if err := streamChunks(r, func(c string) error {
		if first && isBinary([]byte(c)) {
			return errBinary
		}
		first = false
		_, err := w.WriteString(Redact(c))
		return err
	}); err != nil {
		w.Abort()
		if errors.Is(err, errBinary) {
			return Meta{}, nil, err
		}
		return Meta{}, nil, fmt.Errorf("save artifact: %w", err)
	}
	return w.Close()
}

// List describes the artifacts of the scope, oldest first. An artifact
// stored without a description (before they were written) is described
// from its file: its size, and the type "output".
func (a *Artifacts) List() ([]Meta, error) {
	if !validName(a.Scope) {
		return nil, fmt.Errorf("list artifacts: invalid scope %q", a.Scope)
	}
	dir := filepath.Join(a.Store, "artifacts", a.Scope)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	var out []Meta
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || strings.HasSuffix(name, metaSuffix) || strings.HasSuffix(name, ".tmp") {
			continue
		}
		id := strings.TrimSuffix(name, filepath.Ext(name))
		if !validName(id) {
			continue
		}
		m, err := a.describe(dir, name, id)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(x, y Meta) int {
		if c := x.Created.Compare(y.Created); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out, nil
}

// describe reads the description of the artifact file name in dir.
func (a *Artifacts) describe(dir, name, id string) (Meta, error) {
	rel := path.Join("artifacts", a.Scope, name)
	data, err := os.ReadFile(filepath.Join(dir, id+metaSuffix))
	if err == nil {
		var m Meta
		if err := json.Unmarshal(data, &m); err != nil {
			return Meta{}, fmt.Errorf("artifact %s: %s%s: %v", id, rel[:len(rel)-len(filepath.Ext(name))], metaSuffix, err)
		}
		m.ID, m.Path = id, rel
		return m, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return Meta{}, fmt.Errorf("artifact %s: %w", id, err)
	}
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		return Meta{}, fmt.Errorf("artifact %s: %w", id, err)
	}
	return Meta{ID: id, Type: ArtifactOutput, Path: rel, Bytes: fi.Size(), Lines: -1, Created: fi.ModTime().UTC().Truncate(time.Second)}, nil
}

// Open opens the artifact id for reading, with its description. Only an
// id is accepted, never a path: an id with a slash, a dot-dot or a
// leading dot is refused, and so is an artifact file that is a symbolic
// link or lies outside the store's artifacts directory.
func (a *Artifacts) Open(id string) (*os.File, Meta, error) {
	name, err := a.Path(id)
	if err != nil {
		return nil, Meta{}, err
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("open artifact %s: %w", id, err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, Meta{}, fmt.Errorf("open artifact %s: not a regular file", id)
	}
	m, err := a.describe(filepath.Dir(name), filepath.Base(name), id)
	if err != nil {
		f.Close()
		return nil, Meta{}, err
	}
	return f, m, nil
}

// inArtifacts checks that name, once its links are resolved, is a regular
// file directly in a scope of the store's artifacts directory.
func (a *Artifacts) inArtifacts(name string) error {
	fi, err := os.Lstat(name)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return errors.New("not a regular file in the store's artifacts")
	}
	base, err := filepath.EvalSymlinks(filepath.Join(a.Store, "artifacts"))
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(base, real)
	if err != nil || !filepath.IsLocal(rel) || strings.Count(filepath.ToSlash(rel), "/") != 1 {
		return errors.New("outside the store's artifacts")
	}
	return nil
}
