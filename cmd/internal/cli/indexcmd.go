package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	gosync "sync"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/cmd/internal/relay"
	"github.com/miramem/mira/cmd/internal/relay/server"
	"github.com/miramem/mira/index"
)

// IndexCmd is mira-index.
type IndexCmd struct {
	Common
	Status  IndexStatusCmd  `cmd:"" help:"Show entries, index age, stale files and embedder."`
	Update  IndexUpdateCmd  `cmd:"" help:"Bring the index up to date now (every reading command does this by itself)."`
	Rebuild IndexRebuildCmd `cmd:"" help:"Rebuild the index from the entry files (into a new directory, then switch over)."`
	Watch   IndexWatchCmd   `cmd:"" help:"Keep the index fresh as files change, and answer mira-recall from memory, until interrupted."`
}

// Index is the main of mira-index. With relay.AsFlag first it runs the
// command named there instead: the small clients of mira-recall and
// mira-remember do that when no watcher serves the store.
func Index(args []string, o *IO) int {
	if len(args) > 0 && strings.HasPrefix(args[0], relay.AsFlag) {
		switch name := strings.TrimPrefix(args[0], relay.AsFlag); name {
		case "mira-recall":
			return Recall(args[1:], o)
		case "mira-remember":
			return Remember(args[1:], o)
		default:
			fmt.Fprintf(o.Err, "mira-index: cannot run %q\n", name)
			return ExitUsage
		}
	}
	return Main("mira-index", "Inspect and maintain Mira's disposable search index ($MIRA_HOME/.index/).", &IndexCmd{}, args, o)
}

// AfterApply gives the subcommands the options every command takes, which
// mira-index takes before or after the subcommand's name.
func (c *IndexCmd) AfterApply() error {
	c.Status.Common, c.Update.Common, c.Rebuild.Common, c.Watch.Common = &c.Common, &c.Common, &c.Common, &c.Common
	return nil
}

// IndexStatusCmd is mira-index status.
type IndexStatusCmd struct {
	*Common `kong:"-"`
}

func (c *IndexStatusCmd) run(ctx context.Context, o *IO) error {
	m, err := c.openWith(ctx, o, "mira-index", "", openOptions{existing: true})
	if err != nil {
		return err
	}
	defer m.Close()
	s, err := m.IndexStatus(ctx)
	if err != nil {
		return err
	}
	if !o.textOutput(c.Output) {
		w := newRecordWriter(o.Out)
		w.Write(s)
		return w.Flush()
	}
	age := "never"
	if !s.Updated.IsZero() {
		age = time.Since(s.Updated).Round(time.Second).String() + " ago"
	}
	fmt.Fprintf(o.Out, "store:    %s\n", m.Root())
	fmt.Fprintf(o.Out, "entries:  %d indexed\n", s.Entries)
	fmt.Fprintf(o.Out, "updated:  %s (built %s)\n", age, s.Built.Local().Format(time.DateTime))
	fmt.Fprintf(o.Out, "stale:    %s (changed on disk or by commits since the index saw them)\n", files(s.Stale))
	fmt.Fprintf(o.Out, "broken:   %s (cannot be parsed; not indexed until fixed)\n", files(s.Broken))
	fmt.Fprintf(o.Out, "vectors:  %d (%d pending: embedding failed, retried later)\n", s.Vectors, s.Pending)
	fmt.Fprintf(o.Out, "commit:   %s\n", s.Commit)
	fmt.Fprintf(o.Out, "version:  %d\n", s.Version)
	fmt.Fprintf(o.Out, "embedder: %s\n", s.Embedder)
	fmt.Fprintf(o.Out, "size:     %.1f MB\n", float64(s.Size)/1e6)
	if s.Watcher && s.WatcherPID > 0 {
		fmt.Fprintf(o.Out, "watcher:  true (pid %d)\n", s.WatcherPID)
	} else {
		fmt.Fprintf(o.Out, "watcher:  %v\n", s.Watcher)
	}
	return nil
}

// files is "1 file" or "N files".
func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// IndexUpdateCmd is mira-index update.
type IndexUpdateCmd struct {
	*Common `kong:"-"`
}

func (c *IndexUpdateCmd) run(ctx context.Context, o *IO) error {
	m, err := c.openWith(ctx, o, "mira-index", "", openOptions{existing: true})
	if err != nil {
		return err
	}
	defer m.Close()
	_, err = m.UpdateIndex(ctx)
	return err
}

// IndexRebuildCmd is mira-index rebuild.
type IndexRebuildCmd struct {
	*Common `kong:"-"`
}

func (c *IndexRebuildCmd) run(ctx context.Context, o *IO) error {
	bulkGC(rebuildMemoryLimit)
	m, err := c.openWith(ctx, o, "mira-index", "", openOptions{existing: true})
	if err != nil {
		return err
	}
	defer m.Close()
	start := time.Now()
	stats, err := m.RebuildIndex(ctx)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if o.textOutput(c.Output) || o.ErrTTY {
		fmt.Fprintf(o.Err, "mira-index: indexed %d entries in %s\n", stats.Docs, time.Since(start).Round(time.Millisecond))
	}
	if !o.textOutput(c.Output) {
		rw := newRecordWriter(o.Out)
		rw.Write(stats)
		return rw.Flush()
	}
	return nil
}

