package index

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miramem/mira/embed"
	"github.com/miramem/mira/internal/arena"
	"github.com/miramem/mira/mem"
)

// ErrBusy is returned when another process holds the index for longer than
// the lock timeout allows, even for reading. It is worth retrying.
var ErrBusy = errors.New("index is locked by another process")

// DefaultLockTimeout is how long one attempt to open the index waits for
// another process's lock when Options.LockTimeout is zero.
const DefaultLockTimeout = 500 * time.Millisecond

const (
	lockAttempts = 3  // attempts to take the index's lock, with backoff between
	parallelLoad = 16 // changed files above which they are loaded in parallel
)

// Options tune Open, Rebuild and Watch. The zero value is usable.
type Options struct {
	// Warn receives broken files (path and Load's error) and notes about
	// the index itself (path: the index directory), at most once per path
	// per call. Nil discards them.
	Warn func(path string, err error)
	// Progress reports long work (a rebuild, a large update) as files done
	// out of total. Nil reports nothing.
	Progress func(done, total int)
	// SkipStat skips the stat pass and trusts a running watcher to have
	// seen uncommitted edits; committed changes are still found. It is
	// implied while a watcher holds a fresh lease.
	SkipStat bool
	// NoRefresh opens the current index read-only as it is, without
	// looking for changes or rebuilding a damaged one (for status).
	NoRefresh bool
	// Now is the clock for recency and for the times recorded in the
	// index; nil means time.Now.
	Now func() time.Time
	// LockTimeout bounds each attempt to take the index's lock; zero means
	// DefaultLockTimeout.
	LockTimeout time.Duration
	// Embedder computes the vectors of entries and queries. Nil is the
	// built-in default: a model fitted on the store's own texts at each
	// rebuild (the hashing embedder while the store has fewer than
	// MinFitDocs entries). An index whose vectors come from another
	// embedder than the configured one is rebuilt; the vectors of an
	// external embedder (anything but embed.Hashing and embed.Model) are
	// cached by text, so no text is sent to it twice.
	Embedder embed.Embedder
	// Context bounds the calls' work, embedding above all (an external
	// embedder is a network service); nil means context.Background. It is
	// an option because Open, Search and Rebuild keep their signatures.
	Context context.Context
	// Dir is the index directory; empty means .index under the store's
	// root. A store that cannot be written (a read-only mount) is
	// searched through an index elsewhere.
	Dir string
	// Keep, when set, keeps the loaded vectors and query embedder, and
	// the generation's lock, from one Index to the next Index of the same
	// unchanged generation (a long-running process that serves searches).
	// Nil loads them for every Index.
	Keep *Keep
}

// Stats says what an update or rebuild did.
type Stats struct {
	Docs    int // documents in the index afterwards
	Indexed int // files (re)indexed
	// Unchanged counts the files read again (racy ones, above all) whose
	// document was the one indexed already: not indexed again.
	Unchanged int
	Removed   int // paths dropped from the index
	Broken    int // files skipped because they could not be loaded
	Loaded    int // calls to Source.Load
	// Embedded counts the texts sent to the embedder, Cached those whose
	// vectors came from the vector cache instead.
	Embedded int
	Cached   int
	// Vectors counts the documents with a vector afterwards; Pending
	// those whose embedding failed and waits for the next try.
	Vectors int
	Pending int
	Rebuilt bool          // a new generation was built
	Commit  string        // the commit the index is now up to date with
	Took    time.Duration // wall time
}

// call carries one call's options and remembers whom it has warned about.
type call struct {
	opt      Options
	mu       sync.Mutex
	warned   map[string]bool
	probeErr error // Options.Embedder could not learn its dimension
	// embedded and cached count texts embedded and vectors taken from the
	// cache (Stats.Embedded, Stats.Cached).
	embedded, cached int
	// rows are the vector rows an update changed, kept for the next one
	// once its meta is written (keepRows).
	rows *vecStore
	// listed is the entry files a watcher listed as it began to watch
	// them, for a rebuild to load instead of listing them again.
	listed *listing
}

