package index

import (
	"fmt"
	"os"
	"path/filepath"
)

// Finder answers a writer's lookups (which file holds an id, which files
// hold a text) from the rows of the current generation's vector store
// alone. It takes no lock: a base file never
// changes once written and its log is only appended to, so the meta and
// then the files it names give one consistent state, and a writer beside a
// server that is busy updating the index does not wait for it. What was
// committed after Commit is not in it; the caller looks at that itself.
type Finder struct {
	commit string
	rows   []vecRow // the rows, dead ones too; they never change
	// The first few lookups scan the rows (a fraction of a millisecond at
	// 100,000); later ones, as in a load of many entries, use maps built
	// at the scanLimit'th.
	idLookups, hashLookups int
	byID                   map[string]int32
	byHash                 map[docHash][]int32
}

// scanLimit is the number of lookups of one kind answered by a scan.
const scanLimit = 8

// OpenFinder reads the rows of the index under dir (a store's .index, or
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
		if rows := keptRows(genDir, m); rows != nil {
			return &Finder{commit: m.Commit, rows: rows}, nil
		}
		vs, err := loadVecStore(genDir, m, true)
		if err != nil {
			last = err
			continue
		}
		return &Finder{commit: m.Commit, rows: vs.rows}, nil
	}
	return nil, last
}

// Commit returns the commit the rows are up to date with.
func (f *Finder) Commit() string { return f.commit }

// PathOf returns the path of the live entry with the given id.
func (f *Finder) PathOf(id string) (string, error) {
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
