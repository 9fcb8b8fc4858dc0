package tools

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/internal/text"
)

// artifactScheme prefixes an artifact's id in the text the model sees.
const artifactScheme = "artifact://"

// Artifacts stores long tool outputs in the store as
// <Store>/artifacts/<Scope>/<id>.<ext>.
type Artifacts struct {
	// Store is the store's root directory ($MIRA_HOME).
	Store string
	// Scope is the scope artifacts are written under, such as the
	// conversation's.
	Scope string
	// NewID returns a new unique, time-sortable id. The default is a
	// ULID made from the clock and crypto/rand.
	NewID func() string
	// Now is the clock of the artifacts' creation times (time.Now when
	// nil).
	Now func() time.Time
}

// Save stores text as a new artifact of type ArtifactOutput with the
// extension ext ("txt"), with its description beside it, and returns its id
// and its path relative to the store root, slash-separated.
func (a *Artifacts) Save(text, ext string) (id, rel string, err error) {
	m, _, err := a.SaveText(text, ArtifactOutput, "", ext, 0)
	if err != nil {
		return "", "", err
	}
	return m.ID, m.Path, nil
}

// SaveText stores text as a new artifact of type typ holding the output of
// source, keeping at most max bytes (DefaultArtifactBytes when max <= 0),
// and returns its description and the files written.
func (a *Artifacts) SaveText(text, typ, source, ext string, max int64) (Meta, []string, error) {
	w, err := a.Create(typ, source, ext, max)
	if err != nil {
		return Meta{}, nil, err
	}
	if _, err := w.WriteString(text); err != nil {
		w.Abort()
		return Meta{}, nil, err
	}
	return w.Close()
}

// Path returns the file holding the artifact id: in the own scope if it is
// there, else in any scope (ids are unique across the store, and an
// artifact mentioned in a summary may come from another conversation).
func (a *Artifacts) Path(id string) (string, error) {
	if !validName(id) {
		return "", fmt.Errorf("%q is not a valid artifact id", id)
	}
	base := filepath.Join(a.Store, "artifacts")
	m := artifactFiles(filepath.Join(base, "*", id+".*"))
	if validName(a.Scope) {
		if own := artifactFiles(filepath.Join(base, a.Scope, id+".*")); len(own) > 0 {
			m = own
		}
	}
	if len(m) == 0 {
		return "", fmt.Errorf("there is no artifact %s%s", artifactScheme, id)
	}
	if err := a.inArtifacts(m[0]); err != nil {
		return "", fmt.Errorf("artifact %s%s: %v", artifactScheme, id, err)
	}
	return m[0], nil
}

// artifactFiles returns the artifacts that match pattern, leaving out their
// descriptions and unfinished writes.
func artifactFiles(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return slices.DeleteFunc(m, func(name string) bool {
		b := filepath.Base(name)
		return strings.HasSuffix(b, metaSuffix) || strings.HasPrefix(b, ".") || strings.HasSuffix(b, ".tmp")
	})
}

// parseArtifactRef returns the id in "artifact://ID".
func parseArtifactRef(s string) (string, bool) {
	id, ok := strings.CutPrefix(strings.TrimSpace(s), artifactScheme)
	return id, ok
}

// validName reports whether s may be used as one path segment of an
// artifact's file name: letters, digits, '-', '_' and inner dots, so that no
// id or scope can climb out of the artifacts directory or hide a file.
func validName(s string) bool {
	if s == "" || len(s) > 200 || s[0] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(wordChar(c) || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func wordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// crockford is the alphabet of ULIDs.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// defaultID returns a ULID: 48 bits of milliseconds and 80 random bits in
// Crockford base32, so ids sort by time.
func defaultID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	rand.Read(b[6:])
	// 128 bits as 26 base32 digits, the first holding the top 3 bits.
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	var out [26]byte
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// fit cuts a result that is too long for the conversation down to its first
// and last lines, storing the whole as an artifact when the registry has a
// store for them.
func (r *Registry) fit(res Result, tool string) Result {
	content := res.Content
	lines := strings.Count(content, "\n")
	if !strings.HasSuffix(content, "\n") && content != "" {
		lines++
	}
	if len(content) <= r.limits.ResultBytes && lines <= r.limits.ResultLines {
		return res
	}
	all := strings.SplitAfter(strings.TrimSuffix(content, "\n"), "\n")
	partBytes := r.limits.ResultBytes / 4
	head := takeLines(all, r.limits.HeadLines, partBytes, false)
	tail := takeLines(all[len(head):], r.limits.TailLines, partBytes, true)
	omitted := len(all) - len(head) - len(tail)

	var note string
	size := plural(lines, "line") + ", " + text.Size(int64(len(content)))
	if r.arts == nil {
		note = fmt.Sprintf("[The output was too long (%s); only its first %d and last %d lines are shown and the rest is lost. Narrow the command or search to see more.]", size, len(head), len(tail))
	} else if m, rels, err := r.arts.SaveText(content, ArtifactOutput, tool, "txt", r.limits.ArtifactBytes); err != nil {
		note = fmt.Sprintf("[The output was too long (%s); only its first %d and last %d lines are shown. Storing the whole failed: %v]", size, len(head), len(tail), err)
	} else {
		res.Artifacts = append(res.Artifacts, rels...)
		note = storedNote(lines, int64(len(content)), len(head), len(tail), m, r.limits.ArtifactBytes, r.limits.ReadFileBytes)
	}
	var b strings.Builder
	b.WriteString(note)
	b.WriteString("\n")
	for _, l := range head {
		b.WriteString(l)
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "[… %d lines omitted …]\n", omitted)
	}
	for _, l := range tail {
		b.WriteString(l)
	}
	res.Content = strings.TrimSuffix(b.String(), "\n")
	return res
}

// takeLines returns up to n lines from the start of lines (or from the
// end, when fromEnd is set) holding at most maxBytes bytes; a single line
// longer than that is clipped.
func takeLines(lines []string, n, maxBytes int, fromEnd bool) []string {
	var out []string
	size := 0
	for i := 0; i < len(lines) && len(out) < n; i++ {
		l := lines[i]
		if fromEnd {
			l = lines[len(lines)-1-i]
		}
		if size+len(l) > maxBytes {
			if len(out) > 0 {
				break
			}
			nl := strings.HasSuffix(l, "\n")
			l = text.Cut(strings.TrimSuffix(l, "\n"), maxBytes)
			if nl {
				l += "\n"
			}
		}
		size += len(l)
		out = append(out, l)
	}
	if fromEnd {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}
