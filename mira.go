// Package mira is Mira's memory as a Go API: the use cases that every front
// end calls (the mira-* commands, the coding agent, the MCP server) and
// that a Go program can call to embed the memory.
//
// A Memory is an open store: Markdown files with YAML front matter in a
// git repository (package mem), a disposable search index beside them
// (package index), and the configuration that chooses the embedder and the
// models. Its methods are safe for concurrent use by many goroutines:
// writes (Remember, Forget, Summarize) take the store's lock one at a
// time, in this process and across processes, and reads (Recall, Context,
// Turns) never wait for a write. Open with Options.Warm in a long-running
// process: the index then stays open and a file watcher keeps it fresh,
// so a recall answers from warm memory and still sees a file saved a
// moment ago.
package mira

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/embed"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/paths"
	"github.com/miramem/mira/mem"
)

// Options say which store to open and how.
type Options struct {
	// Home is the store directory. Empty means $MIRA_HOME, else the
	// configuration's home, else $XDG_DATA_HOME/mira. A store that does
	// not exist yet is created.
	Home string
	// Command names the program in lock files and commits (Mira-Command
	// trailer); default "mira".
	Command string
	// Config is the configuration; nil reads it with LoadConfig(Getenv).
	Config *Config
	// Getenv reads the environment; nil means os.Getenv. A server that
	// acts for clients with environments of their own passes theirs.
	Getenv func(string) string
	// Embedder names the embedder (BuiltinEmbedder or openai:<model>);
	// empty means $MIRA_EMBED, else the configuration, else builtin.
	Embedder string
	// LockTimeout bounds the wait for another writer's lock; zero means
	// the configuration's lock_timeout, else 10 s.
	LockTimeout time.Duration
	// Project is the current project: memories stored without one get it,
	// and recalls favour it. Empty means none (see mem.DetectProject).
	Project string
	// Warn receives what a caller may want to show but that does not fail
	// the call: a broken entry file (its path and the parser's reason), a
	// note about the index. Each is reported once per Memory. Nil discards
	// them.
	Warn func(path string, err error)
	// Progress reports long index work (a rebuild) as files done out of
	// total. Nil reports nothing.
	Progress func(done, total int)
	// Existing opens only a store that is there: a missing or empty
	// directory is an error matching ErrNoStore, and nothing is created.
	// Reading front ends set it, so that a mistyped home does not become
	// a store.
	Existing bool
	// Absent, with Existing, opens a missing store as an empty one, for
	// a dry run that must show what it would do and create nothing: only
	// reads and dry runs may be made through it.
	Absent bool
	// Warm keeps the index open between calls and runs a file watcher that
	// keeps it fresh (as mira-index watch does), for a long-running
	// process. Without it, each read opens the index and checks the store
	// for changes itself. When another process already watches the store,
	// its watcher is trusted and this one does not start.
	Warm bool
	// Lag, with Warm, lets reads search the index as the watcher last
	// left it instead of waiting for it to take in the latest commits of
	// turns (AppendTurns, TurnWriter): a server that stores every turn
	// (mira-proxy) would otherwise make nearly every read wait for
	// indexing. A stored turn shows up in searches a moment later; what
	// this Memory's other writes (Remember, Forget, Extract, Summarize,
	// Pin, Sync) changed is still waited for, so the next read sees it:
	// by the write itself, before it returns, else by the next read.
	// Reads that lag share one open index; while the next one opens
	// (which waits while the watcher applies a batch), they search the
	// one before it.
	Lag bool
	// Keep, when set, is the index state shared with other users of the
	// same process (a server that also runs index batches). Warm makes one
	// of its own when it is nil.
	Keep *index.Keep
	// Fresh, when set, is called before a read opens the index: a server
	// that watches the store makes it take in what changed so far.
	Fresh func() error
	// Records, when set, keeps the records of the entry files read, for
	// as long as each file is unchanged, across the Memories of a
	// long-running process. Warm makes one of its own when it is nil.
	Records *RecordCache
}

