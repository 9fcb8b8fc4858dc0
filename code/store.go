package code

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/miramem/mira/internal/atomicfile"
)

// The index is one file, written whole and renamed into place
// (internal/atomicfile): a reader, or a process killed mid-write, sees the
// previous index or the new one, never a mix. Two processes updating at
// once each write a complete index and the last rename wins; neither file
// is ever partly one and partly the other.
//
// Layout: magic, format version (uint32), payload length (uint64), the gob
// payload, and the SHA-256 of the payload. Anything else — a short file,
// another version, a wrong checksum, a payload that does not decode — is
// reported and the index rebuilt.
const (
	indexName     = "index"
	indexMagic    = "MIRACODE"
	formatVersion = 2
	headerSize    = len(indexMagic) + 4 + 8
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
}

// state is the payload of the index file.
type state struct {
	Root    string
	Files   []*fileRec // sorted by Path
	Head    string     // the commit up to which History holds the history
	History *hStats
	Rank    []byte // the ranking model (rank.Model's binary form); nil in memory
	Updated time.Time

	names *strtab // the strings Refs and the encoded form refer to
}

// encodeState writes st in the index file's format.
func encodeState(w io.Writer, st *state) error {
	b, err := encodePayload(st)
	if err != nil {
		return err
	}
	payload := bytes.NewBuffer(b)
	var hdr [headerSize]byte
	copy(hdr[:], indexMagic)
	binary.LittleEndian.PutUint32(hdr[len(indexMagic):], formatVersion)
	binary.LittleEndian.PutUint64(hdr[len(indexMagic)+4:], uint64(payload.Len()))
	sum := sha256.Sum256(payload.Bytes())
	for _, b := range [][]byte{hdr[:], payload.Bytes(), sum[:]} {
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// decodeState reads an index file's bytes; any damage or another format
// gives an error wrapping errFormat.
func decodeState(b []byte) (*state, error) {
	if len(b) < headerSize+sha256.Size || string(b[:len(indexMagic)]) != indexMagic {
		return nil, fmt.Errorf("%w: no index header", errFormat)
	}
	if v := binary.LittleEndian.Uint32(b[len(indexMagic):]); v != formatVersion {
		return nil, fmt.Errorf("%w: format version %d, want %d", errFormat, v, formatVersion)
	}
	n := binary.LittleEndian.Uint64(b[len(indexMagic)+4:])
	if n != uint64(len(b)-headerSize-sha256.Size) {
		return nil, fmt.Errorf("%w: %d bytes of payload, header says %d", errFormat, len(b)-headerSize-sha256.Size, n)
	}
	payload := b[headerSize : headerSize+int(n)]
	sum := sha256.Sum256(payload)
	if !bytes.Equal(sum[:], b[headerSize+int(n):]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errFormat)
	}
	st, err := decodePayload(payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errFormat, err)
	}
	return st, nil
}

// loadState reads the index file in dir. A missing file gives (nil, nil).
func loadState(dir string) (*state, os.FileInfo, error) {
	name := filepath.Join(dir, indexName)
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
	st, err := decodeState(b)
	if err != nil {
		return nil, fi, fmt.Errorf("%s: %w", name, err)
	}
	return st, fi, nil
}

// saveState replaces the index file in dir with st, privately (0600).
func saveState(dir string, st *state) (os.FileInfo, error) {
	name := filepath.Join(dir, indexName)
	if err := atomicfile.WriteWith(name, 0o600, false, func(w io.Writer) error {
		return encodeState(w, st)
	}); err != nil {
		return nil, err
	}
	return os.Stat(name)
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
		if !strings.HasPrefix(n, "."+indexName+".") || !strings.HasSuffix(n, ".tmp") {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > tempAge {
			os.Remove(filepath.Join(dir, n))
		}
	}
}
