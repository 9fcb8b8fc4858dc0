package gitrepo

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// Blobs records the blobs of one commit as its caller writes the files,
// so that the commit does not read them back: for each file an open, two
// stats, a read and a close, a fifth of the time of a million-file load.
// The caller writes a file, takes its stat data from the open file after
// the last write (what git would find), and gives both with the content to
// Add; the Change it returns goes to the commit, made by Blobs.Commit.
//
// Add may be called from several goroutines at once: each hashes and
// compresses in its own, only the append to the pack takes turns. A Blobs
// makes one commit; Close throws away what a commit never took.
type Blobs struct {
	r    *Repo
	mu   sync.Mutex
	ow   *objectWriter
	used bool
	work sync.Pool // *blobWork
}

// blobWork is one goroutine's buffer and compressor for a pack entry.
type blobWork struct {
	buf bytes.Buffer
	zw  *zlib.Writer
}

// Blobs starts the blobs of a commit of about n files: from PackMin files
// on they go into one new pack, as Commit's would.
func (r *Repo) Blobs(n int) *Blobs {
	b := &Blobs{r: r, ow: &objectWriter{dir: r.objects}}
	if n >= PackMin {
		b.ow.pack = &packBuilder{dir: filepath.Join(r.objects, "pack"), entries: make([]packEntry, 0, n+n/64+8)}
	}
	return b
}

// Add stores data, the content the caller writes to the work tree's file
// at path (slash-separated, relative to the work tree), as a blob, and
// returns the change that records it, to be completed by Change.Stat once
// the file is written. Only regular files are recorded this way.
func (b *Blobs) Add(path string, data []byte) (Change, error) {
	if err := validPath(path); err != nil {
		return Change{}, err
	}
	h := plumbing.ComputeHash(plumbing.BlobObject, data)
	if b.ow.pack != nil {
		w, _ := b.work.Get().(*blobWork)
		if w == nil {
			w = new(blobWork)
		}
		defer b.work.Put(w)
		if err := encodeEntry(&w.buf, &w.zw, plumbing.BlobObject, data); err != nil {
			return Change{}, fmt.Errorf("write object %s: %w", h, err)
		}
		crc := crc32.ChecksumIEEE(w.buf.Bytes())
		b.mu.Lock()
		err := b.pack(h, w.buf.Bytes(), crc)
		b.mu.Unlock()
		if err != nil {
			return Change{}, err
		}
	} else {
		b.mu.Lock()
		_, err := b.loose(data)
		b.mu.Unlock()
		if err != nil {
			return Change{}, err
		}
	}
	return Change{Path: path, blob: &indexEntry{name: path, hash: h}}, nil
}

// Stat completes a change Blobs.Add returned with fi, the stat data of
// the file as written (taken after the last write, as git would find it).
func (c *Change) Stat(fi fs.FileInfo) error {
	if c.blob == nil {
		return fmt.Errorf("hash %s: no blob written", c.Path)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("hash %s: not a regular file", c.Path)
	}
	c.blob.mode = filemode.Regular
	if fi.Mode()&0o100 != 0 {
		c.blob.mode = filemode.Executable
	}
	fillStat(c.blob, fi)
	return nil
}

func (b *Blobs) pack(h plumbing.Hash, entry []byte, crc uint32) error {
	if b.used {
		return errBlobsUsed
	}
	if err := b.ow.pack.addEncoded(h, entry, crc); err != nil {
		return fmt.Errorf("write object %s: %w", h, err)
	}
	return nil
}

func (b *Blobs) loose(data []byte) (plumbing.Hash, error) {
	if b.used {
		return plumbing.ZeroHash, errBlobsUsed
	}
	return b.ow.write(plumbing.BlobObject, data)
}

var errBlobsUsed = errors.New("blobs already committed or closed")

// Commit is Repo.Commit with the blobs added here: changes holds the
// changes Add returned (their files are not read again) and any others.
func (b *Blobs) Commit(changes []Change, message string, author Signature) (string, error) {
	if len(changes) == 0 {
		return "", ErrNothingToCommit
	}
	ow, err := b.take()
	if err != nil {
		return "", err
	}
	return b.r.commitWith(ow, changes, message, author, nil)
}

// CommitMerge is Repo.CommitMerge with the blobs added here.
func (b *Blobs) CommitMerge(changes []Change, message string, author Signature, others ...string) (string, error) {
	extra, err := mergeParents(others)
	if err != nil {
		return "", err
	}
	if len(extra) == 0 {
		return b.Commit(changes, message, author)
	}
	ow, err := b.take()
	if err != nil {
		return "", err
	}
	return b.r.commitWith(ow, changes, message, author, extra)
}

// take hands the objects written so far to a commit, once.
func (b *Blobs) take() (*objectWriter, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used {
		return nil, errBlobsUsed
	}
	b.used = true
	return b.ow, nil
}

// Close removes what was written for a commit that was never made; after
// a commit, made or failed, it does nothing.
func (b *Blobs) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.used {
		b.used = true
		b.ow.abort()
	}
}