// listing is every live entry file's path (Size -1), read from at (unix
// ns) on.
type listing struct {
	files []FileStat
	at    int64
}

func newCall(opt Options) *call {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.LockTimeout <= 0 {
		opt.LockTimeout = DefaultLockTimeout
	}
	return &call{opt: opt, warned: map[string]bool{}}
}

// dir is the index directory of the call.
func (c *call) dir(src Source) string {
	if c.opt.Dir != "" {
		return c.opt.Dir
	}
	return filepath.Join(src.Root(), indexDirName)
}

// brokenError is the error of a broken file the manifest remembers, for
// reporting it again without loading it: msg is what Load said, which
// names the file already when it is a parse error. It is given back as a
// parse error of p, so that the file is named once, as on the first report.
func brokenError(p, msg string) error {
	return &mem.ParseError{Path: p, Err: errors.New(strings.TrimPrefix(msg, mem.Escape(p, false)+": "))}
}

func (c *call) warn(path string, err error) {
	if c.opt.Warn == nil {
		return
	}
	c.mu.Lock()
	seen := c.warned[path]
	c.warned[path] = true
	c.mu.Unlock()
	if !seen {
		c.opt.Warn(path, err)
	}
}

func (c *call) progress(done, total int) {
	if c.opt.Progress != nil {
		c.opt.Progress(done, total)
	}
}

// Index is an open, up-to-date index. It holds a lock on the index files
// that keeps writers (shared) or everyone (exclusive) waiting: open it for
// one search and close it.
type Index struct {
	src   Source
	c     *call
	dir   string // <root>/.index
	gen   string // active generation directory
	lk    *genLock
	kb    *keptLock // lk is Options.Keep's, given back at Close
	meta  meta
	last  Stats
	stale int // changes known and not applied (busy index)
	// building: a new generation, whose vectors are built once all its
	// documents are loaded (rebuild).
	building bool
	closed   bool // Close was called
	// added holds the documents apply loaded, for the vectors.
	added []vecInput
	// arena and termArena hold what a build keeps of its documents
	// (arena.go); nil when not building.
	arena, termArena *arena.Arena
	// vec is the vectors, loaded by the first search that needs them.
	vec     *vecSide
	vecOnce sync.Once
	// rows is the rows alone, for searches without vectors (rowsFor).
	rows        *vecStore
	rowsErr     error
	rowsOnce    sync.Once
	rowsPartial bool // rows holds what could be read of damaged files
}

// Open opens the store's index and brings it up to date with the files:
// committed changes since the indexed commit, and uncommitted edits found
// by a stat pass unless a watcher is trusted to have seen them. A missing,
// damaged or outdated index is rebuilt first. When another process keeps
// the index locked, Open searches the index as it is and reports the
// staleness through Options.Warn instead of waiting.
func Open(src Source, opt Options) (*Index, error) {
	c := newCall(opt)
	var (
		ix  *Index
		err error
	)
	if c.opt.NoRefresh {
		ix = &Index{src: src, c: c, dir: c.dir(src)}
		err = ix.attachCurrent()
	} else {
		stat := !c.opt.SkipStat && !watcherActive(c.dir(src))
		ix, err = open(src, c, probe{full: stat})
	}
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	return ix, nil
}

