package mira

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miramem/mira/code"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/internal/treewatch"
	"github.com/miramem/mira/mem"
)

// The code index's results, as the use cases return them.
type (
	CodeCard       = code.Card
	CodeTouchpoint = code.Touchpoint
	CodeFileHit    = code.FileHit
	CodeSymbolHit  = code.SymbolHit
	CodeEdge       = code.Edge
	CodeMap        = code.Map
	CodeModule     = code.Module
	CodeQuery      = code.Query
	CodeStats      = code.Stats
	CodeStatus     = code.Status
	CodeLang       = code.Lang
	CodeCochange   = code.Cochange
	CodeExpert     = code.Expert
	CodeCommit     = code.Commit
)

// CodeOptions say which project's code to open and how.
type CodeOptions struct {
	// Root is the project's root directory; "" means the one ProjectRoot
	// finds from the working directory.
	Root string
	// Dir is where the index lives; "" means the user's cache directory
	// (see code.Options.Dir). It is never committed.
	Dir string
	// Memory, when set, links memories to the code they name: a card
	// lists the memories that point at it, and Touchpoints and Files
	// favour code that memories point at (see Code.Touchpoints). The
	// caller keeps it open while the Code is, and closes it.
	Memory *Memory
	// Watch keeps the index fresh with a file watcher, for a long-running
	// process: a read then updates the index only when something under
	// the root changed since the last update, instead of looking at
	// every file's size and time. A watcher that cannot start (too many
	// directories for the system's limit, say) is reported through Warn
	// and reads go back to looking at the files.
	Watch bool
	// Encoding is the tiktoken encoding that counts the tokens of maps
	// and budgets; "" means the Memory's context.encoding, else
	// o200k_base.
	Encoding string
	// Warn hears what does not fail a call: a file that could not be
	// read or parsed, an update that failed (the answer then comes from
	// the index as it was, its changed files marked stale), a watcher that
	// stopped. Nil discards them.
	Warn func(path string, err error)
	// Progress reports long index work as files done out of total.
	Progress func(done, total int)
	// Getenv reads the environment (XDG_CACHE_HOME); nil means os.Getenv.
	Getenv func(string) string
}

// ProjectRoot is the root of the project the directory dir belongs to, as
// the memory detects projects (mem.DetectProject): the directory holding
// .mira/project.yaml, else the git root, else the nearest go.mod,
// Cargo.toml, package.json or pyproject.toml, else dir itself.
// MIRA_PROJECT names a project; it does not move its root.
func ProjectRoot(dir string) string { return mem.DetectProject(dir, "").Root }

// Code is a project's code index with the use cases of its front ends.
// Every read first brings the index up to date (or, with Watch, does so
// when the watcher saw a change), so an answer reflects the files as they
// are; a file that changes between that update and the answer is marked
// Stale in it. Its methods are safe for concurrent use.
type Code struct {
	ix   *code.Index
	opt  CodeOptions
	root string
	dir  string // the index's directory, with a watcher

	watch *treewatch.Watcher // nil: look at the files before each read
	// filter tells the watcher which directories the index leaves out;
	// it is made again when a .gitignore changes.
	filter atomic.Pointer[code.DirFilter]
	updMu  sync.Mutex // one update at a time
	seen   uint64     // the watcher's generation at the last good update
	// needAll says an update with the watcher's paths failed: the next
	// looks at every file (under updMu).
	needAll bool
	// gen counts the updates that changed the index: links of memories
	// to code are recomputed after one.
	gen atomic.Uint64
	// updates counts the updates run, and fullUpdates those that looked
	// at every file, for tests.
	updates, fullUpdates atomic.Int64

	tokOnce sync.Once
	tok     *plan.Encoding
	tokErr  error

	links codeLinks
}

// OpenCode opens the code index of a project, building nothing yet: the
// first read (or Update) does.
func OpenCode(ctx context.Context, opt CodeOptions) (*Code, error) {
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	root := opt.Root
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("cannot find the project: %w", err)
		}
		root = ProjectRoot(wd)
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("cannot find the project: %w", err)
	}
	if fi, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("project root %s: not a directory", root)
	}
	ix, err := code.Open(ctx, code.Options{Root: root, Dir: opt.Dir, Warn: opt.Warn, Progress: opt.Progress, Getenv: opt.Getenv})
	if err != nil {
		return nil, err
	}
	c := &Code{ix: ix, opt: opt, root: root}
	c.links = codeLinks{memory: opt.Memory, ix: ix, root: root, gen: &c.gen, warn: c.warn}
	if opt.Watch {
		c.startWatch()
	}
	return c, nil
}

// Root returns the project's root directory.
func (c *Code) Root() string { return c.root }

