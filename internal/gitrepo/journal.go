package gitrepo

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// The journal (.git/mira-changes) remembers, for the commits this package
// made, the parent and the paths each one wrote, so that Diff between a
// commit and one a few commits later needs no tree at all. Diffing two
// trees reads every tree on the changed paths twice, and in a store of a
// million memories a directory holds 200,000 files: its tree is some 15 MB,
// and a writer asking what changed since the index's commit paid seconds
// for it. The journal is only ever a shortcut: a commit it does not know
// (made by git, merged in by a sync, or lost to a crash between the ref
// and the append) sends Diff back to the trees.
//
// It is a text file of lines
//
//	<commit> <parent> <path> ... <crc>
//
// the paths Go-quoted, crc the hexadecimal CRC-32C of what comes before
// its space. A line whose CRC does not match (a torn append, two appends
// interleaved by a crash, a hand edit) is ignored. Only commits with one
// parent that neither remove a directory nor put a file where one was (or
// the reverse) are recorded, with the paths whose blob or mode changed:
// exactly what the trees' diff reports. Once the file passes journalMax bytes the next commit
// rewrites it with its newest lines only.
const journalName = "mira-changes"

const (
	// journalMax is the size past which the journal is cut back.
	journalMax = 1 << 20
	// journalTail is how much of its end a reader reads, and what a cut
	// keeps: thousands of commits.
	journalTail = 256 << 10
	// journalPaths is the most paths a commit may write to be recorded;
	// a larger commit is diffed, at a cost in proportion to it.
	journalPaths = 1000
	// journalSteps is the most commits Diff follows back through the
	// journal.
	journalSteps = 4096
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// journalRecord is one commit of the journal.
type journalRecord struct {
	parent string
	paths  []string
}

// appendJournal records a commit with one parent. Errors are not reported:
// the journal is a shortcut, and a missing line costs a tree diff.
func (r *Repo) appendJournal(commit, parent plumbing.Hash, paths []string) {
	if parent.IsZero() || len(paths) > journalPaths {
		return
	}
	var b strings.Builder
	b.WriteString(commit.String())
	b.WriteByte(' ')
	b.WriteString(parent.String())
	for _, p := range paths {
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(p))
	}
	line := b.String()
	line += fmt.Sprintf(" %08x\n", crc32.Checksum([]byte(line), castagnoli))
	name := filepath.Join(r.gitDir, journalName)
	if fi, err := os.Stat(name); err == nil && fi.Size()+int64(len(line)) > journalMax {
		r.cutJournal(name, line)
		return
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	f.WriteString(line)
	f.Close()
}

// cutJournal writes the journal again with its last journalTail bytes of
// whole lines and line, by a rename, so a reader sees the old file or the
// new one.
func (r *Repo) cutJournal(name, line string) {
	tail, _ := readTail(name, journalTail)
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	} else {
		tail = nil
	}
	tmp, err := r.writeTemp("mira-changes-*.tmp", func(w io.Writer) error {
		if _, err := w.Write(tail); err != nil {
			return err
		}
		_, err := io.WriteString(w, line)
		return err
	})
	if err != nil {
		return
	}
	if os.Rename(tmp, name) != nil {
		os.Remove(tmp)
	}
}

// readTail returns up to n bytes from the end of the file.
func readTail(name string, n int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(fi.Size()-n, 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

// readJournal returns the records of the journal's tail by commit; nil
// when there is none.
func (r *Repo) readJournal() map[string]journalRecord {
	tail, err := readTail(filepath.Join(r.gitDir, journalName), journalTail)
	if err != nil || len(tail) == 0 {
		return nil
	}
	out := map[string]journalRecord{}
	for line := range bytes.Lines(tail) {
		if c, rec, ok := parseJournalLine(line); ok {
			out[c] = rec
		}
	}
	return out
}

// parseJournalLine parses one line, its CRC checked.
func parseJournalLine(line []byte) (string, journalRecord, bool) {
	line, ok := bytes.CutSuffix(line, []byte("\n"))
	if !ok {
		return "", journalRecord{}, false
	}
	i := bytes.LastIndexByte(line, ' ')
	if i < 0 || len(line)-i-1 != 8 {
		return "", journalRecord{}, false
	}
	sum, err := strconv.ParseUint(string(line[i+1:]), 16, 32)
	if err != nil || uint32(sum) != crc32.Checksum(line[:i], castagnoli) {
		return "", journalRecord{}, false
	}
	s := string(line[:i])
	if len(s) < 81 || s[40] != ' ' {
		return "", journalRecord{}, false
	}
	commit, parent := s[:40], s[41:81]
	if _, ok := parseHash(commit); !ok {
		return "", journalRecord{}, false
	}
	if _, ok := parseHash(parent); !ok {
		return "", journalRecord{}, false
	}
	var paths []string
	for rest := s[81:]; rest != ""; {
		if rest[0] != ' ' {
			return "", journalRecord{}, false
		}
		q, err := strconv.QuotedPrefix(rest[1:])
		if err != nil {
			return "", journalRecord{}, false
		}
		p, err := strconv.Unquote(q)
		if err != nil {
			return "", journalRecord{}, false
		}
		paths = append(paths, p)
		rest = rest[1+len(q):]
	}
	return commit, journalRecord{parent: parent, paths: paths}, true
}

// journalDiff answers Diff from the journal: the paths under prefix that
// the commits after from up to to wrote, sorted, or false when the journal
// does not lead from to back to from.
func (r *Repo) journalDiff(from, to, prefix string) ([]string, bool) {
	if from == "" || to == "" {
		return nil, false
	}
	from, to = strings.ToLower(from), strings.ToLower(to)
	if _, ok := parseHash(to); !ok {
		return nil, false
	}
	if from == to {
		return nil, true
	}
	recs := r.readJournal()
	if recs == nil {
		return nil, false
	}
	seen := map[string]bool{}
	var out []string
	for c, steps := to, 0; c != from; steps++ {
		rec, ok := recs[c]
		if !ok || steps >= journalSteps {
			return nil, false
		}
		for _, p := range rec.paths {
			if strings.HasPrefix(p, prefix) && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
		c = rec.parent
	}
	slices.Sort(out)
	return out, true
}
