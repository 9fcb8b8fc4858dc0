package gitrepo

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// The layout of .git/index, as git's Documentation/gitformat-index.txt
// describes it; see the Index section of the package comment for what is
// read and written.
const (
	indexSignature = "DIRC"
	indexHeaderLen = 12 // signature, version, entry count
	indexHashLen   = 20 // the trailing SHA-1, and an entry's object name
	extHeaderLen   = 8  // an extension's signature and size

	// entryStatLen is the length of the fixed part of an entry: ten 32-bit
	// stat and mode fields, the object name and the 16-bit flags. An entry
	// with extended flags has two more bytes before its path.
	entryStatLen = 40 + indexHashLen + 2
	// minEntryLen bounds the entry count by the file's size before anything
	// is allocated: in versions 2 and 3 the path and its terminating NUL
	// are padded to a multiple of eight bytes, in version 4 the path comes
	// after a strip count of at least one byte and ends with a NUL. Even
	// the empty paths of a split index take two bytes.
	minEntryLen = entryStatLen + 2

	flagAssumeValid = 1 << 15
	flagExtended    = 1 << 14
	flagStageMask   = 3 << 12
	flagNameMask    = 0xfff // length of the path, or 0xfff for longer ones

	xflagSkipWorktree = 1 << 14
	xflagIntentToAdd  = 1 << 13
	// xflagKnown are the extended flags git writes to disk; any other bit
	// set means a format this package does not know.
	xflagKnown = xflagSkipWorktree | xflagIntentToAdd
)

var (
	// errSplitIndex: the file holds only the changes to a shared index
	// ("link" extension), so its entries are not the whole index.
	errSplitIndex = errors.New("split index")
	// errSparseIndex: some entries stand for whole directories outside
	// the sparse checkout ("sdir" extension).
	errSparseIndex = errors.New("sparse index")
	// errIndexExtension: an extension whose signature does not start with
	// an upper-case letter must be understood to read the index.
	errIndexExtension = errors.New("unknown mandatory index extension")
	// errIndexChecksum: the trailing SHA-1 does not match the content;
	// a torn or damaged write.
	errIndexChecksum = errors.New("index checksum mismatch")
	// errIndexFormat covers everything else that git would not write.
	errIndexFormat = errors.New("malformed index")
)

// indexFile is the content of .git/index that Commit uses and rewrites.
type indexFile struct {
	version uint32       // 2, 3 or 4 when read from disk; 0 for a new index
	entries []indexEntry // sorted by name, then stage, as git requires
	// skipped lists the signatures of the optional extensions that were
	// read and are not written back.
	skipped []string
}

// indexEntry is one entry of the index: one path at one stage.
type indexEntry struct {
	// Stat data git compares with the file's to trust it unchanged
	// without reading it. The fields are stored as git stores them,
	// truncated to 32 bits.
	ctimeSec, ctimeNsec uint32
	mtimeSec, mtimeNsec uint32
	dev, ino            uint32
	mode                filemode.FileMode
	uid, gid            uint32
	size                uint32

	hash plumbing.Hash
	// flags holds the assume-valid bit and the stage as stored; the
	// extended bit and the path length are derived from the other fields
	// when the entry is written.
	flags uint16
	// xflags holds the skip-worktree and intent-to-add bits.
	xflags uint16
	name   string
}

// stage is 0 for a merged entry, 1 to 3 for the sides of a conflict.
func (e *indexEntry) stage() int { return int(e.flags&flagStageMask) >> 12 }

