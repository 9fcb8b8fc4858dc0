package code

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/miramem/mira/code/parse"
	"github.com/miramem/mira/code/rank"
	"github.com/miramem/mira/internal/cputime"
	"github.com/miramem/mira/internal/paths"
)

// Index is an open code index. Its methods are safe for concurrent use;
// queries answer from what the last Open or Update loaded and say which
// files changed since (Status.Stale, Card.Stale, FileHit.Stale).
type Index struct {
	opt  Options
	root string // absolute, symbolic links resolved
	dir  string // absolute

	upd sync.Mutex // one Update at a time in this process
	hmu sync.Mutex // the history's stats are not safe for concurrent use

	mu     sync.RWMutex
	st     *state
	byPath map[string]*fileRec
	model  *rank.Model // Put and Remove under mu's write lock, queries under its read lock
	disk   loaded      // the files as last loaded or saved
	der    *derived    // lookup tables built from derSt on first need
	derSt  *state
	mods   *derived // the modules alone, of modsSt (see modules)
	modsSt *state
	derMu  sync.Mutex
	closed bool
}

// DefaultDir is where the index of root lives when Options.Dir is empty:
// <cache>/code/<base name of root>-<12 hex digits of the SHA-256 of root>,
// with <cache> as paths.CacheHome finds it.
func DefaultDir(root string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c, err := paths.CacheHome(getenv)
	if err != nil {
		return "", fmt.Errorf("cannot find a cache directory: %w", err)
	}
	sum := sha256.Sum256([]byte(root))
	name := filepath.Base(root)
	if name == "" || name == "." || name == string(filepath.Separator) {
		name = "root"
	}
	return filepath.Join(c, "code", name+"-"+hex.EncodeToString(sum[:6])), nil
}

