package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	plan "github.com/miramem/mira/ctx"
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
	if c.MaxEntries < 0 {
		return usagef("--max-entries must be 0 or more")
	}
	scope := c.Scope
	if scope == "" {
		scope = mem.DefaultScope
	}
	if err := mem.ValidScope(scope); err != nil {
		return &UsageError{err}
	}
	st, err := c.openStore(ctx, "mira-summarize")
	if err != nil {
		return err
	}
	w := &warnOnce{o: o}
	bad := func(err error) { w.warn("", err) }
	if c.Show {
		return c.show(o, st, scope, bad)
	}
	opt := summarize.Options{MaxEntries: c.MaxEntries, LockTimeout: c.LockTimeout, DryRun: c.DryRun, Bad: bad}
	if opt.Count, err = summarizeCounter(o); err != nil {
		return err
	}
	if !c.Extractive {
		client, err := chatClient(o, c.Model)
		if err != nil {
			return err
		}
		if client != nil {
			opt.Model = client
			opt.Trailers = func() []mem.Trailer { return usageTrailers(client) }
			if c.Verbose {
				defer func() { o.Warnf("model %s: %v", client.Model(), client.Usage()) }()
			}
		}
	}
	var scopes []string
	if !c.All {
		scopes = []string{scope}
	}
	res, err := summarize.Run(ctx, st, scopes, opt)
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

// show prints a scope's summary state: what a prompt needs so that it
// misses nothing of the conversation.
func (c *SummarizeCmd) show(o *IO, st *mem.Store, scope string, bad func(error)) error {
	state, err := summarize.Load(st, scope, nil, bad)
	if err != nil {
		return err
	}
	return writeEntries(o, c.Output, append(state.Summaries, state.Buffer...))
}

// chatClient returns the configured chat model, or nil when there is
// none: the model named by flag (or MIRA_MODEL, else the config file's
// llm.model), at OPENAI_BASE_URL (else llm.base_url) with OPENAI_API_KEY
// (else llm.api_key) and llm.timeout.
func chatClient(o *IO, flagModel string) (*llm.Client, error) {
	cfg := llm.ConfigFromEnv(o.Getenv)
	if m := strings.TrimSpace(flagModel); m != "" {
		cfg.Model = m
	}
	file := o.config()
	if cfg.Model == "" {
		cfg.Model = strings.TrimSpace(file.LLM.Model)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = strings.TrimSpace(file.LLM.BaseURL)
	}
	if cfg.APIKey == "" {
		cfg.APIKey = strings.TrimSpace(file.LLM.APIKey)
	}
	if file.LLM.Timeout != "" {
		d, err := time.ParseDuration(file.LLM.Timeout)
		if err != nil {
			return nil, usagef("config llm.timeout: %v", err)
		}
		cfg.Timeout = d
	}
	if !cfg.Configured() {
		return nil, nil
	}
	client, err := llm.New(cfg)
	if err != nil {
		return nil, usagef("chat model: %v", err)
	}
	return client, nil
}

// usageTrailers records a model's token usage in the commit it led to.
func usageTrailers(c *llm.Client) []mem.Trailer {
	u := c.Usage()
	if u.Requests == 0 {
		return nil
	}
	return []mem.Trailer{{Key: "Mira-Usage", Value: u.String()}}
}

// summarizeCounter returns the tokenizer of the context planner
// (context.encoding in the config file), so that the thresholds mean what
// mira-context counts.
func summarizeCounter(o *IO) (func(string) int, error) {
	enc := o.config().Context.Encoding
	tk, err := plan.NewTokenizer(enc)
	if err != nil {
		return nil, &UsageError{fmt.Errorf("config context.encoding: %w", err)}
	}
	// Loaded on the first count, so a run with nothing new stays quick.
	return tk.Count, nil
}