// decodeIndex parses the bytes of an index file of version 2, 3 or 4. It
// returns an error wrapping one of the err* values above for anything that
// is not an index it can rewrite faithfully: a damaged or truncated file
// (the checksum catches those), a split or sparse index, an extension that
// must be understood, entries out of order. Optional extensions are checked
// for their framing and skipped.
//
// It allocates little: the entries go into one slice and all paths into one
// string, which the entries' names share.
func decodeIndex(data []byte) (*indexFile, error) {
	if len(data) < indexHeaderLen+indexHashLen {
		return nil, fmt.Errorf("%w: %d bytes is too short", errIndexFormat, len(data))
	}
	if string(data[:4]) != indexSignature {
		return nil, fmt.Errorf("%w: signature %q, want %q", errIndexFormat, data[:4], indexSignature)
	}
	version := binary.BigEndian.Uint32(data[4:])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("%w: version %d not supported", errIndexFormat, version)
	}
	body, sum := data[:len(data)-indexHashLen], data[len(data)-indexHashLen:]
	// git writes an all-zero checksum when index.skipHash is set.
	if want := sha1.Sum(body); !bytes.Equal(sum, want[:]) && !isZero(sum) {
		return nil, errIndexChecksum
	}
	count := binary.BigEndian.Uint32(data[8:])
	if uint64(count) > uint64(len(body)-indexHeaderLen)/minEntryLen {
		return nil, fmt.Errorf("%w: %d entries cannot fit in %d bytes", errIndexFormat, count, len(data))
	}

	f := &indexFile{version: version, entries: make([]indexEntry, count)}
	// Paths are appended to one builder and cut out of its string at the
	// end, which costs one allocation instead of one per entry. ends[i]
	// is where entry i's path ends in it.
	var names strings.Builder
	names.Grow(len(body) - indexHeaderLen - int(count)*entryStatLen)
	ends := make([]int, count)
	var prev []byte // the previous path, which version 4 paths build on
	off := indexHeaderLen
	for i := range f.entries {
		b := body[off:]
		if len(b) < entryStatLen {
			return nil, fmt.Errorf("%w: entry %d truncated", errIndexFormat, i)
		}
		e := &f.entries[i]
		e.ctimeSec = binary.BigEndian.Uint32(b[0:])
		e.ctimeNsec = binary.BigEndian.Uint32(b[4:])
		e.mtimeSec = binary.BigEndian.Uint32(b[8:])
		e.mtimeNsec = binary.BigEndian.Uint32(b[12:])
		e.dev = binary.BigEndian.Uint32(b[16:])
		e.ino = binary.BigEndian.Uint32(b[20:])
		e.mode = filemode.FileMode(binary.BigEndian.Uint32(b[24:]))
		e.uid = binary.BigEndian.Uint32(b[28:])
		e.gid = binary.BigEndian.Uint32(b[32:])
		e.size = binary.BigEndian.Uint32(b[36:])
		copy(e.hash[:], b[40:60])
		flags := binary.BigEndian.Uint16(b[60:])
		e.flags = flags & (flagAssumeValid | flagStageMask)
		n := entryStatLen
		if flags&flagExtended != 0 {
			if version < 3 {
				return nil, fmt.Errorf("%w: entry %d has extended flags in a version %d index", errIndexFormat, i, version)
			}
			if len(b) < n+2 {
				return nil, fmt.Errorf("%w: entry %d truncated", errIndexFormat, i)
			}
			e.xflags = binary.BigEndian.Uint16(b[n:])
			if e.xflags&^xflagKnown != 0 {
				return nil, fmt.Errorf("%w: entry %d has unknown extended flags %#04x", errIndexFormat, i, e.xflags)
			}
			n += 2
		}

		var name []byte
		if version == 4 {
			// The path is the previous one less its last strip bytes,
			// followed by the NUL-terminated suffix stored here.
			strip, k := readVarint(b[n:])
			if k == 0 {
				return nil, fmt.Errorf("%w: entry %d has a malformed path prefix length", errIndexFormat, i)
			}
			if strip > uint64(len(prev)) {
				return nil, fmt.Errorf("%w: entry %d strips %d bytes of a %d-byte path", errIndexFormat, i, strip, len(prev))
			}
			n += k
			end := bytes.IndexByte(b[n:], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: entry %d path not terminated", errIndexFormat, i)
			}
			prev = append(prev[:len(prev)-int(strip)], b[n:n+end]...)
			name = prev
			n += end + 1
		} else {
			// The path is NUL-terminated and padded with NULs to a
			// multiple of eight bytes; the flags give its length
			// unless it is too long for them.
			size := int(flags & flagNameMask)
			if size == flagNameMask {
				if size = bytes.IndexByte(b[n:], 0); size < 0 {
					return nil, fmt.Errorf("%w: entry %d path not terminated", errIndexFormat, i)
				}
			} else if len(b) <= n+size || b[n+size] != 0 || bytes.IndexByte(b[n:n+size], 0) >= 0 {
				return nil, fmt.Errorf("%w: entry %d path does not match its length %d", errIndexFormat, i, size)
			}
			name = b[n : n+size]
			n = (n + size + 8) &^ 7
			if n > len(b) {
				return nil, fmt.Errorf("%w: entry %d truncated", errIndexFormat, i)
			}
		}
		names.Write(name)
		ends[i] = names.Len()
		off += n
	}

	// The extensions are read before the paths are checked: the entries
	// of a split index that replace shared ones have empty paths.
	for off < len(body) {
		if len(body)-off < extHeaderLen {
			return nil, fmt.Errorf("%w: %d stray bytes after the entries", errIndexFormat, len(body)-off)
		}
		sig := string(body[off : off+4])
		size := binary.BigEndian.Uint32(body[off+4:])
		if uint64(size) > uint64(len(body)-off-extHeaderLen) {
			return nil, fmt.Errorf("%w: extension %q overruns the file", errIndexFormat, sig)
		}
		switch {
		case sig == "link":
			return nil, errSplitIndex
		case sig == "sdir":
			return nil, errSparseIndex
		case sig[0] < 'A' || sig[0] > 'Z':
			return nil, fmt.Errorf("%w %q", errIndexExtension, sig)
		}
		f.skipped = append(f.skipped, sig)
		off += extHeaderLen + int(size)
	}
	all, start := names.String(), 0
	for i := range f.entries {
		e := &f.entries[i]
		e.name, start = all[start:ends[i]], ends[i]
		if e.name == "" {
			return nil, fmt.Errorf("%w: entry %d has an empty path", errIndexFormat, i)
		}
		// git refuses an index out of order, and Commit's merge of new
		// entries relies on the order.
		if i > 0 {
			p := &f.entries[i-1]
			if c := strings.Compare(p.name, e.name); c > 0 || c == 0 && p.stage() >= e.stage() {
				return nil, fmt.Errorf("%w: entry %q (stage %d) out of order", errIndexFormat, e.name, e.stage())
			}
		}
	}

	return f, nil
}

