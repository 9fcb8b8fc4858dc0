//go:build unix

package index

import (
	"context"
	"errors"
	"fmt"
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

// A rebuild keeps its vectors in a spill file while it embeds, removed as
// soon as it is made: a build killed while it embeds leaves no spill
// behind, and one stopped there (its context cancelled) leaves the index
// it was to replace as it was.
func TestRebuildStoppedWhileEmbedding(t *testing.T) {
	f := newFake(t)
	for i := range 2 * MinFitDocs {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("D%04d", i), created: t0.Add(-time.Duration(i) * time.Minute),
			text: fmt.Sprintf("note %d about the deploy of service %d and its cache", i, i%7)})
	}
	first, err := Rebuild(f, opts(nil))
	if err != nil || first.Docs != 2*MinFitDocs {
		t.Fatalf("first Rebuild = %+v, %v", first, err)
	}
	dir := filepath.Join(f.root, ".index")
	cur, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := opts(nil)
	o.Context = ctx
	var (
		loaded  bool
		spilled []string
		checked bool
	)
	o.Progress = func(done, total int) {
		switch {
		case !loaded:
			loaded = done == total && total > 0
		case done == 0:
			// The embedding begins: its spill file exists, unlinked.
			// (The manifest is written meanwhile, through a temporary
			// file of its own that may or may not be there yet.)
			spilled, _ = filepath.Glob(filepath.Join(dir, genPrefix+"*", ".vectors.*.tmp"))
			checked = true
			cancel()
		}
	}
	if _, err := Rebuild(f, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("Rebuild stopped while embedding: %v, want context.Canceled", err)
	}
	if !checked {
		t.Fatal("the rebuild never reached its embedding")
	}
	if len(spilled) != 0 {
		t.Errorf("files a kill would leave while embedding: %v", spilled)
	}
	gens, _ := filepath.Glob(filepath.Join(dir, genPrefix+"*"))
	if len(gens) != 1 || filepath.Base(gens[0]) != strings.TrimSpace(string(cur)) {
		t.Errorf("generations after the stopped build %v, want only %s", gens, cur)
	}
	now, _ := os.ReadFile(filepath.Join(dir, "CURRENT"))
	if string(now) != string(cur) {
		t.Errorf("CURRENT = %q, want %q", now, cur)
	}
	ix := mustOpen(t, f, opts(nil))
	if st := ix.LastUpdate(); st.Rebuilt || st.Docs != 2*MinFitDocs {
		t.Errorf("Open after the stopped build: %+v, want the first index as it was", st)
	}
}
