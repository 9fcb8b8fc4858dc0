package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Bleve does not check its segment files when it opens them: a zap file
// with other bytes in it can make it allocate terabytes from a length it
// reads there, and the process dies of it (no recover catches that). Every
// zap file ends with the CRC-32 (IEEE, big-endian) of all the bytes before
// it, so verifySegments checks each segment before bleve sees it, under a
// shared lock on root.bolt: while it is held no writer is at work, so the
// files are complete. A file verified once is not read again while its
// size and modification time stay the same.
func verifySegments(bleveDir string, lockTimeout time.Duration) error {
	store := filepath.Join(bleveDir, "store")
	unlock, err := lockShared(filepath.Join(store, "root.bolt"), lockTimeout)
	if errors.Is(err, errBusy) {
		return errBusy
	}
	if err != nil {
		return damaged("open bleve index: %w", err)
	}
	defer unlock()
	if err := checkBolt(filepath.Join(store, "root.bolt")); err != nil {
		return damaged("root.bolt: %w", err)
	}
	ents, err := os.ReadDir(store)
	if err != nil {
		return damaged("open bleve index: %w", err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".zap") {
			continue
		}
		p := filepath.Join(store, e.Name())
		fi, err := e.Info()
		if err != nil {
			continue // merged away meanwhile
		}
		key := verified{p, fi.Size(), fi.ModTime()}
		if _, ok := verifiedSegments.Load(key); ok {
			continue
		}
		if err := checkSegment(p); err != nil {
			return damaged("segment %s: %w", e.Name(), err)
		}
		verifiedSegments.Store(key, true)
	}
	return nil
}

type verified struct {
	path  string
	size  int64
	mtime time.Time
}

var verifiedSegments sync.Map

// checkSegment compares a zap file's CRC with the one in its last bytes.
func checkSegment(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	n := fi.Size()
	if n < 36 { // the smallest footer
		return fmt.Errorf("%d bytes: too short for a segment", n)
	}
	h := crc32.NewIEEE()
	if _, err := io.CopyN(h, f, n-4); err != nil {
		return err
	}
	var tail [4]byte
	if _, err := io.ReadFull(f, tail[:]); err != nil {
		return err
	}
	if want := binary.BigEndian.Uint32(tail[:]); h.Sum32() != want {
		return fmt.Errorf("checksum %08x, want %08x", h.Sum32(), want)
	}
	return nil
}

// checkBolt checks what bbolt does not before it maps a file: that one of
// its two meta pages is whole (magic, version, checksum) and that the file
// holds every page the newest of them counts. A file cut short would
// otherwise be mapped past its end, and reading there kills the process
// (SIGBUS, which no recover catches); bbolt asserts on the rest, which
// safely turns into damage.
func checkBolt(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	const (
		pageHeader = 16
		boltMagic  = 0xED0CDAED
		boltFormat = 2
		sumAt      = 56 // magic, version, page size, flags, root bucket (16), freelist, high water, txid
	)
	type boltMeta struct {
		pageSize  uint32
		highWater uint64
		txid      uint64
	}
	read := func(off int64) (boltMeta, bool) {
		var b [pageHeader + sumAt + 8]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			return boltMeta{}, false
		}
		m := b[pageHeader:]
		le := binary.LittleEndian
		if le.Uint32(m[0:]) != boltMagic || le.Uint32(m[4:]) != boltFormat {
			return boltMeta{}, false
		}
		h := fnv.New64a()
		h.Write(m[:sumAt])
		if h.Sum64() != le.Uint64(m[sumAt:]) {
			return boltMeta{}, false
		}
		return boltMeta{pageSize: le.Uint32(m[8:]), highWater: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, true
	}
	m0, ok0 := read(0)
	second := int64(os.Getpagesize())
	if ok0 {
		second = int64(m0.pageSize)
	}
	m1, ok1 := read(second)
	var m boltMeta
	switch {
	case ok0 && ok1:
		m = m0
		if m1.txid > m0.txid {
			m = m1
		}
	case ok0:
		m = m0
	case ok1:
		m = m1
	default:
		return fmt.Errorf("%d bytes, no valid meta page", fi.Size())
	}
	if m.pageSize < 512 || m.pageSize > 1<<20 {
		return fmt.Errorf("page size %d", m.pageSize)
	}
	if need := int64(m.highWater) * int64(m.pageSize); m.highWater > 1<<40 || need > fi.Size() {
		return fmt.Errorf("cut short: %d bytes, its %d pages need %d", fi.Size(), m.highWater, need)
	}
	return nil
}
