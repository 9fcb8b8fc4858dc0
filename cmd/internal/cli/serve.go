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

// recallRunner runs mira-recall for relay clients inside the watcher (see
// package relay): in a process that has the index fresh, the embedding
// model read and the vectors mapped, a recall is its search alone.
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

// run runs one recall with the client's arguments, environment and
// working directory; a panic in it is reported and costs that recall
// only, not the watcher.
func (r *recallRunner) run(req relay.Request, ready func() error, out, errb *bytes.Buffer) (code int, ok bool) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			r.o.Warnf("warning: a served recall failed: %v", p)
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
	code = Recall(req.Args, o)
	if r.verbose {
		r.o.Warnf("%s answered mira-recall (exit %d, %s)", start.Local().Format(time.TimeOnly), code, time.Since(start).Round(10*time.Microsecond))
	}
	return code, true
}
