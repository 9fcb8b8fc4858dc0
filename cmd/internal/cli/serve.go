package cli

import (
	"bytes"
	"strings"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/cmd/internal/relay"
	"github.com/miramem/mira/cmd/internal/relay/server"
	"github.com/miramem/mira/index"
)

// recallRunner runs mira-recall and mira-remember for relay clients inside
// the watcher (see package relay): in a process that has the index fresh,
// the embedding model read and the vectors mapped, a recall is its search
// alone, and a remember its lookup, its file and its commit, with none of
// a process's start (some 50 ms for a program of this size).
type recallRunner struct {
	o       *IO // the watcher's, for its own warnings
	verbose bool
	keep    *index.Keep // shared with the watcher's batches
	parsers parsers
	records mira.RecordCache
}

// listenRecall starts answering recalls on the store's socket.
func listenRecall(o *IO, root string, sync *index.Syncer, keep *index.Keep, verbose bool) (*server.Server, error) {
	r := &recallRunner{o: o, verbose: verbose, keep: keep}
	return server.Listen(root, sync.Sync, r.run, o.Warnf)
}

// run runs one command with the client's arguments, environment and
// working directory; a panic in it is reported and costs that command
// only, not the watcher.
func (r *recallRunner) run(req relay.Request, ready func() error, out, errb *bytes.Buffer) (code int, ok bool) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			r.o.Warnf("warning: a served %s failed: %v", req.Command, p)
			ok = false
		}
	}()
	env := make(map[string]string, len(req.Env))
	for _, kv := range req.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	o := &IO{
		In: strings.NewReader(""), Out: out, Err: errb,
		OutTTY: req.OutTTY || env["MIRA_FORCE_TTY"] == "1", ErrTTY: req.ErrTTY,
		Getenv: func(k string) string { return env[k] },
		Getwd:  func() (string, error) { return req.Dir, nil },
		keep:   r.keep, parsers: &r.parsers, records: &r.records, ready: ready,
	}
	switch req.Command {
	case "mira-recall":
		code = Recall(req.Args, o)
	case "mira-remember":
		// A writer: it does not wait for the watcher (ready), and runs
		// itself what needs the client's stdin.
		o.ready, o.served = nil, true
		if code = Remember(req.Args, o); code == exitNotServed {
			return 0, false
		}
	default:
		return 0, false
	}
	if r.verbose {
		r.o.Warnf("%s answered %s (exit %d, %s)", start.Local().Format(time.TimeOnly), req.Command, code, time.Since(start).Round(10*time.Microsecond))
	}
	return code, true
}