// Memory is an open store. Close it when done.
type Memory struct {
	st   *mem.Store // nil for a detached Memory
	home string
	// indexDir is where the index lives when not under the store: a
	// store that cannot be written is searched through an index in the
	// user's cache directory.
	indexDir string
	opt      Options
	cfg      *Config
	emb      embed.Embedder
	rr       *embed.Reranker
	keep     *index.Keep
	cache    *RecordCache // records of files read, in a warm Memory

	warnMu sync.Mutex
	warned map[string]bool

	// readMu guards the opens of the index that share keep. A read that
	// may bring the index up to date (and so write it) holds it alone: the
	// kept state is one generation's, and two writers of the index would
	// wait out each other's lock. Reads that search the index as the
	// watcher left it (Options.Lag) only read, and share it.
	readMu sync.RWMutex
	// writeMu serialises this process's writers before they take the
	// store's lock file, which is not reentrant.
	writeMu sync.Mutex
	// fileMu queues this process's commits in front of the lock file
	// (lockFile).
	fileMu sync.Mutex

	// lagMu guards lag, the index open now for the reads that search it
	// as the watcher left it (openLagging), and lagOld, the one before it
	// while lag is being opened.
	lagMu  sync.Mutex
	lag    *lagIndex
	lagOld *lagIndex
	// lagDone is closed when the Memory closes (then lagClosed is set),
	// which waits for lagHolds, the goroutines holding an idle lagging
	// index (see releaseLagging).
	lagDone   chan struct{}
	lagClosed bool
	lagHolds  sync.WaitGroup
	// openLag opens an index for lagging reads (tests stand in for it).
	openLag func(index.Options) (*index.Index, error)

	stopWatch context.CancelFunc
	watchDone chan struct{}
	syncer    atomic.Pointer[index.Syncer] // nil when not watching
	// writes counts this Memory's writes other than turns; indexed is
	// the count the index was last brought up to (Options.Lag).
	writes, indexed atomic.Uint64
	// knownHead is the store's HEAD as this Memory last knew it: after
	// its own commits (taken under the lock file, so exactly its own) and
	// its fresh reads. A lagging read whose HEAD differs, because another
	// process committed (mira-remember beside a server), is made fresh:
	// what was remembered elsewhere is seen by the next read.
	knownHead atomic.Pointer[string]
	holding   atomic.Bool   // this Memory holds the lock file
	watching  chan struct{} // closed once the watcher's first batch is done

	closeOnce sync.Once
}

// Open opens the store that opt names, creating it on first use.
func Open(ctx context.Context, opt Options) (*Memory, error) {
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	opt.Command = cmp.Or(opt.Command, "mira")
	cfg := opt.Config
	if cfg == nil {
		var err error
		if cfg, err = LoadConfig(opt.Getenv); err != nil {
			return nil, err
		}
	}
	home, _ := paths.Home(opt.Home, opt.Getenv, func() (string, error) { return cfg.Home, nil })
	if home == "" {
		return nil, invalidf("no store: set MIRA_HOME or the home option")
	}
	home, err := paths.ExpandHome(home)
	if err != nil {
		return nil, err
	}
	if opt.LockTimeout <= 0 {
		opt.LockTimeout = 10 * time.Second
		if cfg.LockTimeout != "" {
			d, err := time.ParseDuration(cfg.LockTimeout)
			if err != nil {
				return nil, invalidf("config lock_timeout: %v", err)
			}
			opt.LockTimeout = d
		}
	}
	emb, err := NewEmbedder(cmp.Or(opt.Embedder, opt.Getenv("MIRA_EMBED"), cfg.Embed.Name), cfg, opt.Getenv)
	if err != nil {
		return nil, err
	}
	rr, err := NewReranker(cfg, opt.Getenv)
	if err != nil {
		return nil, err
	}
	// Commits are signed as the caller's environment says, which in a
	// server is its client's, not the process's.
	sig := mem.Signature{Name: opt.Getenv("GIT_AUTHOR_NAME"), Email: opt.Getenv("GIT_AUTHOR_EMAIL")}
	var st *mem.Store
	absent := false
	if opt.Existing {
		st, err = mem.OpenExisting(home, opt.Command)
		if opt.Absent && errors.Is(err, mem.ErrNoStore) {
			st, err, absent = mem.Absent(home, opt.Command), nil, true
		}
	} else {
		st, err = mem.OpenAs(ctx, home, opt.Command, opt.LockTimeout, sig)
	}
	var ns *mem.NotStoreError
	if errors.As(err, &ns) {
		return nil, &InvalidError{Err: err}
	}
	if err != nil {
		return nil, err
	}
	st.Sign(sig)
	indexDir := ""
	if !absent {
		if indexDir, err = readOnlyIndexDir(st.Root); err != nil {
			return nil, err
		}
	}
	m := &Memory{st: st, home: st.Root, indexDir: indexDir, opt: opt, cfg: cfg, emb: emb, rr: rr, keep: opt.Keep, cache: opt.Records}
	m.openLag = func(o index.Options) (*index.Index, error) { return index.Open(newSource(st), o) }
	m.lagDone = make(chan struct{})
	switch {
	case absent:
	case m.indexDir != "":
		m.warn("", fmt.Errorf("the store %s cannot be written: searching through an index in %s", st.Root, m.indexDir))
	default:
		if fixed, err := mem.MakePrivate(st.Root); err != nil {
			m.warn("", fmt.Errorf("cannot make the store private: %w", err))
		} else if fixed {
			m.warn("", fmt.Errorf("made the store private (it was readable by other users): chmod -R go-rwx %s", st.Root))
		}
	}
	if opt.Warm {
		if m.keep == nil {
			m.keep = new(index.Keep)
		}
		if m.cache == nil {
			m.cache = &RecordCache{}
		}
		m.startWatch()
		// The tokenizer takes a second to load on a busy machine: the
		// first contexts would wait for it.
		go func() {
			if tok, err := plan.NewTokenizer(cfg.Context.Encoding); err == nil {
				tok.Load()
			}
		}()
	}
	return m, nil
}

