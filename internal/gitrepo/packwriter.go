package gitrepo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"

	"github.com/miramem/mira/internal/atomicfile"
)

// PackMin is the number of files a commit must write for its objects to go
// into one new pack rather than into loose files. A loose object costs a
// temporary file, a sync, a chmod and a rename, several hundred
// microseconds of system time each on ext4 once thousands are written in a
// row; a pack is two files whatever the count. Small commits stay loose:
// every pack is one more index for each lookup to search, and Repack
// gathers loose objects cheaply.
const PackMin = 64

// packBuilder collects a commit's objects as the entries of a pack, each
// compressed as it is added and appended to a temporary file under
// objects/pack, so a commit of a million files holds its index entries in
// memory (some 40 bytes an object) but never the objects; flush completes
// the file as a pack, writes its index and installs both. Objects are
// stored whole, never as deltas (Repack, once there are MaxPacks packs,
// writes one pack with deltas for everything).
type packBuilder struct {
	dir     string // objects/pack
	f       *os.File
	w       *bufio.Writer
	off     uint64 // the length of the file so far
	entries []packEntry
	have    map[plumbing.Hash]bool
	zbuf    bytes.Buffer
	zw      *zlib.Writer
}

type packEntry struct {
	hash plumbing.Hash
	off  uint64 // from the start of the pack file
	crc  uint32 // CRC-32 of the entry as stored, as the index records it
}

// packTempPrefix and idxTempPrefix begin the names of the temporary files
// of a commit's pack and its index: git's "tmp_pack_" and "tmp_idx_", which
// git's own commands pass over (and `git gc` removes once old), then
// "mira_", so that a writer holding the store's lock can remove a killed
// writer's at once (Repo.RemoveLeftovers) without touching git's own.
const (
	packTempPrefix = "tmp_pack_mira_"
	idxTempPrefix  = "tmp_idx_mira_"
)

// packHeaderSize is the length of "PACK", the version and the count.
const packHeaderSize = 12

// add appends one object unless the pack holds it already.
func (p *packBuilder) add(h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	if p.have[h] {
		return nil
	}
	if err := encodeEntry(&p.zbuf, &p.zw, t, data); err != nil {
		return err
	}
	return p.addEncoded(h, p.zbuf.Bytes(), crc32.ChecksumIEEE(p.zbuf.Bytes()))
}

// encodeEntry puts the pack entry of an object, its header and its
// compressed bytes, in buf, with the compressor *zw (made on first use).
func encodeEntry(buf *bytes.Buffer, zw **zlib.Writer, t plumbing.ObjectType, data []byte) error {
	// The entry's header: the type in bits 4–6 of the first byte, the
	// inflated size in its low 4 bits and then 7 bits a byte, each byte
	// but the last with its high bit set.
	buf.Reset()
	size := uint64(len(data))
	c := byte(t)<<4 | byte(size&0x0f)
	size >>= 4
	for size != 0 {
		buf.WriteByte(c | 0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	buf.WriteByte(c)
	// Speed over size, as for loose objects; Repack compresses properly.
	if *zw == nil {
		w, err := zlib.NewWriterLevel(buf, zlib.BestSpeed)
		if err != nil {
			return err
		}
		*zw = w
	} else {
		(*zw).Reset(buf)
	}
	if _, err := (*zw).Write(data); err != nil {
		return err
	}
	return (*zw).Close()
}

// addEncoded appends an entry encodeEntry made, whose CRC-32 is crc,
// unless the pack holds its object already.
func (p *packBuilder) addEncoded(h plumbing.Hash, entry []byte, crc uint32) error {
	if p.have[h] {
		return nil
	}
	if p.f == nil {
		if err := os.MkdirAll(p.dir, 0o700); err != nil {
			return err
		}
		f, err := os.CreateTemp(p.dir, packTempPrefix)
		if err != nil {
			return err
		}
		p.f, p.w = f, bufio.NewWriterSize(f, 256<<10)
		// The count is filled in by write, once it is known.
		if _, err := p.w.Write(make([]byte, packHeaderSize)); err != nil {
			return err
		}
		p.off = packHeaderSize
		if p.have == nil {
			p.have = make(map[plumbing.Hash]bool)
		}
	}
	if _, err := p.w.Write(entry); err != nil {
		return err
	}
	p.entries = append(p.entries, packEntry{hash: h, off: p.off, crc: crc})
	p.off += uint64(len(entry))
	p.have[h] = true
	return nil
}

// abort removes the temporary file of a pack that is not written.
func (p *packBuilder) abort() {
	if p.f != nil {
		p.f.Close()
		os.Remove(p.f.Name())
		p.f = nil
	}
}

// write completes the pack (its header, then its checksum, read back from
// the file), syncs it, writes its index and installs both under
// objects/pack; it returns the pack's name. A failure leaves no file
// behind.
func (p *packBuilder) write() (string, error) {
	defer p.abort()
	p.have = nil // a million entries' map, not needed to finish the pack
	pf := p.f
	err := p.w.Flush()
	var hdr [packHeaderSize]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(p.entries)))
	if err == nil {
		_, err = pf.WriteAt(hdr[:], 0)
	}
	var packHash plumbing.Hash
	if err == nil {
		_, err = pf.Seek(0, io.SeekStart)
	}
	if err == nil {
		sum := sha1.New()
		_, err = io.Copy(sum, bufio.NewReaderSize(pf, 256<<10))
		copy(packHash[:], sum.Sum(nil))
	}
	if err == nil {
		_, err = pf.Write(packHash[:]) // the offset is the end after the copy
	}
	if err == nil {
		err = pf.Sync()
	}
	if err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	iw := new(idxfile.Writer)
	iw.OnHeader(uint32(len(p.entries)))
	for _, e := range p.entries {
		iw.Add(e.hash, e.off, e.crc)
	}
	if err := iw.OnFooter(packHash); err != nil {
		return "", fmt.Errorf("index pack: %w", err)
	}
	idx, err := iw.Index()
	if err != nil {
		return "", fmt.Errorf("index pack: %w", err)
	}
	xf, err := writeIndexTemp(p.dir, idxTempPrefix, idx)
	if err != nil {
		return "", err
	}
	defer xf.Close()
	name, err := installPack(p.dir, pf, xf, packHash)
	if err != nil {
		os.Remove(xf.Name())
		return "", err
	}
	p.f = nil // installed: abort leaves it
	return name, nil
}