// Open loads the index of opt.Root from disk without scanning the project.
// A missing, damaged or old-format index gives an empty index (reported to
// opt.Warn; Update rebuilds it); only an unusable root or index directory
// is an error. Open creates the index directory, private to the user.
func Open(ctx context.Context, opt Options) (*Index, error) {
	if opt.Root == "" {
		return nil, errors.New("no project root given")
	}
	root, err := filepath.Abs(opt.Root)
	if err != nil {
		return nil, fmt.Errorf("project root %s: %w", opt.Root, err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("project root %s: not a directory", root)
	}
	dir := opt.Dir
	if dir == "" {
		if dir, err = DefaultDir(root, opt.Getenv); err != nil {
			return nil, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("index directory %s: %w", opt.Dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("index directory: %w", err)
	}
	// The index holds the project's code: keep it from other users even
	// when the directory was made by someone else with a looser umask.
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("index directory: %w", err)
		}
	}
	ix := &Index{opt: opt, root: root, dir: dir}
	ix.setState(ix.load())
	return ix, nil
}

// loaded is what was read from, or written to, the index directory.
type loaded struct {
	st      *state
	model   *rank.Model
	base    [16]byte    // the base file's identity; zero when there is none
	jr      *journal    // the changes since the base; nil when none
	fi, jfi os.FileInfo // the base and journal files as read or written
}

// same reports whether the files on disk are still those of l.
func (l loaded) same(dir string) bool {
	eq := func(a os.FileInfo, name string) bool {
		b, err := os.Stat(filepath.Join(dir, name))
		if a == nil || err != nil {
			return a == nil && err != nil
		}
		return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
	}
	return eq(l.fi, indexName) && eq(l.jfi, journalName)
}

// load reads the index files, or gives an empty state when there are
// none or they cannot be trusted.
func (ix *Index) load() loaded {
	name := filepath.Join(ix.dir, indexName)
	st, base, fi, err := loadState(ix.dir)
	if err != nil {
		ix.warn(name, fmt.Errorf("rebuilding the index: %w", err))
		st = nil
	}
	if st != nil && st.Root != ix.root {
		ix.warn(name, fmt.Errorf("rebuilding the index: it is of %s", st.Root))
		st = nil
	}
	model := rank.New()
	if st != nil && st.Rank != nil {
		if err := model.UnmarshalBinary(st.Rank); err != nil {
			ix.warn(name, fmt.Errorf("rebuilding the index: %w", err))
			st, model = nil, rank.New()
		} else {
			model.Hold(st.own) // it reads st.Rank, a slice of the file, lazily
		}
	}
	var l loaded
	if st == nil {
		st = &state{Root: ix.root, names: newStrtab()}
	} else {
		l.fi, l.base = fi, base
		jr, jfi, err := loadJournal(ix.dir, st.names)
		l.jfi = jfi
		switch {
		case err != nil:
			// The base stands; the files the journal held are found
			// changed again by the next update.
			ix.warn(filepath.Join(ix.dir, journalName), fmt.Errorf("ignoring the journal: %w", err))
		case jr != nil && jr.base == base:
			if err := jr.apply(st, model); err != nil {
				ix.warn(filepath.Join(ix.dir, journalName), fmt.Errorf("rebuilding the index: %w", err))
				return loaded{st: &state{Root: ix.root, names: newStrtab(), History: new(hStats)}, model: rank.New(), fi: fi, jfi: jfi}
			}
			l.jr = jr
		}
	}
	st.Rank = nil
	if st.History == nil {
		st.History = new(hStats)
	}
	l.st, l.model = st, model
	return l
}

func (ix *Index) setState(l loaded) {
	m := make(map[string]*fileRec, len(l.st.Files))
	for _, f := range l.st.Files {
		m[f.Path] = f
	}
	ix.mu.Lock()
	ix.st, ix.byPath, ix.model, ix.disk = l.st, m, l.model, l
	ix.mu.Unlock()
}

func (ix *Index) warn(path string, err error) {
	if ix.opt.Warn != nil {
		ix.opt.Warn(path, err)
	}
}

// Close releases the index. Queries after Close answer from what was
// loaded; Update fails.
func (ix *Index) Close() error {
	ix.mu.Lock()
	ix.closed = true
	ix.mu.Unlock()
	return nil
}

// Dir returns the directory the index lives in.
func (ix *Index) Dir() string { return ix.dir }

// Root returns the project's root as the index knows it.
func (ix *Index) Root() string { return ix.root }

// Update brings the index up to date: it stats every file, re-parses those
// whose size or mtime changed and whose content hash differs, drops
// deleted ones, reads the git history from the last indexed commit (all of
// it again when that commit is no longer in the history), and saves the
// index atomically. A file that cannot be read or parsed is reported to
// Options.Warn and skipped.
func (ix *Index) Update(ctx context.Context) (Stats, error) {
	return ix.update(ctx, nil)
}

// UpdatePaths is Update for a caller that knows which files changed (a
// file watcher): only paths (relative to the root, or absolute inside
// it) are looked at, with the .gitignore rules that apply to them; every
// other file is taken as it was. A path that no longer exists is dropped
// from the index. A directory among paths makes it a full Update.
func (ix *Index) UpdatePaths(ctx context.Context, paths []string) (Stats, error) {
	if paths == nil {
		paths = []string{}
	}
	return ix.update(ctx, paths)
}

// update is Update when paths is nil, UpdatePaths otherwise.
func (ix *Index) update(ctx context.Context, paths []string) (s Stats, err error) {
	ix.upd.Lock()
	defer ix.upd.Unlock()
	ix.mu.RLock()
	closed := ix.closed
	ix.mu.RUnlock()
	if closed {
		return Stats{}, errors.New("index is closed")
	}
	var k clock
	defer func() { s.Phases = k.phases() }()
	start := time.Now()
	k.start(phDefs)
	removeStaleTemps(ix.dir, start)

	// Another process may have saved a newer index since: start from it.
	ix.mu.RLock()
	disk := ix.disk
	ix.mu.RUnlock()
	if !disk.same(ix.dir) {
		ix.setState(ix.load())
	}
	if err := ix.damage(); err != nil {
		ix.warn(filepath.Join(ix.dir, indexName), fmt.Errorf("rebuilding the index: %w", err))
		ix.setState(loaded{st: &state{Root: ix.root, names: newStrtab(), History: new(hStats)}, model: rank.New()})
	}
	ix.mu.RLock()
	old, oldBy, disk := ix.st, ix.byPath, ix.disk
	ix.mu.RUnlock()

	var ents []entry
	if paths != nil {
		ents, err = ix.listPaths(old, paths)
		if errors.Is(err, errWalk) {
			paths = nil
		} else if err != nil {
			k.stop()
			return s, err
		}
	}
	if paths == nil {
		ents, err = walk(ctx, ix.root, ix.skipDir(), ix.opt.Warn)
		if err != nil {
			k.stop()
			return s, fmt.Errorf("cannot list %s: %w", ix.root, err)
		}
	}
	files := make([]*fileRec, len(ents))
	var todo []int
	for i, e := range ents {
		if f := oldBy[e.path]; f != nil && f.Size == e.size && f.Mtime == e.mtime {
			files[i] = f
			s.Unchanged++
			continue
		}
		todo = append(todo, i)
	}
	s.Walk = k.stop()

	// Texts are kept for the journal only when it may be written.
	var texts [][]byte
	if disk.fi != nil && len(todo) <= maxJournalFiles {
		texts = make([][]byte, len(ents))
	}
	changed := make([]bool, len(ents))
	if err := ix.refresh(ctx, ents, files, todo, oldBy, old.names, texts, changed, &s, &k); err != nil {
		return s, err
	}
	k.start(phRank)
	var jr *journal
	if texts != nil {
		if disk.jr != nil {
			jr = disk.jr.clone()
		} else {
			jr = newJournal(disk.base)
		}
		for _, i := range todo {
			if files[i] != oldBy[files[i].Path] {
				jr.set(&jentry{rec: files[i], text: texts[i], put: changed[i] && files[i].Skip == ""})
			}
		}
	}
	seen := make(map[string]bool, len(ents))
	for _, f := range files {
		seen[f.Path] = true
		if f.Skip != "" {
			s.Skipped++
		} else {
			s.Files++
		}
	}
	for _, f := range old.Files {
		if !seen[f.Path] {
			s.Removed++
			ix.mu.Lock()
			ix.model.Remove(f.Path)
			ix.mu.Unlock()
			if jr != nil {
				jr.remove(f.Path)
			}
		}
	}
	s.Rank += k.stop()

	k.start(phHistory)
	hist, head, n, err := ix.readHistory(ctx, old)
	s.History = k.stop()
	if err != nil {
		return s, err
	}
	s.Commits = n

	if head == old.Head && n == 0 && sameFiles(files, old.Files) && disk.fi != nil {
		return s, nil // nothing to save
	}
	st := &state{Root: ix.root, Files: files, Head: head, History: hist, Updated: time.Now().UTC(), names: old.names}
	k.start(phSave)
	l, err := ix.save(st, jr, hist != old.History || n > 0 || head != old.Head)
	if err != nil {
		k.stop()
		// What was changed in memory is not on disk: go back to the disk.
		ix.setState(ix.load())
		return s, fmt.Errorf("cannot save the index: %w", err)
	}
	s.Save = k.stop()
	ix.setState(l)

	// After a large change the lookup tables are rebuilt rather than
	// patched on the next query, and the call graph with them: do it now,
	// as part of the build, for the queries that follow.
	if s.Added+s.Changed+s.Removed > maxPatch {
		k.start(phRefs)
		d, _ := ix.derive()
		d.graph()
		s.Graph += k.stop()
	}
	return s, nil
}

// The phases of an update, in the order Stats.Phases lists them.
const (
	phDefs = iota
	phRefs
	phRank
	phHistory
	phSave
	nPhases
)

var phaseNames = [nPhases]string{"definitions", "references", "ranking", "history", "save"}

// clock adds up the wall and CPU time of an update's phases, which run
// one after the other, each possibly several times (once per batch).
type clock struct {
	wall, cpu [nPhases]time.Duration
	ph        int
	t         time.Time
	c         time.Duration
}

func (k *clock) start(ph int) { k.ph, k.t, k.c = ph, time.Now(), cputime.Process() }

// stop ends the phase begun by start and returns its wall time.
func (k *clock) stop() time.Duration {
	d := time.Since(k.t)
	k.wall[k.ph] += d
	k.cpu[k.ph] += cputime.Process() - k.c
	return d
}

func (k *clock) phases() []Phase {
	out := make([]Phase, nPhases)
	for i := range out {
		out[i] = Phase{Name: phaseNames[i], Wall: k.wall[i], CPU: k.cpu[i]}
	}
	return out
}

// save writes st: as a journal of the changes since the base when jr is
// set and small enough, else as a new base.
func (ix *Index) save(st *state, jr *journal, histChanged bool) (loaded, error) {
	ix.mu.RLock()
	model := ix.model
	prev := ix.disk
	ix.mu.RUnlock()
	if jr != nil {
		jr.head, jr.updated = st.Head, st.Updated
		if histChanged {
			ix.hmu.Lock()
			b, err := st.History.MarshalBinary()
			ix.hmu.Unlock()
			if err != nil {
				return loaded{}, err
			}
			jr.hist = b
		}
	}
	if jr != nil && !jr.full() {
		jfi, err := saveJournal(ix.dir, jr, st.names.all())
		if err != nil {
			return loaded{}, err
		}
		return loaded{st: st, model: model, base: prev.base, jr: jr, fi: prev.fi, jfi: jfi}, nil
	}
	// The model's encoding compacts it: no query may read it meanwhile.
	ix.mu.Lock()
	b, err := model.MarshalBinary()
	ix.mu.Unlock()
	if err != nil {
		return loaded{}, err
	}
	st.Rank = b
	base, fi, err := saveState(ix.dir, st)
	st.Rank = nil
	if err != nil {
		return loaded{}, err
	}
	if err := removeJournal(ix.dir); err != nil {
		return loaded{}, err
	}
	return loaded{st: st, model: model, base: base, fi: fi}, nil
}

// errWalk says UpdatePaths needs a full walk.
var errWalk = errors.New("a directory changed")

// listPaths returns the entries of old's files with those of paths
// looked at again.
func (ix *Index) listPaths(old *state, paths []string) ([]entry, error) {
	fresh := map[string]*entry{}
	for _, p := range paths {
		if filepath.IsAbs(p) {
			rel, err := filepath.Rel(ix.root, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return nil, fmt.Errorf("%s: not inside %s", p, ix.root)
			}
			p = rel
		}
		p = cleanPath(p)
		if p == "." || p == ".." || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("%s: not inside %s", p, ix.root)
		}
		if path.Base(p) == ".gitignore" {
			return nil, errWalk // what is ignored may have changed anywhere below
		}
		fi, err := os.Lstat(filepath.Join(ix.root, filepath.FromSlash(p)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fresh[p] = nil
			continue
		case err != nil:
			return nil, err
		case fi.IsDir():
			return nil, errWalk
		case !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0:
			fresh[p] = nil
			continue
		}
		if ix.ignored(p) {
			fresh[p] = nil
			continue
		}
		fresh[p] = &entry{path: p, size: fi.Size(), mtime: fi.ModTime().UnixNano(), link: fi.Mode()&fs.ModeSymlink != 0}
	}
	ents := make([]entry, 0, len(old.Files)+len(fresh))
	for _, f := range old.Files {
		if _, ok := fresh[f.Path]; !ok {
			ents = append(ents, entry{path: f.Path, size: f.Size, mtime: f.Mtime, link: f.Skip == skipSymlink})
		}
	}
	for _, e := range fresh {
		if e != nil {
			ents = append(ents, *e)
		}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].path < ents[j].path })
	return ents, nil
}

