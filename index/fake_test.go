package index

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSource is a store over a temporary directory with a trivial file
// format of its own and a commit log kept in memory:
//
//	key: value        (id, kind, scope, project, role, tags: a,b, from: a,b, created: RFC 3339)
//	---
//	body
type fakeSource struct {
	root    string
	loads   atomic.Int64
	mu      sync.Mutex
	loaded  []string
	commits []fakeCommit
}

type fakeCommit struct {
	hash  string
	paths []string
}

func newFake(t testing.TB) *fakeSource {
	t.Helper()
	return &fakeSource{root: t.TempDir()}
}

func (f *fakeSource) Root() string { return f.root }

func (f *fakeSource) Head() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.commits) == 0 {
		return "", nil
	}
	return f.commits[len(f.commits)-1].hash, nil
}

func (f *fakeSource) Diff(from, to string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if from == "" {
		var all []string
		st, err := StatFiles(f.root)
		for _, s := range st {
			all = append(all, s.Path)
		}
		return all, err
	}
	var out []string
	in := false
	for _, c := range f.commits {
		if in {
			out = append(out, c.paths...)
		}
		if c.hash == from {
			in = true
		}
		if c.hash == to {
			break
		}
	}
	if !in {
		return nil, fmt.Errorf("unknown commit %s", from)
	}
	return out, nil
}

func (f *fakeSource) Stat() ([]FileStat, error) { return StatFiles(f.root) }

func (f *fakeSource) Load(path string) (Doc, error) {
	f.loads.Add(1)
	f.mu.Lock()
	f.loaded = append(f.loaded, path)
	f.mu.Unlock()
	b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(path)))
	if err != nil {
		return Doc{}, err
	}
	head, body, ok := strings.Cut(string(b), "---\n")
	if !ok {
		return Doc{}, errors.New("no --- line")
	}
	d := Doc{Path: path, Text: body, Hash: fakeHash(body)}
	for _, line := range strings.Split(strings.TrimSpace(head), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "id":
			d.ID = v
		case "kind":
			d.Kind = v
		case "scope":
			d.Scope = v
		case "project":
			d.Project = v
		case "role":
			d.Role = v
		case "pin":
			d.Pin = v
		case "context":
			d.Context = v
		case "tags":
			d.Tags = strings.Split(v, ",")
		case "from":
			d.From = strings.Split(v, ",")
		case "created":
			d.CreatedAt, err = time.Parse(time.RFC3339, v)
			if err != nil {
				return Doc{}, fmt.Errorf("created: %w", err)
			}
		}
	}
	return d, nil
}

// fakeHash is the fake store's Doc.Hash: the text itself, trimmed.
func fakeHash(body string) string { return "h:" + strings.TrimSpace(body) }

// resetLoads forgets the Load calls so far.
func (f *fakeSource) resetLoads() {
	f.loads.Store(0)
	f.mu.Lock()
	f.loaded = nil
	f.mu.Unlock()
}

// loadedPaths lists the paths loaded since the last reset, sorted.
func (f *fakeSource) loadedPaths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := slices.Clone(f.loaded)
	slices.Sort(out)
	return out
}

// commit records a commit of the given paths and makes it the head.
func (f *fakeSource) commit(paths ...string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := fmt.Sprintf("c%03d", len(f.commits)+1)
	f.commits = append(f.commits, fakeCommit{hash: h, paths: paths})
	return h
}

// fdoc is a test entry.
type fdoc struct {
	id, kind, scope, project string
	pin                      string
	tags                     []string
	from                     []string // Doc.From
	created                  time.Time
	text                     string
	context                  string // Doc.Context, on one line
}

func (d fdoc) path() string {
	scope := cmpOr(d.scope, "global")
	kind := cmpOr(d.kind, "note")
	return fmt.Sprintf("entries/%s/%ss/%s__%s.md", scope, kind, d.created.UTC().Format("20060102T150405Z"), d.id)
}