// encode returns the index in the on-disk format, without extensions.
//
// The version is chosen as git chooses it when it rewrites an index:
// version 4 (prefix-compressed paths) stays version 4, since someone asked
// for it; otherwise version 3 if an entry has extended flags, which version
// 2 cannot hold, and version 2 if none has.
func (f *indexFile) encode() ([]byte, error) {
	version := uint32(2)
	size := indexHeaderLen + indexHashLen
	for i := range f.entries {
		e := &f.entries[i]
		if strings.IndexByte(e.name, 0) >= 0 || e.name == "" {
			return nil, fmt.Errorf("encode index: invalid path %q", e.name)
		}
		if i > 0 {
			p := &f.entries[i-1]
			if c := strings.Compare(p.name, e.name); c > 0 || c == 0 && p.stage() >= e.stage() {
				return nil, fmt.Errorf("encode index: entry %q (stage %d) out of order", e.name, e.stage())
			}
		}
		n := entryStatLen
		if e.xflags != 0 {
			n += 2
			version = 3
		}
		// Version 2 and 3 size; version 4 entries are never longer by
		// more than the strip count's few bytes, left to append.
		size += (n + len(e.name) + 8) &^ 7
	}
	if f.version == 4 {
		version = 4
	}

	buf := make([]byte, 0, size)
	buf = append(buf, indexSignature...)
	buf = binary.BigEndian.AppendUint32(buf, version)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(f.entries)))
	prev := ""
	for i := range f.entries {
		e := &f.entries[i]
		if version != 4 {
			buf = appendEntryV2(buf, e)
			continue
		}
		buf = appendEntryStat(buf, e)
		common := commonPrefix(prev, e.name)
		buf = appendVarint(buf, uint64(len(prev)-common))
		buf = append(buf, e.name[common:]...)
		buf = append(buf, 0)
		prev = e.name
	}
	sum := sha1.Sum(buf)
	return append(buf, sum[:]...), nil
}