// open refreshes the current generation with what want asks to look at
// (want.full: a stat pass), rebuilding first when the generation is
// missing or cannot be trusted.
func open(src Source, c *call, want probe) (*Index, error) {
	dir := c.dir(src)
	c.heal(dir)
	var built Stats
	// Another process's rebuild is waited for (waitForBuild) a few times
	// at most: one that dies each time leaves this one to build.
	const maxWaits = 3
	waits := 0
	for try := 0; ; try++ {
		ix := &Index{src: src, c: c, dir: dir}
		if try > 0 {
			// A rebuild has just run its own stat pass; what changed
			// while it loaded files is found by the next one.
			want = probe{}
		}
		err := safely("update the index", func() error { return ix.refresh(want) })
		if err == nil && try < 2 && c.refitDue(ix.meta) {
			// The store has outgrown its model: fit a new one in a new
			// generation. The index as it is serves if that fails.
			ix.Close()
			b, rerr := rebuild(src, c)
			if rerr == nil {
				built = b
				continue
			}
			c.warn(dir, fmt.Errorf("refit the embedding model: %w", rerr))
			ix = &Index{src: src, c: c, dir: dir}
			err = ix.refresh(probe{})
		}
		var d *damagedError
		if err == nil || !errors.As(err, &d) || try == 2 {
			if err != nil {
				return nil, err
			}
			if built.Rebuilt {
				ix.last.Rebuilt = true
				ix.last.Indexed += built.Indexed
				ix.last.Loaded += built.Loaded
				ix.last.Broken += built.Broken
				ix.last.Took += built.Took
			}
			return ix, nil
		}
		if waits < maxWaits && c.waitForBuild(dir) {
			// Another process has built it meanwhile, or given up.
			waits++
			try--
			continue
		}
		if !d.missing {
			c.warn(dir, fmt.Errorf("rebuilding the index: %w", err))
		}
		if built, err = rebuild(src, c); err != nil {
			return nil, err
		}
	}
}

// probe says what a refresh looks at besides the commits since the indexed
// one. Asked for with full set, it is filled in by the stat pass.
type probe struct {
	full   bool       // stats is a complete stat pass
	stats  []FileStat // the stat pass
	statAt int64      // unix ns when the stat pass began
	paths  []string   // more paths to look at (watcher events)
	dirs   []string   // directories whose indexed files to look at again
	quiet  bool       // do not report unchanged broken files again
	err    error      // the stat pass failed
}

// probe runs the stat pass when asked to.
func (ix *Index) probe(stat bool) probe {
	if !stat {
		return probe{}
	}
	p := probe{full: true, statAt: time.Now().UnixNano()}
	p.stats, p.err = ix.src.Stat()
	if p.err != nil {
		p.err = fmt.Errorf("stat pass: %w", p.err)
	}
	return p
}

// obs is a file as seen at a moment (for the racy rule).
type obs struct {
	FileStat
	seen int64 // unix ns
	redo bool  // index it even if unchanged (its embedding is pending)
}

// diffError says Source.Diff failed where the plan relied on it.
type diffError struct{ err error }

func (e *diffError) Error() string { return e.err.Error() }
func (e *diffError) Unwrap() error { return e.err }

// changes is a refresh's plan.
type changes struct {
	head   string
	load   []obs    // files to load and index
	remove []string // paths to drop
	broken []string // unchanged broken files, reported again
}

func (ch *changes) empty() bool { return len(ch.load) == 0 && len(ch.remove) == 0 }

