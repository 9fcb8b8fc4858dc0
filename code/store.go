package code

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/internal/fault"
)

// The index is two files, each written whole and renamed into place
// (internal/atomicfile): "index", the base, and "journal", the files
// changed since, named with the identity of the base they apply to. A
// small update rewrites only the journal; a large one, or a journal grown
// too big, rewrites the base and removes the journal. A reader, or a
// process killed mid-write, sees each file old or new, never a mix; a
// journal whose base was replaced since is ignored (the files it held are
// found changed again by the next update). Two processes updating at once
// each write complete files and the last rename wins.
//
// The base: magic, format version (uint32), payload length (uint64), its
// identity (16 random bytes, given at each save), the payload, and the
// CRC-32 (IEEE) of all before it. The journal: magic, format version, payload
// length, the payload, and its SHA-256. Anything else — a short file,
// another version, a wrong checksum, a payload that does not decode — is
// reported and the index rebuilt.
//
// The base is checked whole at opening, with a checksum the processor
// computes at memory speed (SHA-256 of the Go tree's 65 MB index was a
// third of a second); its parts are then decoded only as they are needed,
// each with bounds checks that turn damage missed into an error, never a
// crash or a wrong answer.
const (
	indexName     = "index"
	indexMagic    = "MIRACODE"
	journalName   = "journal"
	journalMagic  = "MIRAJRNL"
	formatVersion = 3
	headerSize    = len(indexMagic) + 4 + 8 + 16
	jheaderSize   = len(journalMagic) + 4 + 8
	checksumSize  = 4
)

// errFormat marks an index file that is damaged or of another format.
var errFormat = errors.New("damaged or of another format")

// fileRec is what the index knows of one file.
type fileRec struct {
	Path  string // slash path relative to the root
	Size  int64
	Mtime int64    // UnixNano
	Sum   [16]byte // first half of the content's SHA-256
	Lang  string   // parse.Language; "" = text
	Skip  string   // why the file is left out; "" = indexed
	Lines int
	File  *pFile   // definitions (its Refs are nil: see Refs); nil for text and skipped files
	Refs  []uint32 // references, packed (see packRefs)

	// lz, for a record read from the index file, holds its definitions and
	// references until first asked for: read them with file and refs.
	lz *lazyBody
}

// state is the payload of the index file.
type state struct {
	Root    string
	Files   []*fileRec // sorted by Path
	Head    string     // the commit up to which History holds the history
	History *hStats
	Rank    []byte // the ranking model (rank.Model's binary form); nil in memory
	Updated time.Time

	names  *strtab     // the strings Refs and the encoded form refer to
	bodies *bodySource // the bodies of files read from the index file; nil when none
	own    *mapping    // the index file's bytes, which Rank and bodies are slices of
}

// envelope wraps a payload: magic, version, length, payload, SHA-256.
func envelope(magic string, payload []byte) []byte {
	out := make([]byte, 0, jheaderSize+len(payload)+sha256.Size)
	out = append(out, magic...)
	out = binary.LittleEndian.AppendUint32(out, formatVersion)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(payload)))
	out = append(out, payload...)
	sum := sha256.Sum256(payload)
	return append(out, sum[:]...)
}

// unwrap checks an envelope and returns its payload and the payload's
// identity (the first half of its SHA-256); any damage or another format
// gives an error wrapping errFormat.
func unwrap(magic string, b []byte) ([]byte, [16]byte, error) {
	var id [16]byte
	if len(b) < jheaderSize+sha256.Size || string(b[:len(magic)]) != magic {
		return nil, id, fmt.Errorf("%w: no header", errFormat)
	}
	if v := binary.LittleEndian.Uint32(b[len(magic):]); v != formatVersion {
		return nil, id, fmt.Errorf("%w: format version %d, want %d", errFormat, v, formatVersion)
	}
	n := binary.LittleEndian.Uint64(b[len(magic)+4:])
	if n != uint64(len(b)-jheaderSize-sha256.Size) {
		return nil, id, fmt.Errorf("%w: %d bytes of payload, header says %d", errFormat, len(b)-jheaderSize-sha256.Size, n)
	}
	payload := b[jheaderSize : jheaderSize+int(n)]
	sum := sha256.Sum256(payload)
	if !bytes.Equal(sum[:], b[jheaderSize+int(n):]) {
		return nil, id, fmt.Errorf("%w: checksum mismatch", errFormat)
	}
	copy(id[:], sum[:])
	return payload, id, nil
}

// unwrapIndex checks the base file's envelope and returns its payload and
// identity; any damage or another format gives an error wrapping
// errFormat.
func unwrapIndex(b []byte) ([]byte, [16]byte, error) {
	var id [16]byte
	if len(b) < headerSize+checksumSize || string(b[:len(indexMagic)]) != indexMagic {
		return nil, id, fmt.Errorf("%w: no header", errFormat)
	}
	if v := binary.LittleEndian.Uint32(b[len(indexMagic):]); v != formatVersion {
		return nil, id, fmt.Errorf("%w: format version %d, want %d", errFormat, v, formatVersion)
	}
	n := binary.LittleEndian.Uint64(b[len(indexMagic)+4:])
	if n != uint64(len(b)-headerSize-checksumSize) {
		return nil, id, fmt.Errorf("%w: %d bytes of payload, header says %d", errFormat, len(b)-headerSize-checksumSize, n)
	}
	end := len(b) - checksumSize
	if crc32.ChecksumIEEE(b[:end]) != binary.LittleEndian.Uint32(b[end:]) {
		return nil, id, fmt.Errorf("%w: checksum mismatch", errFormat)
	}
	copy(id[:], b[len(indexMagic)+4+8:])
	return b[headerSize:end], id, nil
}