// Close stops the watcher and closes the index.
func (c *Code) Close() error {
	var err error
	if c.watch != nil {
		err = c.watch.Close()
	}
	return errors.Join(err, c.ix.Close())
}

func (c *Code) warn(path string, err error) {
	if c.opt.Warn != nil {
		c.opt.Warn(path, err)
	}
}

// startWatch starts the watcher, or says why reads will look at the files
// instead.
func (c *Code) startWatch() {
	var gits []string
	if _, gitDir, common := code.GitDirs(c.root); gitDir != "" {
		gits = []string{filepath.Join(gitDir, "HEAD"), filepath.Join(common, "packed-refs"), filepath.Join(common, "refs")}
	}
	c.dir = cmp.Or(c.opt.Dir, c.ix.Status().Dir)
	dir, _ := filepath.Abs(c.dir)
	if c.dir != "" {
		os.MkdirAll(dir, 0o700) // the cookie directory; the index makes it anyway
	}
	c.filter.Store(code.NewDirFilter(c.root))
	w, err := treewatch.Start(treewatch.Options{
		Root: c.root,
		// The directories the walk never enters, by name or by the
		// project's .gitignore files, and the index's own.
		Skip: func(rel string) bool {
			return c.filter.Load().Skip(rel) || dir != "" && filepath.Join(c.root, filepath.FromSlash(rel)) == dir
		},
		Git:       gits,
		CookieDir: dir,
	})
	if err != nil {
		c.warn("", fmt.Errorf("file watcher: %w; each read looks at the files instead", err))
		return
	}
	if err := w.Err(); err != nil {
		w.Close()
		c.warn("", fmt.Errorf("file watcher: %w; each read looks at the files instead", err))
		return
	}
	c.watch = w
}

// Update brings the index up to date now; its stats say what it did and
// how long it took.
func (c *Code) Update(ctx context.Context) (CodeStats, error) {
	start := time.Now()
	c.updMu.Lock()
	defer c.updMu.Unlock()
	var g uint64
	if c.watch != nil {
		c.watch.Sync(ctx)
		g = c.watch.Gen()
	}
	st, err := c.updateLocked(ctx, g)
	st.Took = time.Since(start)
	return st, err
}

// updateLocked runs an update; g is the watcher's generation it takes in.
// With a watcher whose changes are known, only the files it saw change
// are looked at (code.Index.UpdatePaths); else every file is.
func (c *Code) updateLocked(ctx context.Context, g uint64) (CodeStats, error) {
	all := true
	var paths []string
	if c.watch != nil {
		ch := c.watch.Take()
		if ch.Ignore {
			// What the watcher leaves out may have changed.
			c.filter.Store(code.NewDirFilter(c.root))
			if err := c.watch.Rescan(); err != nil {
				c.warn("", fmt.Errorf("file watcher: %w", err))
			}
		}
		// A .gitignore that changed may change what is indexed anywhere.
		all = ch.All || ch.Ignore || c.needAll || c.watch.Err() != nil
		if !all {
			if len(ch.Paths) == 0 {
				c.seen = g // events already taken in by the last update
				return CodeStats{}, nil
			}
			paths = make([]string, 0, len(ch.Paths))
			for _, p := range ch.Paths {
				if r, err := filepath.Rel(c.root, p); err == nil {
					paths = append(paths, filepath.ToSlash(r))
				}
			}
		}
	}
	c.updates.Add(1)
	var st CodeStats
	var err error
	if all {
		c.fullUpdates.Add(1)
		st, err = c.ix.Update(ctx)
	} else {
		st, err = c.ix.UpdatePaths(ctx, paths)
	}
	if err != nil {
		// The paths taken are lost: look at every file next time.
		c.needAll = c.watch != nil
		return st, err
	}
	if c.watch != nil {
		c.seen, c.needAll = g, false
	}
	if st.Added+st.Changed+st.Removed > 0 || c.gen.Load() == 0 {
		c.gen.Add(1)
	}
	return st, nil
}

// fresh brings the index up to date before a read: always without a
// watcher, when it saw a change with one. An update that fails is
// reported through Warn and the read goes on with the index as it is,
// whose changed files its answers mark stale; only a cancelled ctx fails
// the read.
func (c *Code) fresh(ctx context.Context) error {
	var g uint64
	if c.watch != nil {
		if err := c.watch.Sync(ctx); err != nil {
			return err
		}
		g = c.watch.Gen()
		if err := c.watch.Err(); err == nil {
			c.updMu.Lock()
			same := c.seen == g
			c.updMu.Unlock()
			if same {
				return nil
			}
		}
	}
	c.updMu.Lock()
	defer c.updMu.Unlock()
	if c.watch != nil && c.seen == g && c.watch.Err() == nil {
		return nil // another read updated it meanwhile
	}
	if _, err := c.updateLocked(ctx, g); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.warn("", fmt.Errorf("code index not updated: %w (answers from changed files are marked stale)", err))
	}
	return nil
}

