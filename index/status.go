package index

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

// Status describes the index as it is on disk.
type Status struct {
	Entries    int       `json:"entries"`     // documents in the index
	Broken     int       `json:"broken"`      // entry files skipped because they could not be loaded
	Built      time.Time `json:"built"`       // when the generation was built
	Updated    time.Time `json:"updated"`     // its last update (zero: none since the build)
	Stale      int       `json:"stale"`       // files whose indexed state differs from the disk
	Commit     string    `json:"commit"`      // the commit the index is up to date with
	Head       string    `json:"head"`        // the store's current commit
	Version    int       `json:"version"`     // FormatVersion of the generation
	Embedder   string    `json:"embedder"`    // ID of the embedder of its vectors
	Dim        int       `json:"dim"`         // length of the vectors
	Vectors    int       `json:"vectors"`     // documents with a vector
	Pending    int       `json:"pending"`     // documents whose embedding failed, to be tried again
	FitDocs    int       `json:"fit_docs"`    // texts the built-in model was fitted on (0: no model)
	Size       int64     `json:"size"`        // bytes on disk
	Generation string    `json:"generation"`  // the generation's directory
	Watcher    bool      `json:"watcher"`     // a watcher holds a fresh lease
	WatcherPID int       `json:"watcher_pid"` // its process, when there is one
}

// Status reads the index's meta and runs a stat pass to count the files
// the index does not reflect (racy time stamps aside): changed, new or
// removed on disk, or changed by commits since the indexed one.
func (ix *Index) Status() (Status, error) {
	m, err := readMeta(ix.gen)
	if err != nil {
		return Status{}, fmt.Errorf("index status: %w", err)
	}
	man, err := readManifest(ix.gen)
	if err != nil {
		return Status{}, fmt.Errorf("index status: %w", err)
	}
	head, err := ix.src.Head()
	if err != nil {
		return Status{}, fmt.Errorf("index status: read the store's head: %w", err)
	}
	pr := ix.probe(true)
	if pr.err != nil {
		return Status{}, fmt.Errorf("index status: %w", pr.err)
	}
	ch, err := ix.plan(m, man, head, pr, false)
	if err != nil {
		return Status{}, fmt.Errorf("index status: %w", err)
	}
	st := Status{
		Entries:    m.Docs,
		Broken:     m.Broken,
		Built:      m.BuiltAt,
		Updated:    m.UpdatedAt,
		Stale:      len(ch.load) + len(ch.remove),
		Commit:     m.Commit,
		Head:       head,
		Version:    m.Version,
		Embedder:   m.Embedder,
		Dim:        m.Dim,
		Vectors:    m.Vectors,
		Pending:    m.Pending,
		FitDocs:    m.FitDocs,
		Generation: filepath.Base(ix.gen),
	}
	if l, ok := readLease(ix.dir); ok {
		st.Watcher, st.WatcherPID = true, l.PID
	}
	err = filepath.WalkDir(ix.gen, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // files come and go under a live index
		}
		if fi, err := d.Info(); err == nil && !d.IsDir() {
			st.Size += fi.Size()
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("index status: %w", err)
	}
	return st, nil
}
