package cli

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/gitrepo"
)

// The collection targets of the commands and the servers, and what the
// servers give back when they go quiet.

// bulkMemoryLimit is the soft memory limit (see bulkGC) of a bulk load,
// rebuildMemoryLimit that of a rebuild, which keeps more live: each keeps
// its work at 100,000 entries well inside 500 MB of RSS in the same time,
// where a lower limit keeps the collector running (make bench's "load" and
// "index rebuild" rows; docs/performance.md has the measurements). Larger
// work goes past the limit, the collector capped at half the CPU.
const (
	bulkMemoryLimit    = 300 << 20
	rebuildMemoryLimit = 400 << 20
)

// commandGC sets the collection target of a command's process: 400%
// unless GOGC says otherwise. A command lives for one query or one write;
// most of its heap is index data it keeps to the end, and collecting it
// again and again is wasted work (a tenth of a hybrid recall). Bulk work
// goes back to the default (see bulkGC). A command a server runs for a
// client (o.keep set) leaves the server's target alone, which would
// otherwise grow with each served recall (make bench: the server's RSS).
//
// A command that ends up building the index (a first recall without a
// server, MIRA_SERVE=0) keeps a million documents: from a heap of
// commandFloor on, its soft memory limit follows the live heap as bulk
// work's does (see followLive), where 400% had let it grow to 4.3 GB.
func commandGC(o *IO) {
	if o.keep != nil {
		return
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	setFloor(commandFloor)
}

// commandFloor is the soft memory limit of a command until its live heap
// needs more: far above what a command keeps at 100,000 entries, so that
// its collection target governs there.
const commandFloor = 1 << 30

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
// vectors, once a second. The bounds are where the server's RSS after
// make bench's recalls fell without its time per recall rising
// (BenchmarkServedRecall, scripts/mcpbench; docs/performance.md).
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
// its live heap (see serveGC): the least that costs a served recall no
// more CPU (BenchmarkServedRecall at 10k and 100k; docs/performance.md).
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
// Those are large at 100,000 entries but save each write of a burst a
// good part of its time (make bench's remember row), so they go only
// after two minutes without a request.
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
// instead of staying with the process until the next burst (make bench:
// the server's RSS idle).
func releaseWhenIdle(ctx context.Context, idle func() time.Duration, after time.Duration, release func()) {
	tick := time.NewTicker(after / 2)
	defer tick.Stop()
	// A request is told from the time it ended (now less idle), not from
	// a tick that saw it under way: a tick delayed past a short request
	// on a loaded machine would miss it, and its quiet would give
	// nothing back.
	releasedAt := time.Now() // nothing to give back before the first request
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		d := idle()
		if d < after {
			continue
		}
		if now := time.Now(); now.Add(-d).After(releasedAt) {
			release()
			releasedAt = now
		}
	}
}

// releaseMemory gives the memory the process does not use back to the
// system. The collection before FreeOSMemory's own empties the scratch
// buffers kept in sync.Pools (a search's, a connection's), which outlive
// one collection.
func releaseMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// bulkGC gives a command that works through a whole store (a rebuild, a
// bulk load) the runtime's default collection target back, unless GOGC
// says otherwise. Such a command allocates many times what it keeps, and
// with the short commands' target of 400% its heap grows to five times
// the live data, in no less time (make bench: index rebuild).
//
// A positive limit is also a soft memory limit, unless GOMEMLIMIT says
// otherwise: the collector then works harder as the heap nears it,
// rather than letting the heap grow to twice what is live. The limit
// follows the live heap up (see followLive): a fixed one below what a
// million entries keep live had the collector run without a pause, half
// of a rebuild's CPU.
func bulkGC(limit int64) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(100)
	}
	setFloor(limit)
}

var (
	followMu   sync.Mutex
	liveFloor  int64 // the limit bulkGC or commandGC set; 0: none to follow
	followOnce sync.Once
)

// setFloor sets the soft memory limit to floor and has it follow the live
// heap from there, unless GOMEMLIMIT says otherwise; a floor of 0 sets no
// limit and stops the following.
func setFloor(floor int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	followMu.Lock()
	defer followMu.Unlock()
	liveFloor = max(floor, 0)
	if floor > 0 {
		debug.SetMemoryLimit(floor)
		followOnce.Do(func() { go followLive() })
	}
}

// liveHeadroom is what the soft memory limit of bulk work allows above the
// live heap once that is past the limit bulkGC was given: a quarter of it
// and liveSlack more. The collector then runs after the program allocates
// that much, each cycle marking what is live; a build keeps its documents
// in blocks the collector marks cheaply (index/arena.go).
const liveSlack = 32 << 20

// liveLimit is the soft memory limit for a live heap of live bytes, above
// a floor, and never above liveCeiling.
func liveLimit(live, floor int64) int64 {
	return min(max(floor, live+live/4+liveSlack), max(floor, liveCeiling))
}

// liveCeiling is the most the limit follows the live heap to: a process
// of bulk work stays under 2 GB, its collector working harder rather than
// going past it (a load of more than about a million records).
const liveCeiling = 1800 << 20

// followLive sets the soft memory limit to liveLimit of the live heap
// four times a second, for the life of the process: the bound of a bulk
// command is then a quarter above what it keeps (at a million entries,
// the rebuild's documents), never a limit below it.
func followLive() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for {
		time.Sleep(250 * time.Millisecond)
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			continue
		}
		followMu.Lock()
		if liveFloor > 0 && os.Getenv("GOMEMLIMIT") == "" {
			debug.SetMemoryLimit(liveLimit(int64(sample[0].Value.Uint64()), liveFloor))
		}
		followMu.Unlock()
	}
}