// Detached returns a Memory without a store, for planning contexts from
// the caller's items alone (Context with NoStore set; no other method may
// be called). Logged plans go under home when it is not empty; nothing is
// created otherwise.
func Detached(cfg *Config, home string) *Memory {
	if cfg == nil {
		cfg = &Config{}
	}
	return &Memory{home: home, cfg: cfg, opt: Options{Getenv: os.Getenv}}
}

// ErrNoStore says there is no store at the home an Open with Existing
// names.
var ErrNoStore = mem.ErrNoStore

// Root is the store directory.
func (m *Memory) Root() string { return m.home }

// Config is the configuration the Memory was opened with.
func (m *Memory) Config() *Config { return m.cfg }

// Getenv reads the environment the Memory was opened with.
func (m *Memory) Getenv(key string) string { return m.opt.Getenv(key) }

// Project is the current project of Options.Project.
func (m *Memory) Project() string { return m.opt.Project }

// Close stops the watcher and lets go of the kept index. It does not wait
// for calls in progress; make none after it.
func (m *Memory) Close() error {
	m.closeOnce.Do(func() {
		if m.stopWatch != nil {
			m.stopWatch()
			<-m.watchDone
		}
		if m.lagDone != nil {
			m.lagMu.Lock()
			m.lagClosed = true
			m.lagMu.Unlock()
			close(m.lagDone)
			m.lagHolds.Wait() // an idle lagging index is closed
		}
		if m.opt.Warm && m.opt.Keep == nil && m.keep != nil {
			m.readMu.Lock()
			m.keep.Release()
			m.readMu.Unlock()
		}
	})
	return nil
}

// startWatch runs the watcher of a warm Memory. Another process's watcher
// (mira-index watch, a second server) is trusted instead.
func (m *Memory) startWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	m.stopWatch, m.watchDone = cancel, make(chan struct{})
	syncer := index.NewSyncer()
	m.syncer.Store(syncer)
	m.watching = make(chan struct{})
	var once sync.Once
	go func() {
		defer close(m.watchDone)
		defer once.Do(func() { close(m.watching) })
		opt := m.indexOptions(ctx)
		err := index.Watch(ctx, newSource(m.st), opt, func(ev index.Event) {
			if ev.Err != nil {
				m.warn("", fmt.Errorf("index watcher: %w (retried with the next change)", ev.Err))
				return
			}
			once.Do(func() { close(m.watching) })
		}, syncer)
		if err != nil && !errors.Is(err, index.ErrWatching) && ctx.Err() == nil {
			m.warn("", fmt.Errorf("index watcher stopped: %w", err))
		}
		m.syncer.Store(nil)
	}()
}

// fresh brings the index up to what changed so far, through this
// process's watcher when it runs.
func (m *Memory) fresh(ctx context.Context) error {
	if m.opt.Fresh != nil {
		return m.opt.Fresh()
	}
	if m.watching == nil {
		return nil
	}
	select {
	case <-m.watching:
	case <-ctx.Done():
		return ctx.Err()
	}
	s := m.syncer.Load()
	if s == nil {
		return nil // not watching: each open checks the store itself
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.Sync(sctx); err != nil && ctx.Err() == nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil // the watcher is stuck: Open's own checks still run
		}
		m.warn("", fmt.Errorf("index watcher: %w", err))
	}
	return nil
}