// IndexWatchCmd is mira-index watch.
type IndexWatchCmd struct {
	*Common  `kong:"-"`
	Verbose  bool          `short:"v" help:"Print each batch of changes, and each recall answered, on stderr."`
	Serve    bool          `help:"Answer mira-recall through .index/recall.sock, from this warm process (--no-serve: only keep the index fresh)." default:"true" negatable:""`
	OnDemand bool          `name:"on-demand" help:"Run as the server mira-recall starts when nothing answers it: leave quietly when another server has the store, and stop after --idle-exit without a recall."`
	IdleExit time.Duration `name:"idle-exit" help:"Stop after this long without a recall to answer (0: never; with --on-demand, 0 means recall.serve_idle, else ${serve_idle})." placeholder:"DURATION"`
	// ReadyFD is set by the client that starts a server on demand: the
	// descriptor of a pipe to tell it the server listens (relay.ReadyFD).
	ReadyFD int `name:"ready-fd" hidden:"" help:"Write a byte to this descriptor once answering recalls, then close it."`
}

func (c *IndexWatchCmd) run(ctx context.Context, o *IO) error {
	if c.OnDemand && !c.Serve {
		return usagef("--on-demand serves recalls: it cannot go with --no-serve")
	}
	var ready *os.File
	if c.ReadyFD > 2 {
		// Closed on every way out: the client then stops waiting on it.
		ready = relay.ReadyPipe(c.ReadyFD)
		defer func() {
			if ready != nil {
				ready.Close()
			}
		}()
	}
	idle := c.IdleExit
	if c.OnDemand && idle == 0 {
		var err error
		if idle, err = mira.ServeIdle(o.config()); err != nil {
			return err
		}
	}
	if idle < 0 {
		return usagef("--idle-exit must not be negative")
	}
	// A watcher catches up with the store first, which may be a rebuild,
	// then lives on: the collection target of bulk work suits both.
	bulkGC(rebuildMemoryLimit)
	// The watcher's batches and the recalls it serves share what is kept
	// open: a batch that writes must first let go of the kept index.
	keep := new(index.Keep)
	defer keep.Release()
	o.keep = keep
	m, err := c.openWith(ctx, o, "mira-index", "", openOptions{existing: true})
	if err != nil {
		return err
	}
	defer m.Close()
	if c.Serve {
		// One server per store, decided before the first batch: a second
		// one started at the same moment leaves at once.
		unlock, err := relay.LockServe(m.Root())
		switch {
		case errors.Is(err, relay.ErrServed) && c.OnDemand:
			if c.Verbose {
				o.Warnf("another server answers recalls for %s", m.Root())
			}
			return nil
		case errors.Is(err, relay.ErrServed):
			return fmt.Errorf("watch: %w (it answers recalls for %s)", index.ErrWatching, m.Root())
		case err != nil && c.OnDemand:
			return fmt.Errorf("watch: %w", err)
		case err != nil:
			o.Warnf("warning: not answering recalls: %v", err)
			c.Serve = false
		default:
			defer unlock()
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		sync = index.NewSyncer()
		srv  *server.Server
		mu   gosync.Mutex // guards srv against the idle check
	)
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		if srv != nil {
			srv.Close()
		}
	}()
	if idle > 0 {
		go c.exitWhenIdle(ctx, cancel, o, m.Root(), idle, func() time.Duration {
			mu.Lock()
			defer mu.Unlock()
			if srv == nil {
				return 0 // still catching up: that is no idleness
			}
			return srv.Idle()
		})
	}
	err = m.Watch(ctx, func(ev index.Event) {
		switch {
		case ev.Err != nil:
			o.Warnf("warning: %v (retried with the next change)", ev.Err)
		case c.Verbose:
			o.Warnf("%s indexed %d, removed %d, broken %d (%d entries, %s)", ev.Time.Local().Format(time.TimeOnly),
				ev.Stats.Indexed, ev.Stats.Removed, ev.Stats.Broken, ev.Stats.Docs, ev.Stats.Took.Round(time.Millisecond))
		}
		if ev.Err == nil && c.Serve && srv == nil {
			// The first good batch: the lease is ours, the index fresh.
			// What catching up held (the stat pass, the manifest: tens of
			// megabytes at 100,000 entries) goes back to the system before
			// the first recall loads the index, so that the two are never
			// held at once (make bench: the first recall's peak RSS).
			releaseMemory()
			s, lerr := listenRecall(o, m.Root(), sync, keep, c.Verbose)
			if lerr != nil {
				o.Warnf("warning: not answering recalls: %v", lerr)
				c.Serve = false
				if c.OnDemand {
					cancel() // a server that cannot serve has no reason to run
				}
				return
			}
			mu.Lock()
			srv = s
			mu.Unlock()
			if ready != nil {
				relay.Ready(ready)
				ready = nil
			}
			serveGC(ctx)
			releaseWhenQuiet(ctx, s.Idle)
		}
	}, sync)
	if ctx.Err() != nil {
		return nil // interrupted or idle: a normal end for a watcher
	}
	if errors.Is(err, index.ErrWatching) && c.OnDemand {
		return nil // another process watches: the clients trust it
	}
	return err
}

// exitWhenIdle ends the watch (cancel) once idle reports a time without
// a recall of at least limit, or when the store has gone.
func (c *IndexWatchCmd) exitWhenIdle(ctx context.Context, cancel func(), o *IO, root string, limit time.Duration, idle func() time.Duration) {
	tick := time.NewTicker(min(max(limit/10, 10*time.Millisecond), 5*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := os.Stat(root); err != nil {
			o.Warnf("%s: the store has gone; stopping", root)
			cancel()
			return
		}
		if idle() >= limit {
			if c.Verbose {
				o.Warnf("no recall for %s; stopping", limit)
			}
			cancel()
			return
		}
	}
}