// appendEntry appends e as a version 2 or 3 index holds it, after checking
// its path.
func appendEntry(buf []byte, e *indexEntry) ([]byte, error) {
	if strings.IndexByte(e.name, 0) >= 0 || e.name == "" {
		return nil, fmt.Errorf("encode index: invalid path %q", e.name)
	}
	return appendEntryV2(buf, e), nil
}

// appendEntryV2 appends e as a version 2 or 3 index holds it: the stat
// data, the path, and one to eight NULs (the terminator and the padding).
func appendEntryV2(buf []byte, e *indexEntry) []byte {
	start := len(buf)
	buf = appendEntryStat(buf, e)
	buf = append(buf, e.name...)
	var nuls [8]byte
	return append(buf, nuls[:start+(len(buf)-start+8)&^7-len(buf)]...)
}

// appendEntryStat appends the part of e before its path: the stat data,
// the object name, the flags and the extended flags if any.
func appendEntryStat(buf []byte, e *indexEntry) []byte {
	buf = binary.BigEndian.AppendUint32(buf, e.ctimeSec)
	buf = binary.BigEndian.AppendUint32(buf, e.ctimeNsec)
	buf = binary.BigEndian.AppendUint32(buf, e.mtimeSec)
	buf = binary.BigEndian.AppendUint32(buf, e.mtimeNsec)
	buf = binary.BigEndian.AppendUint32(buf, e.dev)
	buf = binary.BigEndian.AppendUint32(buf, e.ino)
	buf = binary.BigEndian.AppendUint32(buf, uint32(e.mode))
	buf = binary.BigEndian.AppendUint32(buf, e.uid)
	buf = binary.BigEndian.AppendUint32(buf, e.gid)
	buf = binary.BigEndian.AppendUint32(buf, e.size)
	buf = append(buf, e.hash[:]...)
	flags := e.flags&(flagAssumeValid|flagStageMask) | uint16(min(len(e.name), flagNameMask))
	if e.xflags != 0 {
		flags |= flagExtended
	}
	buf = binary.BigEndian.AppendUint16(buf, flags)
	if e.xflags != 0 {
		buf = binary.BigEndian.AppendUint16(buf, e.xflags)
	}
	return buf
}

// appendVarint appends v in the variable-length encoding of version 4's
// strip counts (the one pack files use for delta offsets): groups of seven
// bits, most significant first, the high bit marking that another group
// follows. Each continuation adds one to the value, so every number has
// exactly one encoding.
func appendVarint(b []byte, v uint64) []byte {
	var groups [10]byte
	i := len(groups) - 1
	groups[i] = byte(v & 0x7f)
	for v >>= 7; v != 0; v >>= 7 {
		v--
		i--
		groups[i] = 0x80 | byte(v&0x7f)
	}
	return append(b, groups[i:]...)
}

// readVarint decodes a number written by appendVarint at the start of b and
// returns it with the number of bytes it took, or zero bytes if b does not
// start with a complete encoding of a number below 2^56.
func readVarint(b []byte) (v uint64, n int) {
	for n < len(b) {
		c := b[n]
		n++
		v = v<<7 | uint64(c&0x7f)
		if c&0x80 == 0 {
			return v, n
		}
		if v++; v >= 1<<49 {
			break
		}
	}
	return 0, 0
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
