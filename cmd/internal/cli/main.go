package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"
)

// Common holds the options every command takes.
type Common struct {
	Home        string        `help:"Memory store directory (a command that writes creates it on first use; no other command creates anything)." env:"MIRA_HOME" default:"${home}" placeholder:"DIR" group:"global"`
	Output      string        `help:"Output format: auto (JSONL when piped, text on a terminal), jsonl or text." enum:"auto,jsonl,text" default:"${output}" group:"global"`
	LockTimeout time.Duration `help:"How long a writer waits for another writer's lock before exiting 11." default:"${lock_timeout}" placeholder:"DUR" group:"global"`
	Embed       string        `help:"Embedder for vector search: builtin (offline, fitted from the store) or openai:<model>[/<dim>] for any OpenAI-compatible /v1/embeddings server." env:"MIRA_EMBED" default:"${embed}" placeholder:"NAME" group:"global"`
}

// kongExit carries kong's exit request (after --help, or on a parse error)
// out of kong so Main can return a status instead of exiting.
type kongExit struct{ code int }

// runner is implemented by every command grammar of this package.
type runner interface {
	run(ctx context.Context, o *IO) error
}

// Runner is implemented by the grammar of a command defined in another
// package (mira-agent's): Main parses the arguments into it and runs it.
type Runner interface {
	Run(ctx context.Context, o *IO) error
}

// runnerFunc adapts a Runner.
type runnerFunc func(ctx context.Context, o *IO) error

func (f runnerFunc) run(ctx context.Context, o *IO) error { return f(ctx, o) }

// Main parses args for the command name with grammar, runs it and returns
// the exit status. All output goes through o. Errors are printed once.
func Main(name, description string, grammar any, args []string, o *IO) (code int) {
	o.progName = name
	if f := os.Getenv("MIRA_CPUPROFILE"); f != "" && o.keep == nil { // not per served recall
		// For finding where a command's time goes: go tool pprof FILE.
		if out, err := os.Create(f); err == nil {
			pprof.StartCPUProfile(out)
			defer func() { pprof.StopCPUProfile(); out.Close() }()
		}
	}
	if f := os.Getenv("MIRA_MEMPROFILE"); f != "" && o.keep == nil {
		// The heap at its largest live size: go tool pprof FILE.
		defer peakHeapProfile(f)()
	}
	commandGC(o)
	cfg, cfgErr := loadConfig(o.Getenv)
	if cfgErr == nil {
		o.cfg = cfg
	}
	vars := configVars(cfg, o.Getenv)
	defer func() {
		if r := recover(); r != nil {
			if ke, ok := r.(kongExit); ok {
				code = ke.code
				return
			}
			panic(r)
		}
	}()
	var (
		p   *parser
		err error
	)
	if o.parsers != nil {
		if p, err = o.parsers.get(name, description, grammar, vars, o); err == nil {
			defer p.mu.Unlock()
		}
	} else {
		p, err = newParser(name, description, grammar, vars, o)
	}
	if err != nil {
		fmt.Fprintf(o.Err, "%s: internal error: %v\n", name, err)
		return ExitFailure
	}
	if cfgErr != nil {
		o.Warnf("%v", cfgErr)
		return ExitUsage
	}
	grammar = p.grammar
	kctx, err := p.k.Parse(args)
	if err != nil {
		o.Warnf("%v", err)
		fmt.Fprintf(o.Err, "%s: hint: see %s --help\n", name, name)
		return ExitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var r runner
	if sel := kctx.Selected(); sel != nil {
		r, _ = sel.Target.Addr().Interface().(runner)
	}
	if r == nil {
		r, _ = grammar.(runner)
	}
	if x, ok := grammar.(Runner); ok && r == nil {
		r = runnerFunc(x.Run)
	}
	if r == nil {
		o.Warnf("internal error: no command to run")
		return ExitFailure
	}
	err = r.run(ctx, o)
	if o.progress != nil {
		o.progress.clear()
	}
	if errors.Is(err, errNotServed) {
		return exitNotServed
	}
	if ctx.Err() != nil && err != nil {
		o.Warnf("interrupted")
		return ExitInterrupted
	}
	return report(o, err)
}

// report prints err once and returns its status.
func report(o *IO, err error) int {
	if err == nil {
		return ExitOK
	}
	o.Warnf("%v", err)
	if h := hint(err); h != "" {
		o.Warnf("hint: %s", h)
	}
	return exitCode(err)
}
