package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/internal/rawfile"
)

// Finder answers a writer's lookups (which file holds an id, which files
// hold a text) from the current generation's vector store alone. It takes
// no lock: a base file never changes once written and its log is only
// appended to, so the meta and then the files it names give one
// consistent state, and a writer beside a server that is busy updating the
// index does not wait for it. What was committed after Commit is not in
// it; the caller looks at that itself.
//
// The duplicate check of a writer (ByHash) reads the base file's hash
// table (hashes-<seq>, below) and the log, not the rows: at a million
// memories the rows took two seconds of CPU and 800 MB to load for every
// memory remembered. The rows are loaded for PathOf only, or where there
// is no table and none can be made.
type Finder struct {
	commit string
	genDir string
	m      meta
	tab    *hashTable // nil: the rows answer ByHash
	// log holds what the vector log says of each path it names, the last
	// record winning: the content hash of the document put, or zero for
	// one removed.
	log map[string]docHash

	rows []vecRow // the rows, dead ones too; nil until needed
	// The first few lookups scan the rows (a fraction of a millisecond at
	// 100,000); later ones, as in a load of many entries, use maps built
	// at the scanLimit'th.
	idLookups, hashLookups int
	byID                   map[string]int32
	byHash                 map[docHash][]int32
}

// scanLimit is the number of lookups of one kind answered by a scan.
const scanLimit = 8

// OpenFinder reads the index under dir (a store's .index, or
// Options.Dir). A store without an index gives an error matching
// ErrNoIndex; a damaged or outdated one, another error: either way the
// caller finds its answers without the index.
func OpenFinder(dir string) (*Finder, error) {
	var last error
	// A writer that compacts the log switches the meta to a new base file
	// and then removes the old one: a reader that read the meta before the
	// switch and the files after it tries once more.
	for range 2 {
		gen, err := readCurrent(dir)
		if err != nil {
			return nil, err
		}
		genDir := filepath.Join(dir, gen)
		if _, err := os.Stat(filepath.Join(genDir, damagedMark)); err == nil {
			return nil, damaged("%s is marked damaged", gen)
		}
		m, err := readMeta(genDir)
		if err != nil {
			return nil, err
		}
		f := &Finder{commit: m.Commit, genDir: genDir, m: m}
		if rows := keptRows(genDir, m); rows != nil {
			f.rows = rows
			return f, nil
		}
		if f.tab, err = openHashTable(genDir, m.VecSeq); err == nil {
			if f.log, err = readLogHashes(genDir, m); err == nil {
				return f, nil
			}
			f.tab.close()
			f.tab = nil
		}
		if err := f.loadRows(); err != nil {
			last = err
			continue
		}
		return f, nil
	}
	return nil, last
}

// loadRows reads the rows, base and log.
func (f *Finder) loadRows() error {
	vs, err := loadVecStore(f.genDir, f.m, true)
	if err != nil {
		return err
	}
	f.rows = vs.rows
	return nil
}

// Close lets go of the files the Finder keeps open.
func (f *Finder) Close() {
	if f.tab != nil {
		f.tab.close()
		f.tab = nil
	}
}

// Commit returns the commit the rows are up to date with.
func (f *Finder) Commit() string { return f.commit }

// PathOf returns the path of the live entry with the given id.
func (f *Finder) PathOf(id string) (string, error) {
	if f.rows == nil {
		if err := f.loadRows(); err != nil {
			return "", fmt.Errorf("id %s: %w", id, err)
		}
	}
	if f.idLookups++; f.idLookups > scanLimit && f.byID == nil {
		f.byID = make(map[string]int32, len(f.rows))
		for i := range f.rows {
			if !f.rows[i].dead {
				f.byID[f.rows[i].id] = int32(i)
			}
		}
	}
	if f.byID != nil {
		if i, ok := f.byID[id]; ok {
			return f.rows[i].path, nil
		}
	} else {
		for i := range f.rows {
			if r := &f.rows[i]; r.id == id && !r.dead {
				return r.path, nil
			}
		}
	}
	return "", fmt.Errorf("id %s: %w", id, ErrNotFound)
}

// ByHash returns the paths of the live entries whose Doc.Hash is hash.
func (f *Finder) ByHash(hash string) []string {
	if hash == "" {
		return nil
	}
	key := packHash(hash)
	if f.tab != nil && f.rows == nil {
		var out []string
		for _, p := range f.tab.find(key) {
			if _, changed := f.log[p]; !changed {
				out = append(out, p)
			}
		}
		for p, h := range f.log {
			if h == key {
				out = append(out, p)
			}
		}
		slices.Sort(out)
		return out
	}
	if f.hashLookups++; f.hashLookups > scanLimit && f.byHash == nil {
		f.byHash = make(map[docHash][]int32, len(f.rows))
		for i := range f.rows {
			if r := &f.rows[i]; r.content != (docHash{}) && !r.dead {
				f.byHash[r.content] = append(f.byHash[r.content], int32(i))
			}
		}
	}
	var out []string
	if f.byHash != nil {
		for _, i := range f.byHash[key] {
			out = append(out, f.rows[i].path)
		}
		return out
	}
	for i := range f.rows {
		if r := &f.rows[i]; r.content == key && !r.dead {
			out = append(out, r.path)
		}
	}
	return out
}

