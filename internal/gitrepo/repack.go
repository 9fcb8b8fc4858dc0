package gitrepo

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// MaxPacks is the number of packs at which Repack stops adding a pack for
// the loose objects and packs everything into one instead: lookups of
// objects scan pack indexes one after the other, so their number must stay
// small, while rewriting all objects on every repack would cost time in
// proportion to the whole history.
const MaxPacks = 8

// staleTempAge is the age after which Repack deletes temporary object and
// pack files: no writer takes that long to finish one, so its writer was
// killed.
const staleTempAge = time.Hour

// packWindow is how many objects the delta search compares each object
// with; it is git's pack.window default.
const packWindow = 10

// LooseObjectCount returns the number of loose objects, so callers can decide
// when Repack is worth running. It reads the 256 fan-out directories and
// nothing else.
func (r *Repo) LooseObjectCount() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	err := r.forEachLoose(func(plumbing.Hash) { n++ }, nil)
	if err != nil {
		return 0, fmt.Errorf("count loose objects: %w", err)
	}
	return n, nil
}

// PackCount returns the number of packs Repack may merge (those without
// a .keep file).
func (r *Repo) PackCount() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	packs, err := r.packs()
	if err != nil {
		return 0, fmt.Errorf("count packs: %w", err)
	}
	return len(packs), nil
}

// Repack moves the loose objects into a pack, as `git repack -d` does
// (go-git writes loose objects and never packs them). Once there are
// MaxPacks packs it folds them into one with the loose objects and deletes
// them; packs marked with a .keep file stay, and so do the largest ones
// while each is at least twice the size of all smaller ones together (see
// foldable), so that a store's big old pack is not rewritten each time a
// few small ones have piled up.
//
// Nothing is ever dropped, reachable or not: objects referenced only by the
// index, a reflog or a stash are as safe as those in the history, so `git
// fsck` stays clean whatever other tools did. A pack is complete and synced
// under its final name before any loose object or old pack is deleted. It
// must not run at the same time as Commit; readers may run meanwhile.
func (r *Repo) Repack() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	// Packs written by other processes since the storage first looked
	// must be known to the encoder that reads the objects.
	r.storage.Reindex()
	defer r.storage.Reindex()
	var loose []plumbing.Hash
	removeOld := func(path string) {
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > staleTempAge {
			os.Remove(path)
		}
	}
	if err := r.forEachLoose(func(h plumbing.Hash) { loose = append(loose, h) }, removeOld); err != nil {
		return fmt.Errorf("repack: %w", err)
	}
	packs, err := r.packs()
	if err != nil {
		return fmt.Errorf("repack: %w", err)
	}
	full := len(packs) >= MaxPacks
	if len(loose) == 0 && !full {
		return nil
	}

	hashes := loose
	if full {
		if packs, err = r.foldable(packs); err != nil {
			return fmt.Errorf("repack: %w", err)
		}
		seen := make(map[plumbing.Hash]bool, len(loose))
		for _, h := range loose {
			seen[h] = true
		}
		for _, p := range packs {
			err := r.packHashes(p, func(h plumbing.Hash) {
				if !seen[h] {
					seen[h] = true
					hashes = append(hashes, h)
				}
			})
			if err != nil {
				return fmt.Errorf("repack: %w", err)
			}
		}
	}

	name, err := r.writePack(hashes)
	if err != nil {
		return fmt.Errorf("repack: %w", err)
	}

	for _, h := range loose {
		hex := h.String()
		if err := os.Remove(filepath.Join(r.objects, hex[:2], hex[2:])); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("repack: remove packed loose object: %w", err)
		}
	}
	r.removeEmptyFanouts()
	r.removeOldPackTemps()

	if full {
		for _, p := range packs {
			if p != name {
				if err := r.removePack(p); err != nil {
					return fmt.Errorf("repack: %w", err)
				}
			}
		}
	}
	return nil
}

// foldable returns the packs a folding repack rewrites: all of them but
// the largest, as long as each of those is at least twice the size of all
// the smaller ones together, as git's geometric repacking keeps them. Every
// rewrite then costs at most about what was added since the last one, and
// the packs kept grow geometrically, so they stay few. When keeping them
// would leave MaxPacks packs or more after the fold, all are folded.
func (r *Repo) foldable(packs []string) ([]string, error) {
	type sized struct {
		name string
		size int64
	}
	ps := make([]sized, len(packs))
	var total int64
	for i, p := range packs {
		fi, err := os.Stat(filepath.Join(r.objects, "pack", p+".pack"))
		if err != nil {
			return nil, err
		}
		ps[i] = sized{p, fi.Size()}
		total += fi.Size()
	}
	slices.SortFunc(ps, func(a, b sized) int { return cmp.Compare(b.size, a.size) })
	keep := 0
	rest := total
	for keep < len(ps) {
		rest -= ps[keep].size
		if ps[keep].size < 2*rest {
			break
		}
		keep++
	}
	if keep == len(ps) {
		keep-- // something is always folded: the smallest
	}
	if keep+1 >= MaxPacks {
		keep = 0
	}
	fold := make([]string, 0, len(ps)-keep)
	for _, p := range ps[keep:] {
		fold = append(fold, p.name)
	}
	return fold, nil
}