// Status describes the index as it is, and which files changed since it
// was updated; it updates nothing.
func (c *Code) Status(ctx context.Context) (CodeStatus, error) {
	if err := ctx.Err(); err != nil {
		return CodeStatus{}, err
	}
	return c.ix.Status(), nil
}

// Symbols returns up to k definitions matching q (a name, part of one, or
// words), best first; k is at least 1.
func (c *Code) Symbols(ctx context.Context, q string, k int) ([]CodeSymbolHit, error) {
	return answer(ctx, c, atLeast("k", k, 1), func() []CodeSymbolHit { return c.ix.Symbols(q, k) })
}

// Card describes one definition: ref is a name ("Execute"), a qualified
// one ("Command.Execute"), a place ("cmd/run.go:42") or a file's symbol
// ("cmd/run.go#Execute"). With body its snippet is the whole definition.
// With a Memory, its Memories list those that point at it (see
// Touchpoints).
func (c *Code) Card(ctx context.Context, ref string, body bool) (CodeCard, error) {
	if err := c.fresh(ctx); err != nil {
		return CodeCard{}, err
	}
	card, err := c.ix.Card(ref, body)
	if err != nil {
		return card, err
	}
	if c.opt.Memory != nil {
		ls := c.links.find(ctx, strings.TrimSpace(card.Name+" "+card.Parent+" "+card.Path))
		card.Memories = ls.about(card)
	}
	return card, nil
}

// Callers returns the call sites of sym and, up to depth levels (at least
// 1), of its callers' callers.
func (c *Code) Callers(ctx context.Context, sym string, depth int) ([]CodeEdge, error) {
	return answer(ctx, c, atLeast("depth", depth, 1), func() []CodeEdge { return c.ix.Callers(sym, depth) })
}

// Callees returns the calls sym makes and, up to depth levels (at least
// 1), those its callees make.
func (c *Code) Callees(ctx context.Context, sym string, depth int) ([]CodeEdge, error) {
	return answer(ctx, c, atLeast("depth", depth, 1), func() []CodeEdge { return c.ix.Callees(sym, depth) })
}

// Map returns the project's module tree and its central definitions,
// fitted under budget tokens (at least 1) of the options' encoding.
func (c *Code) Map(ctx context.Context, budget int) (CodeMap, error) {
	if err := atLeast("budget", budget, 1); err != nil {
		return CodeMap{}, err
	}
	count, err := c.counter()
	if err != nil {
		return CodeMap{}, err
	}
	if err := c.fresh(ctx); err != nil {
		return CodeMap{}, err
	}
	return c.ix.Map(budget, count), nil
}

// Touchpoints returns the definitions a request most likely needs, each
// with an excerpt and why it was chosen. q.Count defaults to the options'
// encoding (loaded only when q.Budget asks for counting). With a Memory,
// memories that point at code raise it: those recalled for q.Text count
// fully, the newest others of the store a quarter; each touchpoint says
// in Why which memory pointed at it ("memory ID: decision: prices are
// integers in cents") and lists them in Memories.
func (c *Code) Touchpoints(ctx context.Context, q CodeQuery) ([]CodeTouchpoint, error) {
	ls, err := c.prepare(ctx, &q)
	if err != nil {
		return nil, err
	}
	tps := c.ix.Touchpoints(q)
	for i := range tps {
		tp := &tps[i]
		tp.Memories = ls.about(tp.Card)
		tp.Why = append(tp.Why, whyMemories(tp.Memories)...)
	}
	return tps, nil
}

// Files returns the files a request most likely needs, raised by the
// memories that point at them as Touchpoints are.
func (c *Code) Files(ctx context.Context, q CodeQuery) ([]CodeFileHit, error) {
	ls, err := c.prepare(ctx, &q)
	if err != nil {
		return nil, err
	}
	hits := c.ix.Files(q)
	for i := range hits {
		hits[i].Why = append(hits[i].Why, whyMemories(ls.aboutFile(hits[i].Path))...)
	}
	return hits, nil
}

// whyMemories are the reasons a result gives for the memories that point
// at it: the first few by name ("memory ID: kind: first line"), the
// others counted.
func whyMemories(ms []string) []string {
	var why []string
	for i, m := range ms {
		if i == maxWhyMemories {
			why = append(why, fmt.Sprintf("memory: %d more point here", len(ms)-i))
			break
		}
		why = append(why, "memory "+m)
	}
	return why
}