// savePack writes a pack under objects/pack: body writes the pack file
// and returns its checksum, index computes its index. Both files are
// written under temporary names and synced, then installed (installPack);
// a failure leaves no file behind.
func savePack(objects string, body func(io.Writer) (plumbing.Hash, error), index func(pf *os.File, sum plumbing.Hash) (*idxfile.MemoryIndex, error)) (string, error) {
	dir := filepath.Join(objects, "pack")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	var tmps []string
	defer func() {
		for _, t := range tmps {
			os.Remove(t)
		}
	}()
	pf, err := os.CreateTemp(dir, "tmp_pack_")
	if err != nil {
		return "", err
	}
	defer pf.Close()
	tmps = append(tmps, pf.Name())
	bw := bufio.NewWriterSize(pf, 256<<10)
	sum, err := body(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = pf.Sync()
	}
	if err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	idx, err := index(pf, sum)
	if err != nil {
		return "", fmt.Errorf("index pack: %w", err)
	}
	xf, err := writeIndexTemp(dir, "tmp_idx_", idx)
	if err != nil {
		return "", err
	}
	defer xf.Close()
	tmps = append(tmps, xf.Name())
	name, err := installPack(dir, pf, xf, sum)
	if err == nil {
		tmps = nil
	}
	return name, err
}

// writeIndexTemp writes a pack index to a synced temporary file in dir,
// its name beginning with prefix, and returns the file, open; the caller
// installs it or removes it.
func writeIndexTemp(dir, prefix string, idx *idxfile.MemoryIndex) (*os.File, error) {
	xf, err := os.CreateTemp(dir, prefix)
	if err != nil {
		return nil, err
	}
	xw := bufio.NewWriter(xf)
	_, err = idxfile.NewEncoder(xw).Encode(idx)
	if err == nil {
		err = xw.Flush()
	}
	if err == nil {
		err = xf.Sync()
	}
	if err != nil {
		xf.Close()
		os.Remove(xf.Name())
		return nil, fmt.Errorf("write pack index: %w", err)
	}
	return xf, nil
}

// installPack makes a written pack and its index read-only and renames
// them into place: the index first, since git finds packs by their .idx
// and ignores one whose .pack is missing, while go-git finds them by their
// .pack and needs the .idx at that moment. Either order of discovery then
// sees a complete pair. A pack of the same name (the same objects in the
// same order) that is already complete is kept.
func installPack(dir string, pf, xf *os.File, sum plumbing.Hash) (string, error) {
	for _, f := range []*os.File{pf, xf} {
		if err := f.Chmod(0o400); err != nil {
			return "", err
		}
		if err := f.Close(); err != nil {
			return "", err
		}
	}
	name := "pack-" + sum.String()
	base := filepath.Join(dir, name)
	if _, err := os.Stat(base + ".pack"); err == nil {
		if _, err := os.Stat(base + ".idx"); err == nil {
			os.Remove(pf.Name())
			os.Remove(xf.Name())
			return name, nil
		}
	}
	if err := os.Rename(xf.Name(), base+".idx"); err != nil {
		return "", err
	}
	if err := os.Rename(pf.Name(), base+".pack"); err != nil {
		os.Remove(base + ".idx")
		return "", err
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return "", err
	}
	return name, nil
}
