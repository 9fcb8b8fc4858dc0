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
// Turns) never wait for a write. Open with Options.Index.Warm in a
// long-running process: the index then stays open and a file watcher keeps
// it fresh (index.Reader), so a recall answers from warm memory and still
// sees a file saved a moment ago.
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
	// Index says how the index is shared between the reads of this
	// Memory: Index.Warm keeps it open between calls with a file watcher
	// that keeps it fresh, for a long-running process (see
	// index.ReaderOptions).
	Index index.ReaderOptions
	// Records, when set, keeps the records of the entry files read, for
	// as long as each file is unchanged, across the Memories of a
	// long-running process. Index.Warm makes one of its own when it is nil.
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
	ix       *index.Reader // nil for a detached Memory
	cache    *RecordCache  // records of files read, in a warm Memory

	warnMu sync.Mutex
	warned map[string]bool

	// writeMu serialises this process's writers before they take the
	// store's lock file, which is not reentrant.
	writeMu sync.Mutex
	// fileMu queues this process's commits in front of the lock file
	// (lockFile).
	fileMu sync.Mutex
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
	m := &Memory{st: st, home: st.Root, indexDir: indexDir, opt: opt, cfg: cfg, emb: emb, rr: rr, cache: opt.Records}
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
	// Every open of the index uses the configured embedder: two callers
	// with different ones would make the index re-embed the store back
	// and forth.
	m.ix = index.NewReader(func() index.Source { return newSource(st) }, index.Options{
		Warn: m.warn, Now: time.Now, LockTimeout: 5 * time.Second,
		Progress: opt.Progress, Embedder: emb, Dir: indexDir,
	}, opt.Index)
	if opt.Index.Warm {
		if m.cache == nil {
			m.cache = &RecordCache{}
		}
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
	if m.ix != nil {
		return m.ix.Close()
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

// withIndex runs fn with the index open and fresh (see index.Reader.Read).
func (m *Memory) withIndex(ctx context.Context, fn func(*index.Index) error) error {
	return m.ix.Read(ctx, fn)
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
	return m.ix.Status(ctx)
}

// RebuildIndex builds the index anew from the files.
func (m *Memory) RebuildIndex(ctx context.Context) (index.Stats, error) {
	return m.ix.Rebuild(ctx)
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
// start after it must see it (see index.Reader.Wrote).
func (m *Memory) wrote() { m.ix.Wrote() }

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
	m.ix.Locked()
	var once sync.Once
	return func() {
		once.Do(func() {
			m.ix.Unlocked()
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
	return m.ix.Watch(ctx, events, sync)
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
