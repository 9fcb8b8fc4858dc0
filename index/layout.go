package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/miramem/mira/internal/atomicfile"
)

// FormatVersion is the version of the on-disk index: mapping, meta,
// manifest and vector files. A generation with another version is rebuilt.
const FormatVersion = 7

// RacyWindow is how close to the moment a file was looked at its
// modification time may be before a later rewrite of the same size could
// keep the same time stamp (coarse file system clocks tick every few
// milliseconds, FAT's every two seconds). Such files are looked at again.
const RacyWindow = 2 * time.Second

const (
	indexDirName  = ".index"
	currentName   = "CURRENT"
	leaseName     = "watch"
	metaName      = "meta.json"
	manifestName  = "manifest"
	bleveDirName  = "bleve"
	genPrefix     = "g-"
	manifestMagic = "mira-index-manifest 2"
)

// damagedError says the current generation cannot be trusted and is to be
// rebuilt.
type damagedError struct {
	missing  bool // there is no index at all: nothing worth a warning
	outdated bool // sound, but to be replaced (another embedder, a refit)
	err      error
}

func (e *damagedError) Error() string {
	switch {
	case e.missing:
		return e.err.Error()
	case e.outdated:
		return "outdated index: " + e.err.Error()
	}
	return "damaged index: " + e.err.Error()
}

func (e *damagedError) Unwrap() error { return e.err }

// Is makes a missing index match ErrNoIndex.
func (e *damagedError) Is(target error) bool { return e.missing && target == ErrNoIndex }

// ErrNoIndex is returned by Open with Options.NoRefresh when the store has
// no index yet (Open without it builds one).
var ErrNoIndex = errors.New("no index yet")

func damaged(format string, args ...any) error {
	return &damagedError{err: fmt.Errorf(format, args...)}
}

// readCurrent returns the name of the active generation.
func readCurrent(dir string) (string, error) {
	prev := ""
	for {
		b, err := os.ReadFile(filepath.Join(dir, currentName))
		if errors.Is(err, fs.ErrNotExist) {
			return "", &damagedError{missing: true, err: ErrNoIndex}
		}
		if err != nil {
			return "", fmt.Errorf("read index pointer: %w", err)
		}
		name := strings.TrimSpace(string(b))
		if !validGen(name) {
			return "", damaged("CURRENT names %q", name)
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.IsDir() {
			return name, nil
		}
		if name == prev {
			return "", damaged("CURRENT names %s, which does not exist", name)
		}
		// A rebuild may have put in a new generation and removed this
		// one between our reading CURRENT and looking at it: read it
		// again, and give up only when it still names what is missing.
		prev = name
	}
}

// validGen reports whether name is a generation directory's name.
func validGen(name string) bool {
	n, ok := strings.CutPrefix(name, genPrefix)
	if !ok || n == "" {
		return false
	}
	_, err := strconv.ParseInt(n, 10, 64)
	return err == nil
}

// genTime is the creation time encoded in a generation's name.
func genTime(name string) int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(name, genPrefix), 10, 64)
	return n
}

// meta is a generation's meta.json.
type meta struct {
	Version   int       `json:"version"`
	Commit    string    `json:"commit"`
	Docs      int       `json:"docs"`
	Broken    int       `json:"broken"`
	BuiltAt   time.Time `json:"built_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Embedder is the ID of the embedder every vector comes from, and Dim
	// their length.
	Embedder string `json:"embedder"`
	Dim      int    `json:"dim"`
	// DefaultEmbedder: the built-in embedder chose the vectors (a fitted
	// model, or hashing for a small store), not Options.Embedder.
	DefaultEmbedder bool `json:"default_embedder"`
	// FitDocs is the number of texts the model was fitted on; 0 without a
	// fitted model.
	FitDocs int `json:"fit_docs"`
	// Vectors counts live documents with a vector; Pending those whose
	// embedding failed and is to be tried again.
	Vectors int `json:"vectors"`
	Pending int `json:"pending"`
	// VecSeq numbers the current vector files, vectors-<seq> and
	// vectors-<seq>.log; VecLog is the log's committed length in bytes.
	VecSeq int   `json:"vec_seq"`
	VecLog int64 `json:"vec_log"`
}

func readMeta(genDir string) (meta, error) {
	var m meta
	b, err := os.ReadFile(filepath.Join(genDir, metaName))
	if err != nil {
		return m, damaged("read meta: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, damaged("read meta: %w", err)
	}
	if m.Version != FormatVersion {
		return m, damaged("format version %d, want %d", m.Version, FormatVersion)
	}
	return m, nil
}

func writeMeta(genDir string, m meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("write meta: %w", err)
	}
	return writeFileAtomic(filepath.Join(genDir, metaName), append(b, '\n'))
}

// entry is one manifest line: what the index holds for a file.
type entry struct {
	size   int64
	mtime  int64
	racy   bool
	id     string
	sum    uint64 // docSum of what was indexed; 0 for a broken file
	broken string // Load's error; the file is not in the bleve index
}

// manifest maps store-relative paths to what was indexed for them.
type manifest map[string]entry

func (m manifest) broken() int {
	n := 0
	for _, e := range m {
		if e.broken != "" {
			n++
		}
	}
	return n
}

// manifests keeps the manifest this process wrote last, with the file it
// wrote: a watcher's next batch takes it instead of parsing the file again
// (0.1 s at 100,000 entries), as long as the file is still the one written
// (same inode, size and time; another writer replaces it by a rename). A
// reader takes the map out, since it may change it; writeManifest puts
// the new one back.
var manifests struct {
	sync.Mutex
	name string
	fi   os.FileInfo
	man  manifest
}

// takeManifest returns the kept manifest of the file name, if it is still
// the file that was written, and forgets it.
func takeManifest(name string) manifest {
	manifests.Lock()
	defer manifests.Unlock()
	m, fi := manifests.man, manifests.fi
	if m == nil || manifests.name != name {
		return nil
	}
	manifests.man = nil
	now, err := os.Stat(name)
	if err != nil || !os.SameFile(now, fi) || now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
		return nil
	}
	return m
}

func readManifest(genDir string) (manifest, error) {
	name := filepath.Join(genDir, manifestName)
	if m := takeManifest(name); m != nil {
		return m, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, damaged("read manifest: %w", err)
	}
	m, err := parseManifest(b)
	if err != nil {
		return nil, damaged("read manifest: %w", err)
	}
	return m, nil
}

// parseManifest reads the manifest format written by formatManifest. It
// runs on every Open, so it avoids allocating more than the map and one
// string per path.
func parseManifest(b []byte) (manifest, error) {
	head, rest, ok := bytes.Cut(b, []byte{'\n'})
	if !ok || string(head) != manifestMagic {
		return nil, errors.New("not a manifest")
	}
	m := make(manifest, bytes.Count(rest, []byte{'\n'}))
	for ln := 2; len(rest) > 0; ln++ {
		var line []byte
		line, rest, ok = bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return nil, fmt.Errorf("line %d: truncated", ln)
		}
		var f [7][]byte
		for i := range 6 {
			var ok bool
			f[i], line, ok = bytes.Cut(line, []byte{'\t'})
			if !ok {
				return nil, fmt.Errorf("line %d: %d fields, want 7", ln, i+1)
			}
		}
		f[6] = line
		size, err1 := strconv.ParseInt(string(f[0]), 10, 64)
		mtime, err2 := strconv.ParseInt(string(f[1]), 10, 64)
		sum, err3 := strconv.ParseUint(string(f[4]), 16, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("line %d: %w", ln, err)
		}
		p := string(f[5])
		if strings.HasPrefix(p, `"`) {
			u, err := strconv.Unquote(p)
			if err != nil {
				return nil, fmt.Errorf("line %d: path: %w", ln, err)
			}
			p = u
		}
		m[p] = entry{
			size:   size,
			mtime:  mtime,
			racy:   string(f[2]) == "r",
			id:     string(f[3]),
			sum:    sum,
			broken: string(f[6]),
		}
	}
	return m, nil
}