func (d fdoc) encode() string {
	var b strings.Builder
	fmt.Fprintf(&b, "id: %s\nkind: %s\nscope: %s\n", d.id, cmpOr(d.kind, "note"), cmpOr(d.scope, "global"))
	if d.project != "" {
		fmt.Fprintf(&b, "project: %s\n", d.project)
	}
	if d.pin != "" {
		fmt.Fprintf(&b, "pin: %s\n", d.pin)
	}
	if len(d.tags) > 0 {
		fmt.Fprintf(&b, "tags: %s\n", strings.Join(d.tags, ","))
	}
	if d.context != "" {
		fmt.Fprintf(&b, "context: %s\n", strings.ReplaceAll(d.context, "\n", " "))
	}
	if len(d.from) > 0 {
		fmt.Fprintf(&b, "from: %s\n", strings.Join(d.from, ","))
	}
	fmt.Fprintf(&b, "created: %s\n---\n%s\n", d.created.UTC().Format(time.RFC3339Nano), d.text)
	return b.String()
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// oldTime is the modification time test files get unless a test wants
// otherwise: far enough in the past that they are not racy.
var oldTime = time.Now().Add(-time.Hour)

// writeDoc writes an entry file and returns its path.
func (f *fakeSource) writeDoc(t testing.TB, d fdoc) string {
	t.Helper()
	p := d.path()
	f.writeFile(t, p, d.encode(), oldTime)
	return p
}

// writeNotes writes n entries created at t0, with ids prefix0, prefix1, …
// and texts "note 0 about <about>", "note 1 about <about>", ….
func (f *fakeSource) writeNotes(t testing.TB, n int, prefix, about string) {
	t.Helper()
	for i := range n {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("%s%d", prefix, i), created: t0, text: fmt.Sprintf("note %d about %s", i, about)})
	}
}

// keptNotes is a fake store of n notes (see writeNotes) and options
// whose Index is kept in a Keep of their own.
func keptNotes(t testing.TB, n int, prefix, about string) (*fakeSource, Options, *Keep) {
	t.Helper()
	f := newFake(t)
	f.writeNotes(t, n, prefix, about)
	o := opts(nil)
	o.Keep = new(Keep)
	return f, o, o.Keep
}

// churn makes one of three changes to the files, by step: a new entry
// whose text is added (step%3 == 0), an edit of paths[1], the entry id,
// to the text changed (1), or the removal of the newest file (2). It
// returns the paths of the entries after it.
func (f *fakeSource) churn(t testing.TB, paths []string, step int, id, added, changed string) []string {
	t.Helper()
	switch step % 3 {
	case 0:
		paths = append(paths, f.writeDoc(t, fdoc{id: fmt.Sprintf("N%d", step), created: t0.Add(time.Hour), text: added}))
	case 1:
		f.writeFile(t, paths[1], fdoc{id: id, created: t0.Add(time.Minute), text: changed}.encode(), oldTime.Add(time.Duration(step)*time.Minute))
	case 2:
		f.remove(t, paths[len(paths)-1])
		paths = paths[:len(paths)-1]
	}
	return paths
}

// writeFile writes a file under the root with the given modification time.
func (f *fakeSource) writeFile(t testing.TB, rel, content string, mtime time.Time) {
	t.Helper()
	full := filepath.Join(f.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(full, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func (f *fakeSource) remove(t testing.TB, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(f.root, filepath.FromSlash(rel))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// vocabulary is a fixed list of made-up words for generated corpora.
var vocabulary = func() []string {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	words := make([]string, 5000)
	for i := range words {
		n := 3 + r.IntN(7)
		b := make([]byte, n)
		for j := range b {
			b[j] = letters[r.IntN(len(letters))]
		}
		words[i] = string(b)
	}
	return words
}()

// generate writes n entries with Zipf-distributed words, spread over a few
// scopes and kinds, one month of creation times, like a store that has
// been used for a while.
func generate(t testing.TB, f *fakeSource, n int) {
	t.Helper()
	generateEach(t, f, n, nil)
}

// generateEach is generate with each entry given to each, when not nil,
// before it is written.
func generateEach(t testing.TB, f *fakeSource, n int, each func(*fdoc)) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.1, 2, uint64(len(vocabulary)-1))
	kinds := []string{"fact", "decision", "note", "preference", "turn"}
	scopes := []string{"global", "shop", "mira", "blog"}
	base := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	var words []string
	for i := range n {
		words = words[:0]
		for range 20 + r.IntN(60) {
			words = append(words, vocabulary[z.Uint64()])
		}
		d := fdoc{
			id:      fmt.Sprintf("G%07d", i),
			kind:    kinds[r.IntN(len(kinds))],
			scope:   scopes[r.IntN(len(scopes))],
			tags:    []string{vocabulary[r.IntN(50)]},
			created: base.Add(time.Duration(r.Int64N(int64(30 * 24 * time.Hour)))),
			text:    strings.Join(words, " "),
		}
		if each != nil {
			each(&d)
		}
		f.writeDoc(t, d)
	}
}