// forEachLoose calls fn with the hash of every loose object, and temp, if
// not nil, with the path of every temporary file of an object writer.
func (r *Repo) forEachLoose(fn func(plumbing.Hash), temp func(path string)) error {
	dirs, err := os.ReadDir(r.objects)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 {
			continue
		}
		if _, ok := parseHash(d.Name() + strings.Repeat("0", 38)); !ok {
			continue
		}
		files, err := os.ReadDir(filepath.Join(r.objects, d.Name()))
		if err != nil {
			return err
		}
		for _, f := range files {
			if h, ok := parseHash(d.Name() + f.Name()); ok {
				fn(h)
			} else if temp != nil && strings.HasPrefix(f.Name(), "tmp_obj_") {
				temp(filepath.Join(r.objects, d.Name(), f.Name()))
			}
		}
	}
	return nil
}

// removeEmptyFanouts removes fan-out directories left empty; a directory
// that is not empty, or that a writer has just filled again, stays.
func (r *Repo) removeEmptyFanouts() {
	dirs, err := os.ReadDir(r.objects)
	if err != nil {
		return
	}
	for _, d := range dirs {
		if d.IsDir() && len(d.Name()) == 2 {
			os.Remove(filepath.Join(r.objects, d.Name()))
		}
	}
}

// removeOldPackTemps deletes temporary pack files that a killed Repack or
// git command left behind.
func (r *Repo) removeOldPackTemps() {
	dir := filepath.Join(r.objects, "pack")
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if !strings.HasPrefix(f.Name(), "tmp_") {
			continue
		}
		if fi, err := f.Info(); err == nil && time.Since(fi.ModTime()) > staleTempAge {
			os.Remove(filepath.Join(dir, f.Name()))
		}
	}
}

// packs returns the names ("pack-<hash>") of the packs that have both
// files and no .keep file.
func (r *Repo) packs() ([]string, error) {
	dir := filepath.Join(r.objects, "pack")
	files, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(files))
	for _, f := range files {
		have[f.Name()] = true
	}
	var out []string
	for _, f := range files {
		base, ok := strings.CutSuffix(f.Name(), ".idx")
		if !ok || !strings.HasPrefix(base, "pack-") || !have[base+".pack"] || have[base+".keep"] {
			continue
		}
		out = append(out, base)
	}
	return out, nil
}

// packHashes calls fn with every object name in a pack's index.
func (r *Repo) packHashes(pack string, fn func(plumbing.Hash)) error {
	f, err := os.Open(filepath.Join(r.objects, "pack", pack+".idx"))
	if err != nil {
		return err
	}
	defer f.Close()
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(f).Decode(idx); err != nil {
		return fmt.Errorf("read %s.idx: %w", pack, err)
	}
	it, err := idx.Entries()
	if err != nil {
		return err
	}
	defer it.Close()
	for {
		e, err := it.Next()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("read %s.idx: %w", pack, err)
		}
		fn(e.Hash)
	}
}

// writePack writes the objects into a new pack with its index and returns
// the pack's name (see savePack).
func (r *Repo) writePack(hashes []plumbing.Hash) (string, error) {
	return savePack(r.objects, func(w io.Writer) (plumbing.Hash, error) {
		return packfile.NewEncoder(w, r.storage, false).Encode(hashes, packWindow)
	}, func(pf *os.File, _ plumbing.Hash) (*idxfile.MemoryIndex, error) {
		// The index is computed from the pack as written, which also
		// checks that the pack reads back.
		if _, err := pf.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		iw := new(idxfile.Writer)
		parser, err := packfile.NewParser(packfile.NewScanner(pf), iw)
		if err != nil {
			return nil, err
		}
		if _, err := parser.Parse(); err != nil {
			return nil, err
		}
		return iw.Index()
	})
}

// removePack deletes every file of a pack: the .pack first, so go-git
// readers stop seeing it before its index goes, then the rest (.idx, and a
// .rev or .bitmap git may have written next to it).
func (r *Repo) removePack(name string) error {
	dir := filepath.Join(r.objects, "pack")
	if err := os.Remove(filepath.Join(dir, name+".pack")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if strings.HasPrefix(f.Name(), name+".") {
			if err := os.Remove(filepath.Join(dir, f.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
