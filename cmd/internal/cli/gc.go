package cli

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/gitrepo"
)

// The collection targets of the commands and the servers, and what the
// servers give back when they go quiet.

// bulkMemoryLimit is the soft memory limit (see bulkGC) of a bulk load,
// rebuildMemoryLimit that of a rebuild. A load holds every entry, its file
// and its journal line until its one commit: at 100,000 entries about
// 215 MB is live at the peak, and with the default target the heap
// reached 480 MB of RSS; with this limit 325 MB, in the same CPU time.
// Work larger than that goes past the limit, the collector capped at half
// the CPU, as the runtime does.
//
// A rebuild of 100,000 entries keeps more live (every document's terms
// and text until the model is fitted, then the vectors), and near a 300 MB
// limit the collector ran most of the time: 19.4–24.4 s and 354–372 MB,
// against 17.5–17.7 s and 427 MB with 400 MiB and 16.8–17.0 s and 478 MB
// with 450 MiB (runs side by side on 2 cores). 400 MiB keeps a 100k
// rebuild well inside 500 MB.
const (
	bulkMemoryLimit    = 300 << 20
	rebuildMemoryLimit = 400 << 20
)

// commandGC sets the collection target of a command's process: 400%
// unless GOGC says otherwise. A command lives for one query or one write;
// most of its heap is index data it keeps to the end, and collecting it
// again and again is wasted work (measured: a tenth of a hybrid recall).
// Bulk work goes back to the default (see bulkGC). A command a server
// runs for a client (o.keep set) leaves the server's target alone: each
// served recall set 400% again, and a watcher at 100,000 entries grew to
// 420 MB.
func commandGC(o *IO) {
	if os.Getenv("GOGC") == "" && o.keep == nil {
		debug.SetGCPercent(400)
	}
}

// ServerGC gives a long-lived process (the proxy) the runtime's default
// collection target back, unless GOGC says otherwise: with the short
// commands' 400% its heap grows to five times what it keeps between
// requests, for the whole of its life. The watcher and the MCP server
// take serveGC's.
func ServerGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100)
	}
}

// serveGC gives a watcher that has caught up with its store and serves
// recalls, and the MCP server, a collection target that leaves about
// serveHeadroom of garbage above the live heap, at most 50% of it and at
// least 10%, until ctx ends; unless GOGC says otherwise. What a recall
// leaves behind is small (about a third of a megabyte at 100,000 entries) and
// what a server keeps is mostly large arrays the collector does not scan,
// so collecting often costs little there; a small store's server keeps
// 50%, where collecting after every recall or two would not be free. The
// target follows the live heap, which grows when a search first loads the
// vectors, once a second.
//
// At 100k, after 100 recalls: the watcher held 183 MB of RSS at 100%,
// 153-170 MB at 50%, 144-146 MB at 20%, with its CPU per recall within
// the noise (14-18 ms at 50%, 14-16 ms at 10%). At 10k, 10% took it from
// 4.0-5.5 to 7.6-7.9 ms, and the MCP server's p90 from 7 to 12 ms.
func serveGC(ctx context.Context) {
	if os.Getenv("GOGC") != "" {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	set := -1
	tune := func() {
		metrics.Read(sample)
		live := uint64(0)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = sample[0].Value.Uint64()
		}
		if p := servePercent(live); p != set {
			debug.SetGCPercent(p)
			set = p
		}
	}
	tune()
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				tune()
			}
		}
	}()
}

// serveHeadroom is the garbage a server's collection target allows above
// its live heap (see serveGC). 12 MB served as well while a recall at
// 100,000 entries left half a megabyte behind; since it leaves a third,
// 8 MB took the same CPU per served recall (9.1-9.2 against 9.2-9.3 ms at
// 100k, 3.2-3.5 against 3.5 ms at 10k) and 1-3 MB less memory.
const serveHeadroom = 8 << 20

// servePercent is the collection target that allows serveHeadroom above a
// live heap of live bytes, kept within 10-50% and moved in steps of 5.
func servePercent(live uint64) int {
	if live == 0 {
		return 50
	}
	p := int(100 * serveHeadroom / live)
	return min(max(p/5*5, 10), 50)
}

// releaseIdle is how long a server answers nothing before it gives back
// its free memory, forgetIdle before it also lets go of what it keeps for
// the next write (see releaseWhenQuiet).
const (
	releaseIdle = time.Second
	forgetIdle  = 2 * time.Minute
)

// releaseWhenQuiet gives a server's memory back when its requests stop
// (idle says how long since the last ended), until ctx ends: the memory
// it freed after releaseIdle, and after forgetIdle what it keeps from one
// index update for the next as well (index.ForgetKept, the tree cache).
// At 100,000 entries a watcher kept those, 60 MB, for as long as it
// lived: it idled at 162 MB after 30 remembers, and at 102 MB once it let
// go of them. They save each write of a burst about 0.35 s there: the
// first remember after letting go took 0.87 s against 0.52 s, which is
// why they go only after two minutes without a request.
func releaseWhenQuiet(ctx context.Context, idle func() time.Duration) {
	go releaseWhenIdle(ctx, idle, releaseIdle, releaseMemory)
	go releaseWhenIdle(ctx, idle, forgetIdle, forgetKept)
}

// forgetKept lets go of what a server keeps for its next write, then
// gives the memory back.
func forgetKept() {
	index.ForgetKept()
	gitrepo.ForgetTrees()
	releaseMemory()
}

// releaseWhenIdle calls release (releaseMemory in a server) once
// idle, how long since the last request, has reached after, and again
// only after the next request: the memory the collector freed during a
// burst of requests goes back to the system in the quiet that follows,
// instead of staying with the process until the next burst. At 100,000
// entries a watcher that had answered 100 recalls held 129 MB of heap,
// 81 MB once released.
func releaseWhenIdle(ctx context.Context, idle func() time.Duration, after time.Duration, release func()) {
	tick := time.NewTicker(after / 2)
	defer tick.Stop()
	released := true // nothing to give back before the first request
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		switch {
		case idle() < after:
			released = false
		case !released:
			release()
			released = true
		}
	}
}

// releaseMemory gives the memory the process does not use back to the
// system. The collection before FreeOSMemory's own empties the scratch
// buffers kept in sync.Pools (a search's, a connection's), which outlive
// one collection: 5 MB more at 100,000 entries.
func releaseMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// bulkGC gives a command that works through a whole store (a rebuild, a
// bulk load) the runtime's default collection target back, unless GOGC
// says otherwise. Such a command allocates many times what it keeps, and
// with the short commands' target of 400% its heap grew to five times the
// live data: at 100,000 entries a rebuild peaked at 1.5 GB of RSS with
// 400% and 0.7 GB with 100%, in no more time.
//
// A positive limit is also a soft memory limit, unless GOMEMLIMIT says
// otherwise: the collector then works harder as the heap nears it,
// rather than letting the heap grow to twice what is live.
func bulkGC(limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100)
	}
	if limit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit)
	}
}