func formatManifest(m manifest) []byte { return appendManifest(nil, m) }

// appendManifest appends the manifest's text to b.
func appendManifest(b []byte, m manifest) []byte {
	// The exact size but for quoting, so that the buffer (12 MB at
	// 100,000 entries) is not grown and copied.
	paths := make([]string, 0, len(m))
	size := len(manifestMagic) + 1
	for p, e := range m {
		paths = append(paths, p)
		size += len(p) + len(e.id) + len(e.broken) + 2*20 + 16 + 7
	}
	slices.Sort(paths)
	buf := bytes.NewBuffer(b)
	buf.Grow(size)
	buf.WriteString(manifestMagic)
	buf.WriteByte('\n')
	var num [20]byte
	for _, p := range paths {
		e := m[p]
		buf.Write(strconv.AppendInt(num[:0], e.size, 10))
		buf.WriteByte('\t')
		buf.Write(strconv.AppendInt(num[:0], e.mtime, 10))
		buf.WriteByte('\t')
		if e.racy {
			buf.WriteByte('r')
		} else {
			buf.WriteByte('-')
		}
		buf.WriteByte('\t')
		buf.WriteString(oneLine(e.id))
		buf.WriteByte('\t')
		buf.Write(strconv.AppendUint(num[:0], e.sum, 16))
		buf.WriteByte('\t')
		if strings.ContainsAny(p, "\t\n\\") || strings.HasPrefix(p, `"`) {
			buf.WriteString(strconv.Quote(p))
		} else {
			buf.WriteString(p)
		}
		buf.WriteByte('\t')
		buf.WriteString(oneLine(e.broken))
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// manifestBuf is the buffer writeManifest formats into.
var manifestBuf struct {
	sync.Mutex
	b []byte
}

// writeManifest writes m and keeps it for the next readManifest of this
// process. The caller holds the generation's write lock, so the file it
// finds after the rename is its own; it must not change m afterwards.
func writeManifest(genDir string, m manifest) error {
	name := filepath.Join(genDir, manifestName)
	manifests.Lock()
	if manifests.name == name {
		manifests.man = nil
	}
	manifests.Unlock()
	// The text is formatted into the buffer of the last write: a fresh
	// one of 12 MB at 100,000 entries cost 45 ms in page faults alone.
	manifestBuf.Lock()
	manifestBuf.b = appendManifest(manifestBuf.b[:0], m)
	err := writeFileAtomic(name, manifestBuf.b)
	manifestBuf.Unlock()
	if err != nil {
		return err
	}
	if fi, err := os.Stat(name); err == nil {
		manifests.Lock()
		manifests.name, manifests.fi, manifests.man = name, fi, m
		manifests.Unlock()
	}
	return nil
}

// oneLine keeps a free-text manifest field on its line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// writeFileAtomic replaces name with data so that a reader sees either the
// old file or the new one, also after a crash: a temporary file in the same
// directory, fsync, rename, fsync of the directory. The temporary file is
// removed on error.
func writeFileAtomic(name string, data []byte) error {
	return atomicfile.Write(name, data, 0o644, true)
}
