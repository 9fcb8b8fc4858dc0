package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
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