// warn reports a problem once per Memory.
func (m *Memory) warn(path string, err error) {
	if m.opt.Warn == nil || errors.Is(err, fs.ErrNotExist) {
		return
	}
	var pe *mem.ParseError
	if errors.As(err, &pe) {
		path = "" // the parse error names the file itself
	}
	key := path + "\x00" + err.Error()
	m.warnMu.Lock()
	if m.warned == nil {
		m.warned = map[string]bool{}
	}
	seen := m.warned[key]
	m.warned[key] = true
	m.warnMu.Unlock()
	if !seen {
		m.opt.Warn(path, err)
	}
}

// indexOptions are the options every index open shares. All of them use
// the configured embedder: two callers with different ones would make the
// index re-embed the store back and forth.
func (m *Memory) indexOptions(ctx context.Context) index.Options {
	return index.Options{
		Warn: m.warn, Now: time.Now, LockTimeout: 5 * time.Second, Keep: m.keep,
		Progress: m.opt.Progress, Embedder: m.emb, Context: ctx, Dir: m.indexDir,
		// The server's watcher takes in every change before the open
		// (Options.Fresh), and when it cannot, the recall is not
		// answered from here: its lease need not be read back.
		SkipStat: m.opt.Fresh != nil,
	}
}

// openIndex opens the index brought up to date with the store. The
// caller holds readMu when the Memory keeps the index, and closes it.
func (m *Memory) openIndex(ctx context.Context) (*index.Index, error) {
	w := m.writes.Load()
	// What the fresh open below takes in; stored unless a commit of ours
	// made something newer known meanwhile.
	known := m.knownHead.Load()
	head, headErr := m.st.Head()
	if m.lagAllowed() {
		// Another writer may have brought the index along meanwhile.
		opt := m.indexOptions(ctx)
		opt.NoRefresh = true
		if ix, err := index.Open(newSource(m.st), opt); err == nil {
			return ix, nil
		}
	}
	if err := m.fresh(ctx); err != nil {
		return nil, err
	}
	ix, err := index.Open(newSource(m.st), m.indexOptions(ctx))
	if err != nil && diskFull(err) {
		// Reads go on when the disk is full: the index as it was last
		// brought up to date is searched, with one warning.
		opt := m.indexOptions(ctx)
		opt.NoRefresh = true
		if ix, oerr := index.Open(newSource(m.st), opt); oerr == nil {
			m.warn("", errors.New("the disk is full: searching the index as it was last brought up to date, without the changes since (free some space)"))
			return ix, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open index: %w", err)
	}
	if m.indexed.Load() < w {
		m.indexed.Store(w) // a racing reader storing less costs only a wait
	}
	if headErr == nil {
		m.knownHead.CompareAndSwap(known, &head)
	}
	return ix, nil
}

// lagAllowed reports whether a read may search the index as the watcher
// last left it (Options.Lag): the watcher is up and brings the index along
// by itself, and nothing but turns was written since the index was last
// fresh.
func (m *Memory) lagAllowed() bool {
	return m.opt.Lag && m.writes.Load() == m.indexed.Load() && m.watching != nil && isDone(m.watching) && m.syncer.Load() != nil &&
		m.headKnown()
}

// headKnown reports whether the store's HEAD is the one this Memory last
// knew (see knownHead).
func (m *Memory) headKnown() bool {
	if m.holding.Load() {
		// This process holds the lock file: no other can commit, and
		// a commit of ours moves HEAD before its unlock records it.
		return true
	}
	h, err := m.st.Head()
	known := m.knownHead.Load()
	return err == nil && known != nil && h == *known
}

// lagIndex is an index opened read-only as the watcher left it, searched
// by every lagging read that comes while it is young: concurrent reads
// share one open (one shared lock, one load of the rows) instead of each
// opening the generation for itself.
type lagIndex struct {
	ready  chan struct{} // closed once ix or err is set
	ix     *index.Index
	err    error
	opened time.Time
	users  int  // reads searching it now, and a hold; lagMu guards it
	idled  bool // it was held once when idle (see releaseLagging)
}

// lagIdle is how long the last lagging index is held open once nobody
// searches it: the next read may share it (while it is young) or search
// it while its successor opens, instead of waiting for that open.
const lagIdle = 250 * time.Millisecond

// lagShare is how long after it was opened a lagging index takes new
// readers. It is closed when its last reader is done (the newest after
// lagIdle), and let go of at once when a writer of this process must wait
// for its searches, so the watcher is never kept from writing the index.
const lagShare = 50 * time.Millisecond

// openLagging returns the index as the watcher last left it, and the
// function to call when done with it, when Options.Lag allows it (see
// lagAllowed); nil when a fresh open is needed. The caller holds readMu's
// read lock until done: a fresh open, which takes readMu alone, so finds
// no lagging index searched (one may be held open, and is let go of if
// the fresh open must write the index: see releaseLagging).
func (m *Memory) openLagging(ctx context.Context) (*index.Index, func()) {
	if !m.lagAllowed() {
		return nil, nil
	}
	m.lagMu.Lock()
	l := m.lag
	if old := m.lagOld; l != nil && old != nil && !isDone(l.ready) && !m.keep.WriterOpening() {
		// The next index is being opened, which waits while the watcher
		// applies a batch: search the one before it meanwhile, a batch
		// further behind, rather than wait. Not when a writer of this
		// process waits for the searches of that index to end.
		old.users++
		m.lagMu.Unlock()
		return old.ix, func() { m.releaseLagging(old) }
	}
	if l != nil && (!isDone(l.ready) || time.Since(l.opened) < lagShare) {
		l.users++
		m.lagMu.Unlock()
		select {
		case <-l.ready:
		case <-ctx.Done():
			m.releaseLagging(l)
			return nil, nil
		}
	} else {
		release := func() {}
		if old := l; old != nil && old.err == nil {
			// Still searched (lag holds only indexes in use), so still
			// open: it is held open while its successor opens, for the
			// reads that come meanwhile, unless a writer of this process
			// comes to wait for its searches to end.
			m.lagOld = old
			old.users++
			var once sync.Once
			release = func() {
				once.Do(func() {
					m.lagMu.Lock()
					if m.lagOld == old {
						m.lagOld = nil
					}
					m.lagMu.Unlock()
					m.releaseLagging(old)
				})
			}
			opened, coming := make(chan struct{}), m.keep.WriterComing()
			defer close(opened)
			go func() {
				select {
				case <-coming:
					release()
				case <-opened:
				}
			}()
		}
		l = &lagIndex{ready: make(chan struct{}), users: 1}
		m.lag = l
		m.lagMu.Unlock()
		// Shared with other reads: the first one's cancellation must
		// not end theirs.
		opt := m.indexOptions(context.WithoutCancel(ctx))
		opt.NoRefresh = true
		l.ix, l.err = m.openLag(opt)
		l.opened = time.Now()
		release()
		close(l.ready)
	}
	if l.err != nil {
		m.releaseLagging(l)
		return nil, nil
	}
	return l.ix, func() { m.releaseLagging(l) }
}

// releaseLagging gives back a lagging index; the last reader closes it.
// The newest one, left by its last reader, is held open for lagIdle first,
// unless a writer of this process comes to wait for its searches to end or
// the Memory closes.
func (m *Memory) releaseLagging(l *lagIndex) {
	m.lagMu.Lock()
	l.users--
	if l.users == 0 && m.lag == l && l.err == nil && !l.idled && !m.lagClosed {
		l.users, l.idled = 1, true
		coming := m.keep.WriterComing()
		m.lagHolds.Add(1)
		m.lagMu.Unlock()
		go func() {
			defer m.lagHolds.Done()
			t := time.NewTimer(lagIdle)
			defer t.Stop()
			select {
			case <-t.C:
			case <-coming:
			case <-m.lagDone:
			}
			m.releaseLagging(l)
		}()
		return
	}
	last := l.users == 0
	if last && m.lag == l {
		m.lag = nil
	}
	if last && m.lagOld == l {
		m.lagOld = nil
	}
	m.lagMu.Unlock()
	if last && l.ix != nil {
		l.ix.Close()
	}
}

// isDone reports whether ch is closed.
func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// withIndex runs fn with the index open and fresh.
func (m *Memory) withIndex(ctx context.Context, fn func(*index.Index) error) error {
	if m.keep != nil {
		for {
			m.readMu.RLock()
			if ix, done := m.openLagging(ctx); ix != nil {
				defer m.readMu.RUnlock()
				defer done()
				return fn(ix)
			}
			m.readMu.RUnlock()
			m.readMu.Lock()
			if !m.lagAllowed() {
				defer m.readMu.Unlock()
				break
			}
			// A read before this one brought the index up to date
			// while this one waited: lag behind it with the others.
			m.readMu.Unlock()
		}
	}
	ix, err := m.openIndex(ctx)
	if err != nil {
		return err
	}
	defer ix.Close()
	return fn(ix)
}

// readIndex runs fn on the index as withIndex does, and once more when fn
// finds the index's files damaged: the search that found it left the mark,
// so the second open rebuilds them, and the command answers instead of
// failing. fn must be a read that can run twice.
func (m *Memory) readIndex(ctx context.Context, fn func(*index.Index) error) error {
	err := m.withIndex(ctx, fn)
	if index.IsDamaged(err) && ctx.Err() == nil {
		err = m.withIndex(ctx, fn)
	}
	return err
}

// IndexStatus describes the index as it is, building it first when there
// is none yet.
func (m *Memory) IndexStatus(ctx context.Context) (index.Status, error) {
	if m.keep != nil {
		m.readMu.Lock()
		defer m.readMu.Unlock()
	}
	opt := m.indexOptions(ctx)
	opt.NoRefresh = true
	ix, err := index.Open(newSource(m.st), opt)
	if errors.Is(err, index.ErrNoIndex) || index.IsDamaged(err) {
		// Nothing to look at yet, or nothing to trust: build it, as any
		// reader would.
		opt.NoRefresh = false
		ix, err = index.Open(newSource(m.st), opt)
	}
	if err != nil {
		return index.Status{}, fmt.Errorf("cannot open index: %w", err)
	}
	defer ix.Close()
	return ix.Status()
}

// RebuildIndex builds the index anew from the files.
func (m *Memory) RebuildIndex(ctx context.Context) (index.Stats, error) {
	if m.keep != nil {
		m.readMu.Lock()
		defer m.readMu.Unlock()
	}
	return index.Rebuild(newSource(m.st), m.indexOptions(ctx))
}

// UpdateIndex brings the index up to date with the files.
func (m *Memory) UpdateIndex(ctx context.Context) (index.Stats, error) {
	var st index.Stats
	err := m.withIndex(ctx, func(ix *index.Index) error {
		st = ix.LastUpdate()
		return nil
	})
	return st, err
}

// Prepare does now what the first read would otherwise pay for: it
// brings the index up to date, reads its vectors and query embedder (kept
// by a Warm Memory for the reads after), and loads the token encoding of
// the context plans (encoding; "" is the configured one). A server calls
// it as it starts.
func (m *Memory) Prepare(ctx context.Context, encoding string) error {
	tok, err := plan.NewTokenizer(cmp.Or(encoding, m.cfg.Context.Encoding))
	if err != nil {
		return err
	}
	loaded := make(chan error, 1)
	go func() { loaded <- tok.Load() }()
	err = m.withIndex(ctx, func(ix *index.Index) error { return ix.LoadVectors() })
	return errors.Join(err, <-loaded)
}

// lock takes the store's lock for one write: after this process's other
// writers (writeMu), then the lock file.
func (m *Memory) lock(ctx context.Context) (unlock func(), err error) {
	m.writeMu.Lock()
	unlockFile, err := m.lockFile(ctx)
	if err != nil {
		m.writeMu.Unlock()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			unlockFile()
			m.writeMu.Unlock()
			m.wrote()
		})
	}, nil
}

