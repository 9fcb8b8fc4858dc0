package gitrepo

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/miramem/mira/internal/atomicfile"
)

// objectWriter writes the loose objects of one commit durably. Each object
// goes to a temporary file in its fan-out directory; flush syncs all of them
// at once, renames them into place and syncs the directories that received
// the names. A file under an object's name is therefore always complete,
// which matters because an object that exists is never written again.
// Temporary files carry git's "tmp_obj_" prefix, which `git fsck` knows to
// ignore should a killed process leave one behind.
//
// The files are synced a few at a time rather than one after the other so
// the file system can commit them together (on ext4, a commit's six objects
// and their directories took 1.7 ms instead of 2.5 ms). They are closed
// until then, so a commit of thousands of files does not run out of file
// descriptors.
//
// With pack set, the objects are gathered into one new pack instead (see
// PackMin), which flush writes.
type objectWriter struct {
	dir     string                   // .git/objects
	pending map[plumbing.Hash]*loose // written, not yet flushed
	buf     bytes.Buffer
	zw      *zlib.Writer
	pack    *packBuilder
	// dirChanged is set by buildTree when a change removes a directory
	// or puts a file where one was, or the reverse: the paths written
	// are then not all the paths that changed (see appendJournal).
	dirChanged bool
	// changed are the paths of the files buildTree added, changed or
	// removed.
	changed []string
}

// loose is an object in its temporary file.
type loose struct {
	tmp    string
	final  string
	fanout string
	newDir bool // the fan-out directory was created for it
}

func (w *objectWriter) writeTree(t *object.Tree) (plumbing.Hash, error) {
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.TreeObject)
	b, err := encodeTree(t.Entries)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode tree: %w", err)
	}
	obj.Write(b)
	return w.writeEncoded(obj)
}

// encodeTree returns the bytes of a tree of entries, as object.Tree.Encode
// writes them, into one buffer of the right size: Encode formats each
// entry through fmt and grows its buffer as it goes, a second of CPU for
// the 200,000 entries of one directory.
func encodeTree(entries []object.TreeEntry) ([]byte, error) {
	if !sort.IsSorted(object.TreeEntrySorter(entries)) {
		return nil, object.ErrEntriesNotSorted
	}
	size := 0
	for i := range entries {
		size += 7 + 1 + len(entries[i].Name) + 1 + len(entries[i].Hash)
	}
	b := make([]byte, 0, size)
	for i := range entries {
		e := &entries[i]
		if strings.IndexByte(e.Name, 0) >= 0 {
			return nil, fmt.Errorf("malformed filename %q", e.Name)
		}
		b = strconv.AppendUint(b, uint64(e.Mode), 8)
		b = append(b, ' ')
		b = append(b, e.Name...)
		b = append(b, 0)
		b = append(b, e.Hash[:]...)
	}
	return b, nil
}

// writeCommit writes a commit of tree with parents, authored and
// committed by author (cleaned of what git would refuse).
func (w *objectWriter) writeCommit(tree plumbing.Hash, parents []plumbing.Hash, message string, author Signature) (plumbing.Hash, error) {
	sig := cleanSignature(author)
	cm := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree, ParentHashes: parents}
	obj := &plumbing.MemoryObject{}
	if err := cm.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("encode commit: %w", err)
	}
	return w.writeEncoded(obj)
}

func (w *objectWriter) writeEncoded(obj *plumbing.MemoryObject) (plumbing.Hash, error) {
	rd, err := obj.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return w.write(obj.Type(), data)
}

// write stores one object unless a loose copy exists already. Packed copies
// are not looked for: that would load every pack index for objects that are
// almost always new, and a loose duplicate of a packed object is harmless.
func (w *objectWriter) write(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, data)
	if t == plumbing.TreeObject {
		// Written or not, these are the bytes of h.
		cacheTree(h, data)
	}
	if w.pack != nil {
		// The new pack's objects cannot be pruned before the ref moves,
		// and a copy of an object that exists elsewhere is harmless.
		if err := w.pack.add(h, t, data); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("write object %s: %w", h, err)
		}
		return h, nil
	}
	if _, ok := w.pending[h]; ok {
		return h, nil
	}
	hex := h.String()
	fanout := filepath.Join(w.dir, hex[:2])
	final := filepath.Join(fanout, hex[2:])
	// An existing copy may be unreachable and old enough for a `git gc`
	// running meanwhile to prune it before the new commit refers to it.
	// Touching it, as git does, restarts its grace period; if it is gone
	// already, it is written again.
	now := time.Now()
	if err := os.Chtimes(final, now, now); err == nil {
		return h, nil
	}
	tmp, newDir, err := w.writeTemp(fanout, t, data)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write object %s: %w", hex, err)
	}
	if w.pending == nil {
		w.pending = make(map[plumbing.Hash]*loose)
	}
	w.pending[h] = &loose{tmp: tmp, final: final, fanout: fanout, newDir: newDir}
	return h, nil
}

