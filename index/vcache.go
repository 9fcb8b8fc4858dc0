package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/miramem/mira/internal/atomicfile"
)

// The vector cache keeps the vectors of an external embedder (one reached
// over HTTP: slow, and often paid for) by the hash of the embedded text, so
// that no text is sent twice: not when a file is touched or moved, and not
// when the index is rebuilt, since the cache lives beside the generations,
// in .index/cache/. Each embedder has its own pair of files, named after a
// hash of its ID:
//
//	<name>.keys   "MIRAVKC\x00", u32 dim, uvarint length and the embedder's
//	              ID, then one 16-byte text hash per vector
//	<name>.vecs   the vectors, dim little-endian float32 each, in the same
//	              order
//	<name>.lock   taken (flock) while the pair is written
//
// Vectors are written (and synced) before their keys, so a crash leaves at
// most vectors without keys, which are cut off by the next writer.

const (
	cacheDirName = "cache"
	cacheMagic   = "MIRAVKC\x00"
)

// vcache is one embedder's vector cache.
type vcache struct {
	keys, vecs, lock string
	id               string
	dim              int
}

func openVCache(indexDir, embedderID string, dim int) *vcache {
	sum := sha256.Sum256([]byte(embedderID))
	base := filepath.Join(indexDir, cacheDirName, hex.EncodeToString(sum[:8]))
	return &vcache{keys: base + ".keys", vecs: base + ".vecs", lock: base + ".lock", id: embedderID, dim: dim}
}

// header is the start of the keys file.
func (c *vcache) header() []byte {
	b := append([]byte(cacheMagic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[len(cacheMagic):], uint32(c.dim))
	b = binary.AppendUvarint(b, uint64(len(c.id)))
	return append(b, c.id...)
}

// index reads the keys: hash → ordinal, for the entries whose vectors are
// on disk. A missing cache is empty; an unreadable one counts as empty too
// (it is only a cache) and is replaced by the next write.
func (c *vcache) index() (map[textHash]int64, int64, error) {
	b, err := os.ReadFile(c.keys)
	if errors.Is(err, fs.ErrNotExist) {
		return map[textHash]int64{}, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("vector cache: %w", err)
	}
	head := c.header()
	if len(b) < len(head) || string(b[:len(head)]) != string(head) {
		return map[textHash]int64{}, 0, nil
	}
	b = b[len(head):]
	n := int64(len(b) / len(textHash{}))
	if fi, err := os.Stat(c.vecs); err == nil {
		n = min(n, fi.Size()/int64(4*c.dim))
	} else {
		n = 0
	}
	idx := make(map[textHash]int64, n)
	for i := range n {
		var h textHash
		copy(h[:], b[i*int64(len(h)):])
		idx[h] = i
	}
	return idx, n, nil
}

// get returns the cached vectors of hashes; missing ones are nil.
func (c *vcache) get(hashes []textHash) ([][]float32, error) {
	idx, _, err := c.index()
	if err != nil || len(idx) == 0 {
		return make([][]float32, len(hashes)), err
	}
	out := make([][]float32, len(hashes))
	f, err := os.Open(c.vecs)
	if err != nil {
		return out, nil
	}
	defer f.Close()
	buf := make([]byte, 4*c.dim)
	for i, h := range hashes {
		at, ok := idx[h]
		if !ok {
			continue
		}
		if _, err := f.ReadAt(buf, at*int64(len(buf))); err != nil {
			return out, fmt.Errorf("vector cache: %w", err)
		}
		v := make([]float32, c.dim)
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*j:]))
		}
		out[i] = v
	}
	return out, nil
}

// put adds vectors to the cache under the lock; entries already there are
// skipped.
func (c *vcache) put(hashes []textHash, vecs [][]float32) error {
	if len(hashes) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.keys), 0o700); err != nil {
		return fmt.Errorf("vector cache: %w", err)
	}
	unlock, err := lockFile(c.lock)
	if err != nil {
		return fmt.Errorf("vector cache: %w", err)
	}
	defer unlock()
	idx, n, err := c.index()
	if err != nil {
		return err
	}
	var keys, data []byte
	for i, h := range hashes {
		if _, ok := idx[h]; ok || len(vecs[i]) != c.dim {
			continue
		}
		idx[h] = n + int64(len(keys)/len(h))
		keys = append(keys, h[:]...)
		for _, x := range vecs[i] {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
		}
	}
	if len(keys) == 0 {
		return nil
	}
	// Cut both files to the n entries that are whole, then append.
	head := c.header()
	if err := appendAt(c.vecs, n*int64(4*c.dim), nil, data); err != nil {
		return fmt.Errorf("vector cache: %w", err)
	}
	if err := appendAt(c.keys, int64(len(head))+n*int64(len(textHash{})), head, keys); err != nil {
		return fmt.Errorf("vector cache: %w", err)
	}
	return nil
}

// appendAt truncates name to at bytes, writes data there and syncs. A file
// shorter than at (or new) is started over with head.
func appendAt(name string, at int64, head, data []byte) error {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < at || (head != nil && fi.Size() < int64(len(head))) {
		at = 0
	}
	if at == 0 && head != nil {
		data = append(head[:len(head):len(head)], data...)
	}
	if err := f.Truncate(at); err != nil {
		return err
	}
	if _, err := f.WriteAt(data, at); err != nil {
		return err
	}
	return f.Sync()
}

// compact rewrites the cache with only the entries in keep, when the rest
// outweigh them: a store that changes a lot would otherwise keep every
// vector it ever had.
func (c *vcache) compact(keep map[textHash]bool) error {
	unlock, err := lockFile(c.lock)
	if err != nil {
		return fmt.Errorf("vector cache: %w", err)
	}
	defer unlock()
	idx, n, err := c.index()
	if err != nil || n <= int64(2*len(keep)+1024) {
		return err
	}
	f, err := os.Open(c.vecs)
	if err != nil {
		return fmt.Errorf("vector cache: %w", err)
	}
	defer f.Close()
	keys := c.header()
	var data []byte
	buf := make([]byte, 4*c.dim)
	for h, at := range idx {
		if !keep[h] {
			continue
		}
		if _, err := f.ReadAt(buf, at*int64(len(buf))); err != nil {
			return fmt.Errorf("vector cache: %w", err)
		}
		keys = append(keys, h[:]...)
		data = append(data, buf...)
	}
	// Vectors first: while only the new vectors are in place, the old keys
	// point at wrong vectors, so the keys are emptied before.
	if err := writeFileAtomic(c.keys, c.header()); err != nil {
		return err
	}
	if err := atomicfile.Write(c.vecs, data, 0o600, true); err != nil {
		return err
	}
	return writeFileAtomic(c.keys, keys)
}

// hashText is the cache's and the vector store's key of an embedded text.
func hashText(text string) textHash {
	sum := sha256.Sum256(readOnlyBytes(text))
	var h textHash
	copy(h[:], sum[:])
	return h
}

// readOnlyBytes is s as a byte slice, without the copy a conversion
// makes, for a reader that neither changes nor keeps it (a hash): at
// 100k entries a rebuild copied every text three times only to hash it.
func readOnlyBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