// plan compares what the index holds (meta, manifest) with the store.
// With racy false, files are compared by size and time only (for Status).
func (ix *Index) plan(m meta, man manifest, head string, pr probe, racy bool) (changes, error) {
	ch := changes{head: head}
	differs := func(st FileStat) bool {
		e, ok := man[st.Path]
		return !ok || e.size != st.Size || e.mtime != st.ModTime || (racy && e.racy)
	}
	if pr.full {
		found := 0
		for _, st := range pr.stats {
			if !IsEntryPath(st.Path) {
				continue
			}
			if _, ok := man[st.Path]; ok {
				found++
			}
			if differs(st) {
				ch.load = append(ch.load, obs{FileStat: st, seen: pr.statAt})
			}
		}
		// Every live path found in the manifest is the common case: no
		// set of live paths needs to be built.
		if found < len(man) {
			live := make(map[string]struct{}, len(pr.stats))
			for _, st := range pr.stats {
				live[st.Path] = struct{}{}
			}
			for p := range man {
				if _, ok := live[p]; !ok {
					ch.remove = append(ch.remove, p)
				}
			}
		}
	}
	extra := pr.paths
	// A diff from no commit names every file, which a full stat pass has
	// just looked at anyway.
	if m.Commit != head && head != "" && !(pr.full && m.Commit == "") {
		d, err := ix.src.Diff(m.Commit, head)
		switch {
		case err == nil:
			extra = append(extra[:len(extra):len(extra)], d...)
		case !pr.full:
			// The indexed commit may be gone (history rewritten): only
			// a stat pass can tell what changed.
			return ch, &diffError{fmt.Errorf("list changes since commit %s: %w", short(m.Commit), err)}
		}
	}
	for _, dir := range pr.dirs {
		for p := range man {
			if strings.HasPrefix(p, dir+"/") {
				extra = append(extra, p)
			}
		}
	}
	if len(extra) > 0 {
		done := make(map[string]bool, len(ch.load)+len(ch.remove)+len(extra))
		for _, o := range ch.load {
			done[o.Path] = true
		}
		for _, p := range ch.remove {
			done[p] = true
		}
		root := ix.src.Root()
		for _, p := range extra {
			if done[p] || !IsEntryPath(p) {
				continue
			}
			done[p] = true
			seen := time.Now().UnixNano()
			fi, err := os.Lstat(nativePath(root, p))
			switch {
			case errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()):
				if _, ok := man[p]; ok {
					ch.remove = append(ch.remove, p)
				}
			case err != nil:
				return ch, fmt.Errorf("look at %s: %w", p, err)
			default:
				st := FileStat{Path: p, Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
				if differs(st) {
					ch.load = append(ch.load, obs{FileStat: st, seen: seen})
				}
			}
		}
	}
	if m.Broken > 0 && !pr.quiet {
		pending := make(map[string]bool, len(ch.load)+len(ch.remove))
		for _, o := range ch.load {
			pending[o.Path] = true
		}
		for _, p := range ch.remove {
			pending[p] = true
		}
		for p, e := range man {
			if e.broken != "" && !pending[p] {
				ch.broken = append(ch.broken, p)
			}
		}
	}
	return ch, nil
}