// prepare checks q, makes the index fresh and completes q: its
// tokenizer, and the boosts of the memories that point at code.
func (c *Code) prepare(ctx context.Context, q *CodeQuery) (*linkSet, error) {
	if err := checkCodeQuery(*q); err != nil {
		return nil, err
	}
	if q.Count == nil && q.Budget > 0 {
		count, err := c.counter()
		if err != nil {
			return nil, err
		}
		q.Count = count
	}
	if err := c.fresh(ctx); err != nil {
		return nil, err
	}
	ls := &linkSet{}
	if c.opt.Memory != nil && strings.TrimSpace(q.Text) != "" {
		ls = c.links.find(ctx, q.Text)
		if len(ls.boost) > 0 {
			b := make(map[string]float64, len(q.Boost)+len(ls.boost))
			for k, v := range ls.boost {
				b[k] += v
			}
			for k, v := range q.Boost {
				b[k] += v
			}
			q.Boost = b
		}
	}
	return ls, nil
}

// Cochange returns up to k files (k at least 1) that changed in the same
// commits as path, strongest first.
func (c *Code) Cochange(ctx context.Context, path string, k int) ([]CodeCochange, error) {
	return answer(ctx, c, atLeast("k", k, 1), func() []CodeCochange { return c.ix.Cochange(c.rel(path), k) })
}

// Experts returns the authors who changed path, most relevant first.
func (c *Code) Experts(ctx context.Context, path string) ([]CodeExpert, error) {
	return answer(ctx, c, nil, func() []CodeExpert { return c.ix.Experts(c.rel(path)) })
}

// Log returns up to k recent commits (k at least 1) touching a path or a
// symbol's file, newest first.
func (c *Code) Log(ctx context.Context, pathOrSymbol string, k int) ([]CodeCommit, error) {
	return answer(ctx, c, atLeast("k", k, 1), func() []CodeCommit { return c.ix.Log(c.rel(pathOrSymbol), k) })
}

// answer is a read: it refuses the call for bad (the check of its
// arguments, nil when they are good), else brings the index up to date
// and returns what ask finds in it.
func answer[T any](ctx context.Context, c *Code, bad error, ask func() T) (T, error) {
	var none T
	if bad != nil {
		return none, bad
	}
	if err := c.fresh(ctx); err != nil {
		return none, err
	}
	return ask(), nil
}

// checkCodeQuery refuses a query of Touchpoints or Files that asks for
// nothing: no text, a negative K or Budget (0 is the default for both).
func checkCodeQuery(q CodeQuery) error {
	switch {
	case strings.TrimSpace(q.Text) == "":
		return invalidField("text", errors.New("is empty: say what the task is"))
	case q.K < 0:
		return invalidField("k", errors.New("must be at least 1"))
	case q.Budget < 0:
		return invalidField("budget", errors.New("must be at least 0"))
	}
	return nil
}

// atLeast refuses a count below least, naming its field.
func atLeast(field string, n, least int) error {
	if n < least {
		return invalidField(field, fmt.Errorf("must be at least %d", least))
	}
	return nil
}

// Rel returns path as the index names files: slash-separated and relative
// to the root, whether it was given relative to the root, to the working
// directory, or absolute. A path outside the root, or a name that is not
// a path, comes back as it was given.
func (c *Code) Rel(path string) string { return c.rel(path) }

func (c *Code) rel(p string) string {
	if p == "" {
		return p
	}
	if filepath.IsAbs(p) {
		if r, err := filepath.Rel(c.root, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(r)
		}
		return p
	}
	if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(p))); err == nil {
		return filepath.ToSlash(filepath.Clean(p))
	}
	// Relative to the working directory, when that is inside the root.
	if abs, err := filepath.Abs(p); err == nil {
		if _, err := os.Stat(abs); err == nil {
			if r, err := filepath.Rel(c.root, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return filepath.ToSlash(r)
			}
		}
	}
	return p
}

// Count counts tokens as the options' encoding does, loading it the first
// time.
func (c *Code) Count(s string) (int, error) {
	count, err := c.counter()
	if err != nil {
		return 0, err
	}
	return count(s), nil
}

// counter returns the tokenizer of the options' encoding.
func (c *Code) counter() (func(string) int, error) {
	c.tokOnce.Do(func() {
		enc := c.opt.Encoding
		if enc == "" && c.opt.Memory != nil {
			enc = c.opt.Memory.cfg.Context.Encoding
		}
		c.tok, c.tokErr = plan.NewTokenizer(cmp.Or(enc, plan.DefaultEncoding))
		if c.tokErr == nil {
			c.tokErr = c.tok.Load()
		}
	})
	if c.tokErr != nil {
		return nil, c.tokErr
	}
	return c.tok.Count, nil
}