// ignored reports whether the walk would leave out the file at rel: under
// a directory it never enters, the index's own, or ignored by a
// .gitignore on the way.
func (ix *Index) ignored(rel string) bool {
	parts := strings.Split(rel, "/")
	if parts[len(parts)-1] == ".git" {
		return true
	}
	ps := baseIgnores(ix.root)
	skip := ix.skipDir()
	for i := range len(parts) - 1 {
		dir := parts[:i+1]
		if skipDirs[parts[i]] || (skip != "" && filepath.Join(ix.root, filepath.FromSlash(strings.Join(dir, "/"))) == skip) {
			return true
		}
		ps = append(ps, readIgnore(filepath.Join(ix.root, filepath.FromSlash(strings.Join(parts[:i], "/")), ".gitignore"), parts[:i])...)
		if gitignore.NewMatcher(ps).Match(dir, true) {
			return true
		}
	}
	ps = append(ps, readIgnore(filepath.Join(ix.root, filepath.FromSlash(strings.Join(parts[:len(parts)-1], "/")), ".gitignore"), parts[:len(parts)-1])...)
	return gitignore.NewMatcher(ps).Match(parts, false)
}

// skipDir is the index directory when it lies inside the project, so that
// the walk does not index the index.
func (ix *Index) skipDir() string {
	if rel, err := filepath.Rel(ix.root, ix.dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ix.dir
	}
	return ""
}

