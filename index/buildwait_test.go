//go:build unix

package index

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// An Open that finds another process building the first index waits for
// that build and uses it, instead of building one of its own beside it: a
// first recall after a large import, tired of waiting for the server it
// started, built a second index at the same time, in twice the memory.
func TestOpenWaitsForAnotherBuild(t *testing.T) {
	f := newFake(t)
	for i, text := range []string{"We chose PostgreSQL for JSONB support", "The office cat is called Mira", "Deploys happen on Tuesdays"} {
		f.writeDoc(t, fdoc{id: string(rune('A' + i)), kind: "note", created: t0.Add(-time.Duration(i+1) * time.Hour), text: text})
	}
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	b := opts(nil)
	b.Progress = func(done, total int) {
		once.Do(func() { close(started); <-release })
	}
	built := make(chan error, 1)
	go func() { _, err := Rebuild(f, b); built <- err }()
	<-started

	waiting := make(chan struct{})
	var wonce sync.Once
	o := opts(nil)
	o.Warn = func(p string, err error) {
		if strings.Contains(err.Error(), "building the index") {
			wonce.Do(func() { close(waiting) })
		}
	}
	type opened struct {
		ix  *Index
		err error
	}
	done := make(chan opened, 1)
	go func() { ix, err := Open(f, o); done <- opened{ix, err} }()
	var r opened
	select {
	case <-waiting:
		close(release)
		r = <-done
	case r = <-done:
		close(release)
	}
	if err := <-built; err != nil {
		t.Fatalf("Rebuild: %v", err)
	}
	if r.err != nil {
		t.Fatalf("Open: %v", r.err)
	}
	defer r.ix.Close()
	if st := r.ix.LastUpdate(); st.Rebuilt || st.Docs != 3 {
		t.Errorf("Open's LastUpdate() = %+v, want the other build's 3 documents, no rebuild of its own", st)
	}
	gens, _ := filepath.Glob(filepath.Join(f.root, ".index", genPrefix+"*"))
	if len(gens) != 1 {
		t.Errorf("generations %v, want the one build", gens)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".index", "CURRENT")); err != nil {
		t.Error(err)
	}
}