// refresh plans against the current generation, takes the lock it needs,
// plans again under the lock if another process got there first, and
// applies the changes. With want.full it runs the stat pass first, and
// reads the manifest meanwhile; otherwise it reads the manifest only when
// the plan needs it.
func (ix *Index) refresh(want probe) error {
	head, err := ix.src.Head()
	if err != nil {
		return fmt.Errorf("read the store's head: %w", err)
	}
	var (
		pr      probe
		looked  bool
		lastGen string
	)
	needManifest := func(m meta) bool {
		return pr.full || len(pr.paths) > 0 || len(pr.dirs) > 0 || m.Commit != head || (m.Broken > 0 && !pr.quiet) || m.Pending > 0
	}
	for {
		gen, err := readCurrent(ix.dir)
		if err != nil {
			return err
		}
		genDir := filepath.Join(ix.dir, gen)
		m, err := readMeta(genDir)
		if err != nil {
			return err
		}
		if err := ix.c.checkEmbedder(ix.dir, m); err != nil {
			return err
		}
		type read struct {
			man manifest
			err error
		}
		var manc chan read
		readMan := func() {
			manc = make(chan read, 1)
			go func() {
				man, err := readManifest(genDir)
				manc <- read{man, err}
			}()
		}
		// A pass that finds what the last one that matched the manifest
		// found has nothing to do (statsum.go): the manifest is read
		// only if the summary cannot tell.
		summed := false
		if !looked {
			pr, looked = want, true
			if want.full {
				sum, ok := statSum{}, false
				if m.Commit == head && m.Broken == 0 && m.Pending == 0 && len(want.paths) == 0 && len(want.dirs) == 0 {
					sum, ok = readStatSum(genDir, m)
				}
				if !ok {
					readMan() // while the stat pass runs
				}
				if pr = ix.probe(true); pr.err != nil {
					// Without the stat pass the index is still good
					// for the commits: go on, and say what was missed.
					ix.c.warn(ix.dir, pr.err)
					pr = probe{}
				}
				summed = ok && pr.full && sum.sameFiles(pr)
			}
		}
		var man manifest
		if needManifest(m) && !summed {
			if manc == nil {
				readMan()
			}
			r := <-manc
			if r.err != nil {
				return r.err
			}
			man = r.man
		}
		ch, err := changes{head: head}, error(nil)
		if !summed {
			ch, err = ix.plan(m, man, head, pr, true)
		}
		var de *diffError
		if errors.As(err, &de) {
			ix.c.warn(ix.dir, fmt.Errorf("%w; running a stat pass", de.err))
			if pr = ix.probe(true); pr.err != nil {
				return pr.err
			}
			continue
		}
		if err != nil {
			return err
		}
		addDependents(&ch, man, time.Now().UnixNano())
		// The pass matched the manifest: nothing to load or drop (a
		// busy index below empties the plan without indexing it).
		matched := pr.full && !summed && ch.empty() && len(ch.broken) == 0
		if m.Pending > 0 && (!ch.empty() || ix.c.opt.Now().Sub(m.UpdatedAt) >= pendingRetry) {
			if err := ix.addPending(&ch, genDir, m, man); err != nil {
				return err
			}
		}
		writable := !ch.empty()
		var (
			bi *genLock
			kb *keptLock
		)
		if writable {
			bi, kb, err = ix.c.opt.Keep.writerFor(genDir, func() (*genLock, error) { return ix.openGen(genDir, false) },
				func() (*genLock, error) { return ix.openGen(genDir, true) })
		} else {
			bi, kb, err = ix.c.opt.Keep.lockFor(genDir, func() (*genLock, error) { return ix.openGen(genDir, true) })
		}
		if errors.Is(err, errBusy) && writable {
			bi, err = ix.openGen(genDir, true)
			if err == nil {
				ix.stale = len(ch.load) + len(ch.remove)
				ix.c.warn(ix.dir, fmt.Errorf("index busy: searching without %d changed files", ix.stale))
				writable = false
				ch = changes{head: m.Commit, broken: ch.broken}
			}
		}
		if err != nil {
			// The generation may have been replaced and removed between
			// reading CURRENT and opening it: try the new one once.
			var d *damagedError
			if errors.As(err, &d) && gen != lastGen {
				if now, cerr := readCurrent(ix.dir); cerr == nil && now != gen {
					lastGen = gen
					continue
				}
			}
			if errors.Is(err, errBusy) {
				return ErrBusy
			}
			return err
		}
		if err := kb.gated(writable, func() error { return ix.underLock(kb, genDir, m, man, head, pr, ch, writable) }); err != nil {
			if kb != nil {
				ix.c.opt.Keep.dropLock(genDir)
				ix.c.opt.Keep.releaseLock(kb)
			} else {
				bi.Close()
			}
			return err
		}
		ix.lk, ix.kb, ix.gen = bi, kb, genDir
		ix.tidy(gen)
		// A full pass that matched the manifest, the meta as planned
		// with: the next pass that sees the same may skip the manifest.
		if matched && m.Commit == head && ix.meta == m && m.Pending == 0 {
			if s, ok := newStatSum(genDir, m, pr); ok {
				writeStatSum(genDir, s)
			}
		}
		return nil
	}
}