// writeTemp writes the compressed object to a temporary file in its
// fan-out directory and returns the file's path, and whether it created the
// directory.
func (w *objectWriter) writeTemp(fanout string, t plumbing.ObjectType, data []byte) (tmp string, newDir bool, err error) {
	// Loose objects favour speed over size, as git's core.looseCompression
	// default does; Repack compresses them properly. One compressor serves
	// all objects: allocating one costs more than compressing a tree.
	w.buf.Reset()
	if w.zw == nil {
		zw, err := zlib.NewWriterLevel(&w.buf, zlib.BestSpeed)
		if err != nil {
			return "", false, err
		}
		w.zw = zw
	} else {
		w.zw.Reset(&w.buf)
	}
	w.zw.Write([]byte(t.String() + " " + strconv.Itoa(len(data)) + "\x00"))
	w.zw.Write(data)
	if err := w.zw.Close(); err != nil {
		return "", false, err
	}

	// The fan-out directory may be missing, or be removed by a `git gc`
	// that prunes empty ones between our creating it and using it.
	var f *os.File
	for attempt := 0; ; attempt++ {
		f, err = os.CreateTemp(fanout, "tmp_obj_")
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == 3 {
			break
		}
		if err := os.MkdirAll(fanout, 0o700); err != nil {
			return "", false, err
		}
		newDir = true
	}
	if err != nil {
		return "", false, err
	}
	_, err = f.Write(w.buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", false, err
	}
	return f.Name(), newDir, nil
}

// flush makes every pending object durable under its final name, or
// writes the pack.
func (w *objectWriter) flush() error {
	if w.pack != nil {
		if len(w.pack.entries) == 0 {
			return nil
		}
		if _, err := w.pack.write(); err != nil {
			return fmt.Errorf("write pack: %w", err)
		}
		w.pack = &packBuilder{dir: w.pack.dir}
		return nil
	}
	files := make([]func() error, 0, len(w.pending))
	for _, o := range w.pending {
		files = append(files, func() error { return syncReadOnly(o.tmp) })
	}
	if err := parallel(files); err != nil {
		return fmt.Errorf("sync objects: %w", err)
	}
	dirs := make(map[string]bool)
	for h, o := range w.pending {
		if err := os.Rename(o.tmp, o.final); err != nil {
			return fmt.Errorf("write object %s: %w", h, err)
		}
		delete(w.pending, h)
		dirs[o.fanout] = true
		if o.newDir {
			dirs[w.dir] = true
		}
	}
	syncs := make([]func() error, 0, len(dirs))
	for d := range dirs {
		syncs = append(syncs, func() error { return atomicfile.SyncDir(d) })
	}
	return parallel(syncs)
}

// syncReadOnly syncs a file and makes it read-only, as git keeps objects.
func syncReadOnly(name string) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if err == nil {
		err = f.Chmod(0o400)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// abort removes the temporary files of objects that were never flushed.
func (w *objectWriter) abort() {
	if w.pack != nil {
		w.pack.abort()
	}
	for h, o := range w.pending {
		os.Remove(o.tmp)
		delete(w.pending, h)
	}
}

// maxParallel bounds the goroutines parallel starts, and with them the
// open files and the threads blocked in the kernel.
const maxParallel = 16

// parallel runs fns concurrently, at most maxParallel at a time, and joins
// their errors.
func parallel(fns []func() error) error {
	errs := make([]error, len(fns))
	sem := make(chan struct{}, maxParallel)
	var wg sync.WaitGroup
	for i, fn := range fns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn()
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