// batchBytes bounds the text a batch of files holds between its phases.
const batchBytes = 16 << 20

// refresh reads and parses the files ents[todo] into files, and puts
// those whose content changed into the ranking model. Their texts go to
// texts when it is set, whether their content changed to changed. It
// works in batches of files, each in three phases, every core working on
// each phase: the definitions (read, hash, parse), the ranking (split,
// stem and count the words, merged into the model one file at a time),
// and the references (interned into the state's string table); so that a
// phase's time is its own, and a batch's texts are all the text held.
func (ix *Index) refresh(ctx context.Context, ents []entry, files []*fileRec, todo []int, oldBy map[string]*fileRec, names *strtab, texts [][]byte, changed []bool, s *Stats, k *clock) error {
	workers := runtime.GOMAXPROCS(0)
	// Each worker keeps its Preparer, whose memory of the words of
	// identifiers already seen is most of what makes it fast.
	preps := make([]*rank.Preparer, workers)
	var mu sync.Mutex
	done := 0
	text := make([][]byte, 0, 1024)
	for lo := 0; lo < len(todo); {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi, size := lo, int64(0)
		for hi < len(todo) && (hi == lo || size+ents[todo[hi]].size <= batchBytes) {
			size += ents[todo[hi]].size
			hi++
		}
		batch := todo[lo:hi]
		lo = hi
		text = append(text[:0], make([][]byte, len(batch))...)

		k.start(phDefs)
		parallel(ctx, workers, len(batch), func(_, j int) {
			i := batch[j]
			e := ents[i]
			files[i], text[j], changed[i] = ix.readFile(e, oldBy[e.path])
		})
		s.Parse += k.stop()
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, i := range batch {
			switch {
			case oldBy[ents[i].path] == nil:
				s.Added++
			case changed[i]:
				s.Changed++
			default:
				s.Unchanged++
			}
		}

		k.start(phRank)
		parallel(ctx, workers, len(batch), func(w, j int) {
			i := batch[j]
			if f := files[i]; changed[i] {
				var p *rank.Prepared
				if f.Skip == "" {
					if preps[w] == nil {
						preps[w] = rank.NewPreparer()
					}
					p = preps[w].Prepare(rank.Doc{Path: f.Path, Lang: f.Lang, Text: text[j], File: f.File})
				}
				ix.mu.Lock()
				if p != nil {
					ix.model.PutPrepared(p)
				} else {
					ix.model.Remove(f.Path)
				}
				ix.mu.Unlock()
				if texts != nil {
					texts[i] = text[j]
				}
			}
			text[j] = nil
			mu.Lock()
			done++
			if ix.opt.Progress != nil {
				ix.opt.Progress(done, len(todo))
			}
			mu.Unlock()
		})
		s.Rank += k.stop()
		if err := ctx.Err(); err != nil {
			return err
		}

		k.start(phRefs)
		for _, i := range batch {
			if f := files[i]; changed[i] && f.File != nil {
				f.Refs = packRefs(names, f.File.Refs)
				f.File.Refs = nil
			}
		}
		s.Graph += k.stop()
	}
	return nil
}