// underLock finishes a refresh while the generation's lock is held: it
// checks the generation against its meta, plans again if another process
// updated it meanwhile, and applies the plan. The meta found matching the
// index, at the start and once the plan is applied, is recorded in kb
// (setKnown).
func (ix *Index) underLock(kb *keptLock, genDir string, m meta, man manifest, head string, pr probe, ch changes, writable bool) error {
	m2, err := readMeta(genDir)
	if err != nil {
		return err
	}
	if err := checkVecFiles(genDir, m2); err != nil {
		return err
	}
	kb.setKnown(m2)
	same := m2 == m
	m = m2
	if !same && writable {
		if man, err = readManifest(genDir); err != nil {
			return err
		}
		if ch, err = ix.plan(m, man, head, pr, true); err != nil {
			return err
		}
	}
	ix.meta = m
	for _, p := range ch.broken {
		ix.c.warn(p, brokenError(p, man[p].broken))
	}
	if writable && !ch.empty() {
		st, err := ix.apply(genDir, m, man, ch)
		ix.last = st
		if err != nil {
			return err
		}
		m, err := readMeta(genDir)
		if err != nil {
			return err
		}
		ix.meta = m
		kb.setKnown(m)
		return nil
	}
	ix.last = Stats{Docs: m.Docs, Commit: m.Commit, Vectors: m.Vectors, Pending: m.Pending}
	if ch.head != m.Commit && ch.empty() && same {
		// Nothing to index, but the commits since are now accounted
		// for. Writers hold the lock exclusively, so under the shared
		// lock only readers that reached the same conclusion race here.
		m.Commit = ch.head
		m.UpdatedAt = ix.c.opt.Now().UTC()
		if err := writeMeta(genDir, m); err != nil {
			return err
		}
		ix.meta = m
		ix.last.Commit = m.Commit
		kb.setKnown(m)
	}
	return nil
}

// openGen takes a generation's lock, shared for reading, retrying with
// backoff while another process holds it.
func (ix *Index) openGen(genDir string, readOnly bool) (*genLock, error) {
	backoff := 50 * time.Millisecond
	for i := 1; ; i++ {
		bi, err := lockGen(genDir, !readOnly, ix.c.opt.LockTimeout)
		if !errors.Is(err, errBusy) || i == lockAttempts {
			return bi, err
		}
		time.Sleep(backoff)
		backoff *= 2
	}
}

// attachCurrent opens the current generation read-only as it is.
func (ix *Index) attachCurrent() error {
	for tries := 1; ; tries++ {
		gen, err := readCurrent(ix.dir)
		if err != nil {
			return err
		}
		err = ix.attach(filepath.Join(ix.dir, gen))
		var d *damagedError
		if err == nil || !errors.As(err, &d) || tries == 3 {
			return err
		}
		// A rebuild may have replaced the generation and removed it
		// between our reading CURRENT and opening it: when CURRENT
		// names another one now, open that.
		if now, cerr := readCurrent(ix.dir); cerr != nil || now == gen {
			return err
		}
	}
}

// attach opens the generation genDir read-only as it is.
func (ix *Index) attach(genDir string) error {
	bi, kb, err := ix.c.opt.Keep.lockFor(genDir, func() (*genLock, error) { return ix.openGen(genDir, true) })
	if errors.Is(err, errBusy) {
		return ErrBusy
	}
	if err != nil {
		return err
	}
	m, err := kb.attachMeta(genDir)
	if err != nil {
		if kb != nil {
			ix.c.opt.Keep.releaseLock(kb)
		} else {
			bi.Close()
		}
		return err
	}
	ix.lk, ix.kb, ix.gen, ix.meta = bi, kb, genDir, m
	ix.last = Stats{Docs: m.Docs, Commit: m.Commit}
	return nil
}

