package cli

import (
	"context"
	"fmt"

	"github.com/miramem/mira"
	"github.com/miramem/mira/internal/paths"
	"github.com/miramem/mira/mem"
)

// SyncCmd is mira-sync.
type SyncCmd struct {
	Common
	Remote   string `arg:"" optional:"" name:"REMOTE" help:"The git remote to sync with (default: the configuration's sync.remote, else origin)."`
	Branch   string `help:"The remote's branch (default: sync.branch, else main)." placeholder:"NAME"`
	Clone    string `help:"Start the store at --home from a remote that holds one (URL as git takes it), then sync." placeholder:"URL"`
	Attempts int    `help:"Pushes to try when the remote keeps moving, each after a new fetch and merge." default:"5"`
	Verbose  bool   `short:"v" help:"Say what was done on stderr even when it is not a terminal."`
}

// Sync is the main of mira-sync.
func Sync(args []string, o *IO) int {
	return Main("mira-sync", "Share the store through a git remote: fetch, merge entry by entry, push.", &SyncCmd{}, args, o)
}

func (c *SyncCmd) run(ctx context.Context, o *IO) error {
	if c.Attempts < 1 {
		return usagef("--attempts must be at least 1")
	}
	if c.Clone != "" {
		if c.Home == "" {
			return usagef("no store: set MIRA_HOME or --home")
		}
		home, err := paths.ExpandHome(c.Home)
		if err != nil {
			return err
		}
		cfg := o.config()
		remote := c.Remote
		if remote == "" {
			remote = cfg.Sync.Remote
		}
		branch := c.Branch
		if branch == "" {
			branch = cfg.Sync.Branch
		}
		if err := mira.Clone(ctx, c.Clone, home, mira.CloneOptions{Remote: remote, Branch: branch}); err != nil {
			return err
		}
	}
	m, err := c.openWith(ctx, o, "mira-sync", "", openOptions{existing: true})
	if err != nil {
		return err
	}
	defer m.Close()
	res, err := m.Sync(ctx, mira.SyncOptions{Remote: c.Remote, Branch: c.Branch, Attempts: c.Attempts})
	if res != nil {
		if werr := c.report(o, res); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// report prints the decisions as data on stdout and, on a terminal or
// with --verbose, a line saying what was done on stderr.
func (c *SyncCmd) report(o *IO, res *mira.SyncResult) error {
	if o.textOutput(c.Output) {
		for _, d := range res.Decisions {
			fmt.Fprintf(o.Out, "%s\n", mem.Escape(d.String(), false)) // a path from a remote may hold anything
		}
	} else {
		rw := newRecordWriter(o.Out)
		for _, d := range res.Decisions {
			if err := rw.Write(d); err != nil {
				return err
			}
		}
		if err := rw.Flush(); err != nil {
			return err
		}
	}
	if res.AbortedMerge != "" {
		// Said whatever the output: the user's git merge was undone.
		o.Warnf("undid the unfinished git merge of %.12s (its conflicts); the remote's changes were merged entry by entry instead", res.AbortedMerge)
	}
	if !o.ErrTTY && !c.Verbose {
		return nil
	}
	switch {
	case res.UpToDate():
		o.Warnf("%s/%s: up to date", res.Remote, res.Branch)
	default:
		o.Warnf("%s/%s: %d hand-edited files committed, %d files taken, %d files sent, %d decisions", res.Remote, res.Branch,
			len(res.HandEdits), len(res.Pulled), len(res.Pushed), len(res.Decisions))
	}
	return nil
}
