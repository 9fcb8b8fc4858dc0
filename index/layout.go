package index

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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/internal/rawfile"
)

// FormatVersion is the version of the on-disk index: mapping, meta,
// manifest and vector files. A generation with another version is rebuilt.
const FormatVersion = 12

// RacyWindow is how close to the moment a file was looked at its
// modification time may be before a later rewrite of the same size could
// keep the same time stamp (coarse file system clocks tick every few
// milliseconds, FAT's every two seconds). Such files are looked at again.
const RacyWindow = 2 * time.Second

const (
	indexDirName = ".index"
	currentName  = "CURRENT"
	leaseName    = "watch"
	metaName     = "meta.json"
	manifestName = "manifest"
	// manifestLogSuffix makes the name of the manifest's log from its own.
	manifestLogSuffix = ".log"
	genPrefix         = "g-"
	manifestMagic     = "mira-index-manifest 2"
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
		b, err := rawfile.Read(filepath.Join(dir, currentName))
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
	b, err := rawfile.Read(filepath.Join(genDir, metaName))
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
	broken string // Load's error; the file has no row
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

// manifests is what this process knows of the manifest of one generation
// (the last it read whole or wrote): its base file and its log as they
// were then, and the map they hold, which a watcher's next batch takes
// instead of parsing the files again (0.1 s at 100,000 entries). Either
// file changed since (another writer renames a new base into place,
// appends to the log or removes it) makes what is known void: the map is
// then read from the files, and the next write writes the whole manifest
// rather than append to a log it has not read. A reader takes the map
// out, since it may change it; writeManifest puts the new one back.
var manifests struct {
	sync.Mutex
	name    string      // the base file's path
	fi      os.FileInfo // the base file
	logSize int64       // the log's size, 0 for none; -1: not read whole
	man     manifest
}

// manifestState is the base file and the size of the log of the manifest
// name, as they are now.
func manifestState(name string) (os.FileInfo, int64, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, 0, err
	}
	li, err := os.Stat(name + manifestLogSuffix)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fi, 0, nil
	case err != nil:
		return nil, 0, err
	}
	return fi, li.Size(), nil
}

// manifestUnchanged reports whether the manifest name is still as this
// process last knew it. The caller holds manifests' lock.
func manifestUnchanged(name string) bool {
	if manifests.name != name || manifests.fi == nil || manifests.logSize < 0 {
		return false
	}
	fi, logSize, err := manifestState(name)
	was := manifests.fi
	return err == nil && os.SameFile(fi, was) && fi.Size() == was.Size() && fi.ModTime().Equal(was.ModTime()) && logSize == manifests.logSize
}

// takeManifest returns the kept manifest of the file name, if it is still
// the one written, and forgets it.
func takeManifest(name string) manifest {
	manifests.Lock()
	defer manifests.Unlock()
	m := manifests.man
	if m == nil || manifests.name != name {
		return nil
	}
	manifests.man = nil
	if !manifestUnchanged(name) {
		return nil
	}
	return m
}

func readManifest(genDir string) (manifest, error) {
	name := filepath.Join(genDir, manifestName)
	if m := takeManifest(name); m != nil {
		return m, nil
	}
	// The state first: a file changed after it is caught by the next
	// write's check.
	fi, statErr := os.Stat(name)
	f, err := os.Open(name)
	if err != nil {
		return nil, damaged("read manifest: %w", err)
	}
	m, err := readManifestFrom(f, fi)
	f.Close()
	if err != nil {
		return nil, damaged("read manifest: %w", err)
	}
	logSize, err := applyManifestLog(m, name+manifestLogSuffix)
	if err != nil {
		return nil, damaged("read manifest log: %w", err)
	}
	manifests.Lock()
	manifests.name, manifests.fi, manifests.logSize, manifests.man = name, fi, logSize, nil
	if statErr != nil {
		manifests.fi = nil
	}
	manifests.Unlock()
	return m, nil
}