// wrote records a write of this Memory other than turns: the reads that
// start after it must see it (Options.Lag). A lagging Memory brings the
// index up to it here, in the writer, so that reads go on searching the
// index as the watcher leaves it instead of each waiting for the watcher;
// when that cannot be done, the write is counted and the next read brings
// the index up to date itself.
func (m *Memory) wrote() {
	if !m.caughtUp() {
		m.writes.Add(1)
	}
}

// caughtUp asks the watcher to take in what was committed so far and
// reports whether the index now holds the store's head of before the
// request. Lagging indexes opened before then take no new readers.
func (m *Memory) caughtUp() bool {
	if !m.opt.Lag || m.watching == nil || !isDone(m.watching) || m.opt.Fresh != nil {
		return false
	}
	s := m.syncer.Load()
	if s == nil {
		return false
	}
	head, err := m.st.Head()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.Sync(ctx) != nil {
		return false
	}
	// The index opened to check is the one the reads after the write
	// search (it is searched past the 5 s of the check).
	opt := m.indexOptions(context.Background())
	opt.NoRefresh = true
	ix, err := m.openLag(opt)
	if err != nil {
		return false
	}
	if ix.Commit() != head {
		ix.Close()
		return false // busy, or newer commits came meanwhile: the reader sees to it
	}
	// Nothing opened before now may take new readers, not even while
	// its successor opens; this one takes them, and is held open a
	// moment for them (see releaseLagging).
	ready := make(chan struct{})
	close(ready)
	l := &lagIndex{ready: ready, ix: ix, opened: time.Now(), users: 1}
	m.lagMu.Lock()
	m.lag, m.lagOld = l, nil
	m.lagMu.Unlock()
	m.releaseLagging(l)
	return true
}

