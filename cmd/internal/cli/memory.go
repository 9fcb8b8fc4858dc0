package cli

import (
	"context"
	"errors"
	buildversion "github.com/miramem/mira/cmd/internal/version"
	"sync"

	"github.com/miramem/mira"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/paths"
	"github.com/miramem/mira/mem"
)

// open opens the memory the common options name, for one command.
// project is the current project ("" for none).
func (c *Common) open(ctx context.Context, o *IO, command, project string) (*mira.Memory, error) {
	return c.openWith(ctx, o, command, project, openOptions{})
}

// openOptions are how a command opens the memory.
type openOptions struct {
	warm     bool // keep it open and fresh (a server)
	existing bool // a reader: never create the store
	absent   bool // with existing, a missing store is an empty one (dry runs)
	lag      bool // reads do not wait for the watcher (index.ReaderOptions.Lag)
}

// openWith opens the memory as how says.
func (c *Common) openWith(ctx context.Context, o *IO, command, project string, how openOptions) (*mira.Memory, error) {
	if c.Home == "" {
		return nil, usagef("no store: set MIRA_HOME or --home")
	}
	home, err := paths.ExpandHome(c.Home)
	if err != nil {
		return nil, err
	}
	opt := mira.Options{
		Home: home, Command: command, Config: o.config(), Getenv: o.Getenv,
		Embedder: c.Embed, LockTimeout: c.LockTimeout, Project: project,
		Warn: (&warnOnce{o: o}).warn, Records: o.records, Existing: how.existing, Absent: how.absent,
		Index: index.ReaderOptions{Warm: how.warm, Lag: how.lag, Keep: o.keep, Fresh: o.ready},
	}
	if opt.Embedder == "" {
		opt.Embedder = mira.BuiltinEmbedder
	}
	if o.ErrTTY && !how.warm {
		if o.progress == nil {
			o.progress = newProgress(o)
		}
		opt.Progress = o.progress.update
	}
	return mira.Open(ctx, opt)
}

// OpenKept opens the memory for a session that searches it many times:
// the index's vectors and model stay loaded between its calls.
func (c *Common) OpenKept(ctx context.Context, o *IO, command, project string) (*mira.Memory, error) {
	o.keep = new(index.Keep)
	return c.open(ctx, o, command, project)
}

// OpenWarm opens the memory for a server: the index stays open and a
// file watcher keeps it fresh (mira.Options.Warm); with lag, reads do not
// wait for the watcher to take in the latest commits (index.ReaderOptions.Lag).
func (c *Common) OpenWarm(ctx context.Context, o *IO, command, project string, lag bool) (*mira.Memory, error) {
	return c.openWith(ctx, o, command, project, openOptions{warm: true, lag: lag})
}

// Project is the current project: flag when set, else the one detected
// from the working directory (or $MIRA_PROJECT).
func Project(o *IO, flag string) string { return project(o, flag) }

// Warner prints each warning once per command: a broken file with its
// path, anything else as it is.
type Warner = warnOnce

// NewWarner returns a Warner printing to o.
func NewWarner(o *IO) *Warner { return &warnOnce{o: o} }

// Warn prints a warning unless it was printed before.
func (w *warnOnce) Warn(path string, err error) { w.warn(path, err) }

// project is the current project: the flag's, else the one detected from
// the working directory (or $MIRA_PROJECT).
func project(o *IO, flag string) string {
	if flag != "" {
		return flag
	}
	if wd, err := o.Getwd(); err == nil {
		return mem.DetectProject(wd, o.Getenv("MIRA_PROJECT")).Name
	}
	return ""
}

// warnOnce prints each warning once per command.
type warnOnce struct {
	o    *IO
	mu   sync.Mutex
	seen map[string]bool
}

func (w *warnOnce) warn(path string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	var pe *mem.ParseError
	isParse := errors.As(err, &pe)
	if isParse {
		path = ""
	}
	key := path + "\x00" + err.Error()
	if w.seen[key] {
		return
	}
	w.seen[key] = true
	switch {
	case path != "":
		w.o.Warnf("warning: %s: %v", path, err)
	case isParse:
		w.o.Warnf("warning: skipping %v", err)
	default:
		w.o.Warnf("warning: %v", err)
	}
}

// version is the module version the binary was built from.
func version() string { return buildversion.Version() }