// applyManifestLog applies the lines of the log at name to m and returns
// the log's size: 0 when there is none, -1 when it was not applied whole.
// A log ends where its first line that is not whole or not well formed
// starts (a write cut short by a crash): the manifest is then older than
// the index, which the next refresh puts right (see "Concurrency" in
// doc.go), and the next write writes it whole.
func applyManifestLog(m manifest, name string) (int64, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rest := b
	for len(rest) > 0 {
		line, after, ok := bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return -1, nil
		}
		if del, ok := bytes.CutPrefix(line, []byte("-\t")); ok {
			p, err := unquotePath(del)
			if err != nil {
				return -1, nil
			}
			delete(m, p)
		} else {
			p, e, err := parseManifestLine(line)
			if err != nil {
				return -1, nil
			}
			m[p] = e
		}
		rest = after
	}
	return int64(len(b)), nil
}

// readManifestFrom reads the manifest format written by formatManifest,
// a buffer at a time, so that the file (14 MB at 100,000 entries) is not
// garbage beside the map made of it at the peak of a server's first
// refresh. It runs on every Open, so it allocates little more than the
// map and one string per path.
func readManifestFrom(r io.Reader, fi os.FileInfo) (manifest, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	line := func() ([]byte, error) {
		l, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer (a long broken reason).
			long := append([]byte(nil), l...)
			for err == bufio.ErrBufferFull {
				l, err = br.ReadSlice('\n')
				long = append(long, l...)
			}
			l = long
		}
		return l, err
	}
	head, err := line()
	if err != nil || string(head) != manifestMagic+"\n" {
		return nil, errors.New("not a manifest")
	}
	n := 0
	if fi != nil {
		n = int(fi.Size() / 100) // lines are about 140 bytes
	}
	m := make(manifest, n)
	for ln := 2; ; ln++ {
		l, err := line()
		if err == io.EOF && len(l) == 0 {
			return m, nil
		}
		if err == io.EOF {
			return nil, fmt.Errorf("line %d: truncated", ln)
		}
		if err != nil {
			return nil, err
		}
		p, e, err := parseManifestLine(l[:len(l)-1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", ln, err)
		}
		m[p] = e
	}
}

// parseManifest reads a manifest held in memory, as readManifestFrom does.
func parseManifest(b []byte) (manifest, error) {
	return readManifestFrom(bytes.NewReader(b), nil)
}

// parseManifestLine reads one entry line of the manifest.
func parseManifestLine(line []byte) (string, entry, error) {
	var f [7][]byte
	for i := range 6 {
		var ok bool
		f[i], line, ok = bytes.Cut(line, []byte{'\t'})
		if !ok {
			return "", entry{}, fmt.Errorf("%d fields, want 7", i+1)
		}
	}
	f[6] = line
	size, err1 := strconv.ParseInt(string(f[0]), 10, 64)
	mtime, err2 := strconv.ParseInt(string(f[1]), 10, 64)
	sum, err3 := strconv.ParseUint(string(f[4]), 16, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return "", entry{}, err
	}
	p, err := unquotePath(f[5])
	if err != nil {
		return "", entry{}, fmt.Errorf("path: %w", err)
	}
	// An entry Mira wrote is named after its id: the id then shares the
	// path's bytes (3 MB of a server's first refresh at 100k entries).
	id := ""
	if at := strings.LastIndex(p, string(f[3])); at >= 0 {
		id = p[at : at+len(f[3])]
	} else {
		id = string(f[3])
	}
	return p, entry{
		size:   size,
		mtime:  mtime,
		racy:   string(f[2]) == "r",
		id:     id,
		sum:    sum,
		broken: string(f[6]),
	}, nil
}

// unquotePath reads a path field, Go-quoted or not (see quotePath).
func unquotePath(b []byte) (string, error) {
	p := string(b)
	if strings.HasPrefix(p, `"`) {
		return strconv.Unquote(p)
	}
	return p, nil
}

// appendPath appends p as a path field: Go-quoted when it holds a tab, a
// newline or a backslash or starts with a double quote.
func appendPath(b []byte, p string) []byte {
	if strings.ContainsAny(p, "\t\n\\") || strings.HasPrefix(p, `"`) {
		return strconv.AppendQuote(b, p)
	}
	return append(b, p...)
}