// apply loads the planned files and updates the vector store (rows,
// postings and vectors), then the manifest and the meta, in that order: a
// crash in between leaves a manifest that is older than the index, and the
// next refresh redoes the difference. While a generation is built, its
// documents wait in ix.added for rebuild to write them.
func (ix *Index) apply(genDir string, m meta, man manifest, ch changes) (Stats, error) {
	start := time.Now()
	st := Stats{Commit: ch.head}
	var gone []string // paths whose rows go
	// Room for every file at once: grown by append, a rebuild's hundred
	// thousand documents were copied over and over (0.9 s of a serial
	// loop at 100k).
	ix.added = slices.Grow(ix.added, len(ch.load))
	err := loadAll(ix.src, ch.load, ix.c.progress, func(o obs, d Doc, lx lexed, err error) error {
		st.Loaded++
		p := o.Path
		racy := o.ModTime > o.seen-int64(RacyWindow)
		prev, had := man[p]
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if had {
				if prev.broken == "" {
					gone = append(gone, p)
				}
				delete(man, p)
				st.Removed++
			}
		case err != nil:
			if had && prev.broken == "" {
				gone = append(gone, p)
			}
			man[p] = entry{size: o.Size, mtime: o.ModTime, racy: racy, broken: err.Error()}
			ix.c.warn(p, err)
			st.Broken++
		default:
			d.Path = p
			sum := docSum(d)
			if had && !o.redo && prev.broken == "" && prev.sum == sum && prev.size == o.Size && prev.mtime == o.ModTime {
				// Read again with the same size and time (a racy entry)
				// and the same document: the index has it. A file whose
				// time changed is indexed again even so, since a crash
				// may have left the index ahead of the manifest.
				man[p] = entry{size: o.Size, mtime: o.ModTime, racy: racy, id: d.ID, sum: sum}
				st.Unchanged++
				break
			}
			in := newVecInput(d, lx)
			if ix.arena != nil {
				in = arenaVecInput(ix.arena, d, lx, ix.termArena)
			}
			ix.added = append(ix.added, in)
			man[p] = entry{size: o.Size, mtime: o.ModTime, racy: racy, id: in.id, sum: sum}
			st.Indexed++
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	for _, p := range ch.remove {
		if e, ok := man[p]; ok {
			if e.broken == "" {
				gone = append(gone, p)
			}
			delete(man, p)
			st.Removed++
		}
	}
	if ix.building {
		// A new generation: rebuild writes its vectors once all its
		// documents are in, and its manifest meanwhile.
		m.Docs, m.Commit, m.Broken = len(ix.added), ch.head, man.broken()
		m.UpdatedAt = ix.c.opt.Now().UTC()
		ix.meta = m
		st.Docs = m.Docs
		st.Took = time.Since(start)
		return st, nil
	}
	seq := m.VecSeq
	m, live, err := ix.c.updateVectors(ix.dir, genDir, m, ix.added, gone)
	if err != nil {
		return st, err
	}
	ix.added = nil
	changed := make([]string, 0, len(ch.load)+len(ch.remove))
	for _, o := range ch.load {
		changed = append(changed, o.Path)
	}
	changed = append(changed, ch.remove...)
	if err := writeManifest(genDir, man, changed); err != nil {
		return st, err
	}
	m.Docs, m.Commit, m.Broken = live, ch.head, man.broken()
	m.UpdatedAt = ix.c.opt.Now().UTC()
	if err := writeMeta(genDir, m); err != nil {
		return st, err
	}
	ix.c.keepRows(genDir, m)
	if m.VecSeq != seq {
		removeVecFiles(genDir, m.VecSeq) // compacted
	}
	st.Docs = live
	st.Vectors, st.Pending = m.Vectors, m.Pending
	st.Embedded, st.Cached = ix.c.embedded, ix.c.cached
	st.Took = time.Since(start)
	return st, nil
}

// loadBatch is how many files a worker of loadAll takes at a time.
const loadBatch = 32

// loadAll loads files through the source and analyses their text, in
// parallel when there are many, and hands each result to fn in the calling
// goroutine. It stops at fn's first error.
func loadAll(src Source, files []obs, progress func(done, total int), fn func(obs, Doc, lexed, error) error) error {
	total := len(files)
	load := func(f *obs) (Doc, error) { return src.Load(f.Path) }
	if sl, ok := src.(sizedLoader); ok {
		load = func(f *obs) (Doc, error) { return sl.LoadSized(f.Path, f.Size) }
	}
	if sl, ok := src.(statLoader); ok {
		// A listed file (Size -1) takes its stat data from the read.
		sized := load
		load = func(f *obs) (Doc, error) {
			if f.Size >= 0 {
				return sized(f)
			}
			d, st, err := sl.LoadStat(f.Path)
			f.Size, f.ModTime = st.Size, st.ModTime
			return d, err
		}
	}
	step := max(total/100, 256)
	report := func(done int) {
		if total >= parallelLoad && (done%step == 0 || done == total) {
			progress(done, total)
		}
	}
	if total < parallelLoad {
		for i, f := range files {
			d, err := load(&f)
			if err := fn(f, d, lexOf(&d, err), err); err != nil {
				return err
			}
			report(i + 1)
		}
		return nil
	}
	type result struct {
		f   obs
		d   Doc
		lx  lexed
		err error
	}
	// The workers take the files loadBatch at a time and hand their
	// results over the same way: a channel operation or two per file had
	// been a tenth of a 100k rebuild's loading, most of it goroutines
	// parked and woken.
	workers := runtime.GOMAXPROCS(0)
	var next atomic.Int64
	out := make(chan []result, 2*workers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(loadBatch)) - loadBatch
				if lo >= len(files) {
					return
				}
				batch := make([]result, 0, loadBatch)
				for _, f := range files[lo:min(lo+loadBatch, len(files))] {
					d, err := load(&f)
					batch = append(batch, result{f, d, lexOf(&d, err), err})
				}
				select {
				case out <- batch:
				case <-stop:
					return
				}
			}
		})
	}
	go func() { wg.Wait(); close(out) }()
	done := 0
	for batch := range out {
		for _, r := range batch {
			if err := fn(r.f, r.d, r.lx, r.err); err != nil {
				close(stop)
				for range out {
				}
				return err
			}
			done++
			report(done)
		}
	}
	return nil
}