// parallel calls fn(worker, j) for every j below n, on up to workers
// goroutines, and returns when all are done; once ctx is done it starts
// no more.
func parallel(ctx context.Context, workers, n int, fn func(w, j int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				j := int(next.Add(1)) - 1
				if j >= n {
					return
				}
				fn(w, j)
			}
		}()
	}
	wg.Wait()
}

// readFile reads and parses one file; old is what the index knew of it.
// changed is false when the content turned out the same.
func (ix *Index) readFile(e entry, old *fileRec) (*fileRec, []byte, bool) {
	f := &fileRec{Path: e.path, Size: e.size, Mtime: e.mtime, Lang: parseLanguage(e.path)}
	if e.link {
		f.Skip = skipSymlink
		return f, nil, true
	}
	if e.size > maxFileSize {
		f.Skip = skipLarge
		return f, nil, true
	}
	b, err := ix.readSource(e.path)
	if err != nil {
		ix.warn(e.path, err)
		f.Skip = skipUnreadable
		return f, nil, true
	}
	if int64(len(b)) > maxFileSize {
		f.Skip = skipLarge
		return f, nil, true
	}
	sum := sha256.Sum256(b)
	copy(f.Sum[:], sum[:])
	if old != nil && old.Sum == f.Sum && old.Skip == "" {
		g := *old
		g.Size, g.Mtime = e.size, e.mtime
		return &g, nil, false
	}
	if isBinary(b) {
		f.Skip = skipBinary
		return f, nil, true
	}
	f.Lines = countLines(b)
	if f.Lang != "" {
		pf, err := parseFile(e.path, b)
		if err != nil && !errors.Is(err, parse.ErrUnknownLanguage) {
			ix.warn(e.path, err)
		}
		f.File = pf
	}
	return f, b, true
}