// readLogHashes reads the vector log of the generation as loadVecStore
// does (the complete records past the committed length too) and returns
// the content hash of the last record of each path, zero for a removal.
func readLogHashes(genDir string, m meta) (map[string]docHash, error) {
	_, log := vecFiles(genDir, m.VecSeq)
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) && m.VecLog == 0 {
		return map[string]docHash{}, nil
	}
	if err != nil {
		return nil, damaged("vector log: %w", err)
	}
	if int64(len(b)) < m.VecLog {
		return nil, damaged("vector log has %d bytes, the meta says %d", len(b), m.VecLog)
	}
	out := map[string]docHash{}
	scratch := newVecStore("", 0)
	for off := 0; off < len(b); {
		payload, n, err := nextRecord(b[off:])
		if err != nil {
			if int64(off) >= m.VecLog {
				break // a torn tail
			}
			return nil, damaged("vector log at byte %d: %w", off, err)
		}
		if len(payload) == 0 {
			return nil, damaged("vector log at byte %d: empty record", off)
		}
		rr := rowReader{src: string(payload[1:])}
		switch payload[0] {
		case opDel:
			p := rr.str()
			if rr.err != nil {
				return nil, damaged("vector log at byte %d: bad delete record", off)
			}
			out[p] = docHash{}
		case opPut:
			row, _ := rr.row(scratch)
			if rr.err != nil {
				return nil, damaged("vector log at byte %d: bad put record: %w", off, rr.err)
			}
			out[row.path] = row.content
		default:
			return nil, damaged("vector log at byte %d: record of type %d", off, payload[0])
		}
		off += n
	}
	return out, nil
}

// The hash table of a base file, hashes-<seq>, lets a writer find the rows
// with a text without reading the rows: for each row with a content hash,
// the hash's first 8 bytes and where the row starts in the row section,
// sorted. A lookup reads the table (12 bytes a row: 12 MB at a million),
// finds the hash by binary search and reads the rows it points to from the
// base file, checking their whole hash. The table is
//
//	"MIRAHSH\x00", u32 version (1), u32 seq, u64 the base file's size,
//	u32 the base file's CRC of its rows and postings, u32 n,
//	n × (u64 hash prefix, u32 row offset), u32 CRC-32C of everything before
//
// little-endian. The first Finder that finds none, or one that does not
// match its base file (size and CRC), reads the rows once and writes it by
// a rename: a reader sees a whole table or none, and a torn or damaged one
// fails its CRC and is made again. Tables of other sequence numbers are
// removed then. A base file never changes, so neither does its table.
const (
	hashPrefix  = "hashes-"
	hashMagic   = "MIRAHSH\x00"
	hashVersion = 1
	hashHeader  = 8 + 4 + 4 + 8 + 4 + 4
)

type hashTable struct {
	base *os.File // the base file, for the rows
	pre  int64    // where its row section starts
	end  int64    // and ends
	keys []byte   // n × 12 bytes
}

func (t *hashTable) close() { t.base.Close() }

func (t *hashTable) n() int { return len(t.keys) / 12 }

func (t *hashTable) key(i int) uint64 { return binary.LittleEndian.Uint64(t.keys[12*i:]) }