// appendEntry appends the manifest line of path p.
func appendEntry(b []byte, p string, e entry) []byte {
	b = strconv.AppendInt(b, e.size, 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, e.mtime, 10)
	b = append(b, '\t')
	if e.racy {
		b = append(b, 'r')
	} else {
		b = append(b, '-')
	}
	b = append(b, '\t')
	b = append(b, oneLine(e.id)...)
	b = append(b, '\t')
	b = strconv.AppendUint(b, e.sum, 16)
	b = append(b, '\t')
	b = appendPath(b, p)
	b = append(b, '\t')
	b = append(b, oneLine(e.broken)...)
	return append(b, '\n')
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
	b = slices.Grow(b, size)
	b = append(b, manifestMagic...)
	b = append(b, '\n')
	for _, p := range paths {
		b = appendEntry(b, p, m[p])
	}
	return b
}

// maxKeptManifestBuf is the largest buffer writeManifest keeps for the
// next write.
const maxKeptManifestBuf = 16 << 20

// manifestBuf is the buffer writeManifest formats into.
var manifestBuf struct {
	sync.Mutex
	b []byte
}

// manifestLogShare is how large the log may grow against its base before a
// write writes the manifest whole again: at 100,000 entries a base of 14
// MB takes 0.1 s to write, a line 0.1 KB.
var manifestLogShare int64 = 16 // a variable for tests

// writeManifest writes m and keeps it for the next readManifest of this
// process. The caller holds the generation's write lock, so the files it
// finds afterwards are its own; it must not change m afterwards. When
// changed names every path whose entry may differ from the manifest as
// this process last read or wrote it, and the files are still as they
// were then, only those entries are appended to the log (a batch of a
// few files at 100,000 entries wrote 14 MB, and sorted and formatted them,
// for each batch); otherwise, or once the log has grown past a
// manifestLogShare'th of the base, the whole manifest is written and the
// log removed. A nil changed writes it whole.
func writeManifest(genDir string, m manifest, changed []string) error {
	name := filepath.Join(genDir, manifestName)
	manifests.Lock()
	defer manifests.Unlock()
	delta := changed != nil && manifestUnchanged(name)
	var baseSize, prevLog int64
	if delta {
		baseSize, prevLog = manifests.fi.Size(), manifests.logSize
	}
	manifests.man, manifests.name, manifests.fi = nil, "", nil
	// The lines are formatted into the buffer of the last write: a fresh
	// one of 12 MB at 100,000 entries cost 45 ms in page faults alone.
	manifestBuf.Lock()
	defer manifestBuf.Unlock()
	b := manifestBuf.b[:0]
	logSize := int64(0)
	if delta {
		for _, p := range changed {
			if e, ok := m[p]; ok {
				b = appendEntry(b, p, e)
			} else {
				b = appendPath(append(b, "-\t"...), p)
				b = append(b, '\n')
			}
		}
		logSize = prevLog + int64(len(b))
		if logSize > baseSize/manifestLogShare {
			delta = false
		} else if err := appendSync(name+manifestLogSuffix, b); err != nil {
			return err
		}
	}
	if !delta {
		// The log goes first: a crash before the new base is in place
		// leaves the old base alone, older than the index, which the
		// next refresh puts right; the old log over the new base would
		// do no worse.
		if err := os.Remove(name + manifestLogSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		b = appendManifest(b[:0], m)
		if err := writeFileAtomic(name, b); err != nil {
			manifestBuf.b = b
			return err
		}
		logSize = 0
	}
	// A buffer that a store of more than about 100,000 entries needed is
	// not kept: a server would hold the 150 MB of a million for good.
	if cap(b) > maxKeptManifestBuf {
		b = nil
	}
	manifestBuf.b = b
	fi, size, err := manifestState(name)
	if err == nil && size == logSize {
		manifests.name, manifests.fi, manifests.logSize, manifests.man = name, fi, logSize, m
	}
	return nil
}

// appendSync appends b to the file name (created if need be) and syncs it.
func appendSync(name string, b []byte) error {
	if err := atomicfile.Check(name); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
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
	return atomicfile.Write(name, data, 0o600, true)
}