// LastUpdate says what bringing the index up to date did when it was
// opened.
func (ix *Index) LastUpdate() Stats { return ix.last }

// Close releases the index. It is safe to call more than once.
func (ix *Index) Close() error {
	if ix.closed || ix.lk == nil {
		ix.closed = true
		return nil
	}
	ix.closed = true
	ix.vecOnce.Do(func() {}) // no search starts loading them now
	ix.vec.release()
	if ix.kb != nil {
		ix.c.opt.Keep.releaseLock(ix.kb)
		return nil
	}
	return ix.lk.Close()
}

// short abbreviates a commit hash for messages.
func short(commit string) string {
	if commit == "" {
		return "(none)"
	}
	return commit[:min(len(commit), 12)]
}

// docSum is a checksum of everything the index takes from a document: the
// first 8 bytes of the SHA-256 of its fields, each with its length. Never 0.
func docSum(d Doc) uint64 {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	put := func(s string) {
		h.Write(binary.AppendUvarint(n[:0], uint64(len(s))))
		h.Write(readOnlyBytes(s))
	}
	for _, s := range []string{d.ID, d.Path, d.Kind, d.Scope, d.Project, d.Role, d.Source, d.Pin, d.Text, d.Context, d.Hash} {
		put(s)
	}
	h.Write(binary.AppendUvarint(n[:0], uint64(len(d.Tags))))
	for _, t := range d.Tags {
		put(t)
	}
	if len(d.From) > 0 {
		h.Write([]byte("from"))
		h.Write(binary.AppendUvarint(n[:0], uint64(len(d.From))))
		for _, id := range d.From {
			put(id)
		}
	}
	h.Write(binary.AppendVarint(n[:0], d.CreatedAt.Unix()))
	h.Write(binary.AppendVarint(n[:0], int64(d.CreatedAt.Nanosecond())))
	var sum [sha256.Size]byte
	return max(1, binary.LittleEndian.Uint64(h.Sum(sum[:0])))
}

// addPending adds the documents whose embedding failed to the files to
// load, so that they are embedded again.
func (ix *Index) addPending(ch *changes, genDir string, m meta, man manifest) error {
	paths, err := pendingPaths(genDir, m)
	if err != nil {
		return err
	}
	planned := make(map[string]bool, len(ch.load)+len(ch.remove))
	for _, o := range ch.load {
		planned[o.Path] = true
	}
	for _, p := range ch.remove {
		planned[p] = true
	}
	seen := time.Now().UnixNano()
	for _, p := range paths {
		if e, ok := man[p]; ok && e.broken == "" && !planned[p] {
			ch.load = append(ch.load, obs{FileStat: FileStat{Path: p, Size: e.size, ModTime: e.mtime}, seen: seen, redo: true})
		}
	}
	return nil
}