// find returns the paths of the rows whose content hash is h.
func (t *hashTable) find(h docHash) []string {
	k := binary.LittleEndian.Uint64(h[:8])
	lo, hi := 0, t.n()
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if t.key(mid) < k {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	var out []string
	scratch := newVecStore("", 0)
	for i := lo; i < t.n() && t.key(i) == k; i++ {
		off := int64(binary.LittleEndian.Uint32(t.keys[12*i+8:]))
		row, ok := t.row(scratch, off)
		if ok && row.content == h {
			out = append(out, row.path)
		}
	}
	return out
}

// row reads the row at offset off of the row section.
func (t *hashTable) row(scratch *vecStore, off int64) (vecRow, bool) {
	for size := int64(512); ; size *= 4 {
		n := min(size, t.end-(t.pre+off))
		if n <= 0 {
			return vecRow{}, false
		}
		b := make([]byte, n)
		if _, err := t.base.ReadAt(b, t.pre+off); err != nil && err != io.EOF {
			return vecRow{}, false
		}
		rr := rowReader{src: string(b)}
		row, _ := rr.row(scratch)
		if rr.err == nil {
			return row, true
		}
		if n < size {
			return vecRow{}, false // the whole rest of the section did not do
		}
	}
}

// hashTableName names the table of base file seq.
func hashTableName(genDir string, seq int) string {
	return filepath.Join(genDir, hashPrefix+strconv.Itoa(seq))
}

// openHashTable opens the table of the generation's base file seq, making
// it if it is missing or does not match.
func openHashTable(genDir string, seq int) (*hashTable, error) {
	base, _ := vecFiles(genDir, seq)
	f, err := rawfile.Open(base)
	if err != nil {
		return nil, damaged("vectors: %w", err)
	}
	t, err := readHashTable(f, genDir, seq)
	if err != nil {
		t, err = makeHashTable(f, genDir, seq)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// baseSum returns the header of the base file f, where its row section
// starts, and the CRC stored after its rows and postings.
func baseSum(f *os.File) (vecHeader, int64, uint32, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return vecHeader{}, 0, 0, err
	}
	h, pre, err := readVecHeader(f)
	if err != nil {
		return h, 0, 0, err
	}
	var b [4]byte
	if _, err := f.ReadAt(b[:], int64(len(pre)+h.rowsLen+h.lexLen)); err != nil {
		return h, 0, 0, err
	}
	return h, int64(len(pre)), binary.LittleEndian.Uint32(b[:]), nil
}

// readHashTable reads the table of base file f, seq, if it is whole and
// made for f.
func readHashTable(f *os.File, genDir string, seq int) (*hashTable, error) {
	h, pre, sum, err := baseSum(f)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(hashTableName(genDir, seq))
	if err != nil {
		return nil, err
	}
	if len(b) < hashHeader+4 || string(b[:8]) != hashMagic {
		return nil, errors.New("not a hash table")
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, errors.New("hash table: checksum mismatch")
	}
	le := binary.LittleEndian
	n := int(le.Uint32(body[28:]))
	if le.Uint32(body[8:]) != hashVersion || le.Uint32(body[12:]) != uint32(seq) || int64(le.Uint64(body[16:])) != h.size ||
		le.Uint32(body[24:]) != sum || len(body) != hashHeader+12*n {
		return nil, errors.New("hash table of another base file")
	}
	return &hashTable{base: f, pre: pre, end: pre + int64(h.rowsLen), keys: body[hashHeader:]}, nil
}

// makeHashTable reads the rows of base file f, seq, checks them against
// their CRC and writes their table; a table that cannot be written is
// still returned.
func makeHashTable(f *os.File, genDir string, seq int) (*hashTable, error) {
	h, pre, sum, err := baseSum(f)
	if err != nil {
		return nil, damaged("vectors: %w", err)
	}
	secLen := h.rowsLen + h.lexLen
	var sec []byte
	if m, unmap, err := mapFile(f, int(pre)+secLen+4, true); err == nil {
		defer unmap()
		sec = m[pre:]
	} else {
		sec = make([]byte, secLen+4)
		if _, err := f.ReadAt(sec, pre); err != nil {
			return nil, damaged("vectors: read rows: %w", err)
		}
	}
	head := make([]byte, pre)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, damaged("vectors: %w", err)
	}
	if crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, sec[:secLen]) != sum {
		return nil, damaged("vectors: rows: checksum mismatch")
	}
	rr := rowReader{src: unsafe.String(unsafe.SliceData(sec), h.rowsLen)}
	scratch := newVecStore("", 0)
	type ent struct {
		key uint64
		off uint32
	}
	ents := make([]ent, 0, h.rows)
	for range h.rows {
		at := rr.off
		row, _ := rr.row(scratch)
		if rr.err != nil {
			return nil, damaged("vectors: row %d: %w", len(ents), rr.err)
		}
		if len(scratch.tagPool) > 1<<16 || len(scratch.dict) > 1<<16 {
			scratch = newVecStore("", 0) // only the rows' offsets are kept
		}
		if row.content != (docHash{}) {
			ents = append(ents, ent{binary.LittleEndian.Uint64(row.content[:8]), uint32(at)})
		}
	}
	slices.SortFunc(ents, func(a, b ent) int {
		if a.key != b.key {
			if a.key < b.key {
				return -1
			}
			return 1
		}
		return int(a.off) - int(b.off)
	})
	b := make([]byte, 0, hashHeader+12*len(ents)+4)
	b = append(b, hashMagic...)
	le := binary.LittleEndian
	b = le.AppendUint32(b, hashVersion)
	b = le.AppendUint32(b, uint32(seq))
	b = le.AppendUint64(b, uint64(h.size))
	b = le.AppendUint32(b, sum)
	b = le.AppendUint32(b, uint32(len(ents)))
	for _, e := range ents {
		b = le.AppendUint64(b, e.key)
		b = le.AppendUint32(b, e.off)
	}
	b = le.AppendUint32(b, crc32.Checksum(b, castagnoli))
	name := hashTableName(genDir, seq)
	// A cache: a crash loses it, and its CRC tells a torn one.
	if atomicfile.Write(name, b, 0o600, false) == nil {
		removeHashTables(genDir, seq)
	}
	return &hashTable{base: f, pre: pre, end: pre + int64(h.rowsLen), keys: b[hashHeader : len(b)-4]}, nil
}

// removeHashTables removes the tables of other base files than keep's.
func removeHashTables(genDir string, keep int) {
	ents, err := os.ReadDir(genDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), hashPrefix); ok {
			if s, err := strconv.Atoi(n); err == nil && s != keep {
				os.Remove(filepath.Join(genDir, e.Name()))
			}
		}
	}
}