// lockFile takes the store's lock file for one commit. This process's
// committers queue on fileMu first: the lock file is polled, and a writer
// that commits often (the turn writer) would otherwise win it again and
// again while another waits out its timeout.
func (m *Memory) lockFile(ctx context.Context) (unlock func(), err error) {
	m.fileMu.Lock()
	l, err := m.st.Lock(ctx, m.opt.LockTimeout)
	if err != nil {
		m.fileMu.Unlock()
		return nil, err
	}
	m.holding.Store(true)
	var once sync.Once
	return func() {
		once.Do(func() {
			if h, err := m.st.Head(); err == nil {
				m.knownHead.Store(&h)
			}
			m.holding.Store(false)
			l.Unlock()
			m.fileMu.Unlock()
		})
	}, nil
}

// DetectProject is the project of the directory dir: MIRA_PROJECT (env),
// else .mira/project.yaml, the git root or a package manifest above dir.
func DetectProject(dir, env string) string { return mem.DetectProject(dir, env).Name }

func cleanTags(tags []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// Watch keeps the index fresh until ctx ends, as mira-index watch does:
// each burst of file events and each new commit is applied in one batch,
// reported to events (nil: not reported). Requests made through sync (nil:
// none) are answered once the watcher is up. It returns an error wrapping
// index.ErrWatching when another process already watches the store.
func (m *Memory) Watch(ctx context.Context, events func(index.Event), sync *index.Syncer) error {
	return index.Watch(ctx, newSource(m.st), m.indexOptions(ctx), events, sync)
}

// readOnlyIndexDir returns where to keep the index of a store that cannot
// be written (a read-only mount, a colleague's store), "" for a store that
// keeps its own (see indexDirFor).
func readOnlyIndexDir(root string) (string, error) {
	dir := filepath.Join(root, ".index")
	if _, err := os.Stat(dir); err != nil {
		dir = root
	}
	if writable(dir) {
		return "", nil
	}
	return indexDirFor(root, os.Geteuid())
}

// indexDirFor returns the index directory, made if need be, of the store
// at root for user uid: one per store path in the user's cache directory,
// so that later commands find it made, else in a directory of the user's
// own under the temporary directory. Every directory of it from the
// user's is private to the user, or made so: an index another user could
// write would let them choose what this one's searches find. One that
// belongs to someone else, or is a link, is refused.
func indexDirFor(root string, uid int) (string, error) {
	sum := sha256.Sum256([]byte(root))
	name := hex.EncodeToString(sum[:8])
	if base, err := os.UserCacheDir(); err == nil && writable(filepath.Dir(base)) && os.MkdirAll(base, 0o700) == nil && ownDir(base, uid) {
		return privateDirs(base, uid, "mira", "index", name)
	}
	base := os.TempDir()
	return privateDirs(base, uid, fmt.Sprintf("mira-%d", uid), "index", name)
}

// privateDirs makes the directories names under base, one in the other,
// each private to uid (see privateDir), and returns the last.
func privateDirs(base string, uid int, names ...string) (string, error) {
	dir := base
	for _, n := range names {
		dir = filepath.Join(dir, n)
		if err := privateDir(dir, uid, true); err != nil {
			return "", fmt.Errorf("cannot keep the index in %s: %w", dir, err)
		}
	}
	return dir, nil
}

// diskFull reports whether err is a write refused for want of space: the
// disk, or the user's quota, is full.
func diskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