// sameFiles reports whether an update found every file as it was.
func sameFiles(a, b []*fileRec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// readHistory adds to old's history the commits made since old.Head, or
// reads it all again into new stats when old.Head is gone from the history
// (rewritten) or the project has no history any more.
func (ix *Index) readHistory(ctx context.Context, old *state) (*hStats, string, int, error) {
	switch h, repo := gitHead(ix.root); {
	case !repo && old.Head == "":
		return old.History, "", 0, nil // no repository, as before
	case !repo:
		return new(hStats), "", 0, nil // the repository is gone
	case h != "" && h == old.Head:
		return old.History, old.Head, 0, nil // HEAD has not moved
	}
	cs, head, err := readHistory(ctx, ix.root, old.Head)
	h := old.History
	if errors.Is(err, errRewritten) || (err == nil && head == "" && old.Head != "") {
		h = new(hStats)
		cs, head, err = readHistory(ctx, ix.root, "")
	}
	if err != nil {
		return nil, "", 0, fmt.Errorf("cannot read the history: %w", err)
	}
	if h == nil {
		h = new(hStats)
	}
	if len(cs) > 0 || h.Head != head {
		ix.hmu.Lock()
		h.Add(cs)
		h.Head = head
		ix.hmu.Unlock()
	}
	return h, head, len(cs), nil
}

// Status describes the index as loaded, and which files changed on disk
// since (a stat pass; nothing is read or parsed).
func (ix *Index) Status() Status {
	ix.mu.RLock()
	st, by := ix.st, ix.byPath
	ix.mu.RUnlock()
	s := Status{
		Root: ix.root, Dir: ix.dir, Head: st.Head, Updated: st.Updated,
		Languages: map[string]Lang{}, Skipped: map[string]int{},
	}
	for _, f := range st.Files {
		if f.Skip != "" {
			s.Skipped[f.Skip]++
			continue
		}
		s.Files++
		l := s.Languages[f.Lang]
		l.Files++
		ns, nr := f.counts()
		l.Symbols += ns
		l.Refs += nr
		s.Symbols += ns
		s.Refs += nr
		s.Languages[f.Lang] = l
	}
	s.Stale = ix.stale(by)
	return s
}

// stale lists the files added, changed or deleted since the index was
// built, by size and mtime.
func (ix *Index) stale(by map[string]*fileRec) []string {
	ents, err := walk(context.Background(), ix.root, ix.skipDir(), nil)
	if err != nil {
		return nil
	}
	var out []string
	seen := make(map[string]bool, len(ents))
	for _, e := range ents {
		seen[e.path] = true
		if f := by[e.path]; f == nil || f.Size != e.size || f.Mtime != e.mtime {
			out = append(out, e.path)
		}
	}
	for p := range by {
		if !seen[p] {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// isStale reports whether the file at path changed on disk since it was
// indexed.
func (ix *Index) isStale(f *fileRec) bool {
	fi, err := os.Lstat(filepath.Join(ix.root, filepath.FromSlash(f.Path)))
	if err != nil {
		return true
	}
	return fi.Size() != f.Size || fi.ModTime().UnixNano() != f.Mtime
}
