package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/miramem/mira"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
	"github.com/miramem/mira/summarize"
)

// SummarizeCmd is mira-summarize.
type SummarizeCmd struct {
	Common
	Scope      string `short:"s" help:"Scope to summarize (default global, the default scope of mira-remember)." placeholder:"SCOPE"`
	All        bool   `short:"a" help:"Visit every scope of the store."`
	MaxEntries int    `name:"max-entries" help:"Live entries a scope may hold before its oldest summarized turns and facts are evicted (tombstoned); 0 evicts nothing." default:"${max_entries}" placeholder:"N"`
	Model      string `help:"Chat model that writes the summaries, on any OpenAI-compatible server (OPENAI_BASE_URL); default $MIRA_MODEL, else llm.model in the config file; without one, the offline extractive summarizer is used." placeholder:"NAME"`
	Extractive bool   `help:"Use the offline extractive summarizer even when a model is configured."`
	Show       bool   `help:"Change nothing: print the scope's summary state, i.e. its top-level summaries, then every turn and fact they do not cover."`
	DryRun     bool   `name:"dry-run" short:"n" help:"Print the operations as JSONL and write nothing (the summaries are still computed)."`
	Verbose    bool   `short:"v" help:"Report on standard error what each scope got; without it a run is silent unless something fails."`
}

// summarizeFlags are mira-summarize's flags by the names the library gives
// the fields of its options.
var summarizeFlags = map[string]string{"scope": "--scope", "max_entries": "--max-entries"}

// Summarize is the main of mira-summarize.
func Summarize(args []string, o *IO) int {
	return Main("mira-summarize", "Summarize new conversation turns and facts into L1/L2/L3 summaries, and evict what a scope holds beyond its limit, in one git commit. Quiet and idempotent: made for cron.", &SummarizeCmd{}, args, o)
}

func (c *SummarizeCmd) run(ctx context.Context, o *IO) error {
	if c.All && c.Scope != "" {
		return usagef("--all and --scope cannot be used together")
	}
	if c.Show && c.All {
		return usagef("--show takes one scope, not --all")
	}
	scope := c.Scope
	if scope == "" {
		scope = mem.DefaultScope
	}
	opt := mira.SummarizeOptions{MaxEntries: c.MaxEntries, NoEviction: c.MaxEntries == 0, Extractive: c.Extractive, DryRun: c.DryRun}
	if !c.All {
		opt.Scopes = []string{scope}
	}
	// Refused options must not wait for a model or the store.
	if err := opt.Check(); err != nil {
		return asFlag(err, summarizeFlags)
	}
	if c.Show {
		m, err := c.open(ctx, o, "mira-summarize", "")
		if err != nil {
			return err
		}
		defer m.Close()
		es, err := m.SummaryState(scope)
		if err != nil {
			return asFlag(err, summarizeFlags)
		}
		return writeEntries(o, c.Output, es)
	}
	var client *llm.Client
	if !c.Extractive {
		var err error
		if client, err = mira.NewChatModel(c.Model, o.config(), o.Getenv); err != nil {
			return err
		}
		if client != nil && c.Verbose {
			defer func() { o.Warnf("model %s: %v", client.Model(), client.Usage()) }()
		}
	}
	m, err := c.open(ctx, o, "mira-summarize", "")
	if err != nil {
		return err
	}
	defer m.Close()
	opt.Chat, opt.Extractive = client, c.Extractive || client == nil
	res, err := m.Summarize(ctx, opt)
	if res != nil {
		if c.DryRun {
			if werr := writeOps(o, res.Ops); werr != nil {
				return werr
			}
		}
		if c.Verbose {
			c.report(o, res)
		}
	}
	if err != nil && res != nil {
		// Scopes that failed: name each on its own line, then fail the run.
		var failed int
		for _, r := range res.Scopes {
			if r.Err != nil {
				o.Warnf("scope %s: %v", r.Scope, r.Err)
				failed++
			}
		}
		switch {
		case failed == 1:
			return errors.New("a scope was not summarized")
		case failed > 1:
			return fmt.Errorf("%d scopes were not summarized", failed)
		}
	}
	return err
}

// report writes one line per scope (and one for the commit) to stderr.
func (c *SummarizeCmd) report(o *IO, res *summarize.Result) {
	for _, r := range res.Scopes {
		if r.Err != nil {
			continue
		}
		counts := map[string]int{}
		for _, s := range r.Summaries {
			counts[s.Level]++
		}
		var parts []string
		for _, l := range mem.Levels {
			if counts[l] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[l], l))
			}
		}
		if len(r.Evicted) > 0 {
			parts = append(parts, fmt.Sprintf("%d evicted", len(r.Evicted)))
		}
		line := fmt.Sprintf("%s: %s", r.Scope, strings.Join(parts, ", "))
		if r.Detail != summarize.DetailNone {
			line += fmt.Sprintf(" (%s, %d new tokens)", r.Detail, r.InputTokens)
		}
		o.Warnf("%s", line)
	}
	switch {
	case c.DryRun:
		o.Warnf("dry run with %s: nothing written", res.Model)
	case res.Commit != "":
		msg := fmt.Sprintf("committed %.12s with %s", res.Commit, res.Model)
		if res.Repacked {
			msg += "; packed loose objects"
		}
		o.Warnf("%s", msg)
	default:
		o.Warnf("nothing new to summarize")
	}
}