// readFile reads a file of the index directory whole. A missing file
// gives (nil, nil, nil).
func readIndexFile(name string) ([]byte, os.FileInfo, error) {
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	b := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fi, fmt.Errorf("%s: %w: %v", name, errFormat, err)
	}
	return b, fi, nil
}

// mapping owns the bytes of a mapped index file: they stay mapped while
// it is reachable. Everything holding slices of them holds it too (the
// state, the bodies, the ranking model).
type mapping struct{ _ [8]byte } // not zero-sized, so that each is its own object

// readWhole reads size bytes of f into memory.
func readWhole(f *os.File, size int64) ([]byte, *mapping, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, nil, err
	}
	return b, &mapping{}, nil
}

// errFault says the index file changed under a reader that mapped it:
// another program truncated or rewrote it in place (the index's own
// writers replace it whole).
var errFault = errors.New("the index file changed while it was read")

// safely runs fn, turning a fault on reading mapped memory into an error.
func safely(fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); ok {
				err = fmt.Errorf("%w: %w", errFormat, errFault)
				return
			}
			panic(r)
		}
	}()
	fn()
	return nil
}

// loadState reads the index file in dir, mapped or read whole: only its
// file heads are decoded here, the rest when first needed. A missing file
// gives nil.
func loadState(dir string) (*state, [16]byte, os.FileInfo, error) {
	var id [16]byte
	name := filepath.Join(dir, indexName)
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, id, nil, nil
	}
	if err != nil {
		return nil, id, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, id, nil, err
	}
	b, own, err := mapFile(f, fi.Size())
	if err != nil {
		return nil, id, fi, fmt.Errorf("%s: %w: %v", name, errFormat, err)
	}
	var st *state
	if ferr := safely(func() {
		var payload []byte
		if payload, id, err = unwrapIndex(b); err != nil {
			return
		}
		if st, err = decodePayload(payload); err != nil {
			err = fmt.Errorf("%w: %v", errFormat, err)
		}
	}); ferr != nil {
		err = ferr
	}
	if err != nil {
		return nil, id, fi, fmt.Errorf("%s: %w", name, err)
	}
	st.own = own
	st.bodies.own = own
	return st, id, fi, nil
}

// saveState replaces the index file in dir with st, privately (0600),
// and returns the new file's identity.
func saveState(dir string, st *state) ([16]byte, os.FileInfo, error) {
	var id [16]byte
	b, err := encodePayload(st)
	if err != nil {
		return id, nil, err
	}
	// The payload follows headerSize bytes of room: wrapped in place.
	if _, err := rand.Read(id[:]); err != nil {
		return id, nil, err
	}
	copy(b, indexMagic)
	binary.LittleEndian.PutUint32(b[len(indexMagic):], formatVersion)
	binary.LittleEndian.PutUint64(b[len(indexMagic)+4:], uint64(len(b)-headerSize))
	copy(b[len(indexMagic)+4+8:], id[:])
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	name := filepath.Join(dir, indexName)
	if err := atomicfile.Write(name, b, 0o600, false); err != nil {
		return id, nil, err
	}
	fi, err := os.Stat(name)
	return id, fi, err
}

// damage reports damage that decoding the index file's parts found after
// it was opened; the index is then rebuilt by the next update.
func (ix *Index) damage() error {
	ix.mu.RLock()
	st, model := ix.st, ix.model
	ix.mu.RUnlock()
	if err := st.bodies.damage(); err != nil {
		return err
	}
	return model.Err()
}

// loadJournal reads the journal in dir, interning its strings into tab.
// A missing journal gives nil.
func loadJournal(dir string, tab *strtab) (*journal, os.FileInfo, error) {
	name := filepath.Join(dir, journalName)
	b, fi, err := readIndexFile(name)
	if b == nil || err != nil {
		return nil, fi, err
	}
	payload, _, err := unwrap(journalMagic, b)
	if err != nil {
		return nil, fi, fmt.Errorf("%s: %w", name, err)
	}
	j, err := decodeJournal(payload, tab)
	if err != nil {
		return nil, fi, fmt.Errorf("%s: %w: %v", name, errFormat, err)
	}
	return j, fi, nil
}

// saveJournal replaces the journal in dir. Another process may write a
// new base and remove the journal between the write and the stat: the
// journal is then gone for good reason, and its info is nil, so that the
// next read sees that the files on disk are no longer these.
func saveJournal(dir string, j *journal, names []string) (os.FileInfo, error) {
	name := filepath.Join(dir, journalName)
	if err := atomicfile.Write(name, envelope(journalMagic, encodeJournal(j, names)), 0o600, false); err != nil {
		return nil, err
	}
	fault.At(fault.CodeJournalWritten)
	fi, err := os.Stat(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return fi, err
}

// tempAge is how old a temporary file left in the index directory must be
// to be taken for the remains of a killed writer rather than the work of a
// live one.
const tempAge = 10 * time.Minute

// removeStaleTemps removes temporary files that killed writers left in dir.
func removeStaleTemps(dir string, now time.Time) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if !(strings.HasPrefix(n, "."+indexName+".") || strings.HasPrefix(n, "."+journalName+".")) || !strings.HasSuffix(n, ".tmp") {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > tempAge {
			os.Remove(filepath.Join(dir, n))
		}
	}
}
