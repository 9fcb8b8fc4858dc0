package cli

import (
	"context"
	"math"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miramem/mira/index"
)

// TestBulkGC: a bulk command gets the default collection target and the
// soft memory limit it asks for, unless GOGC or GOMEMLIMIT say otherwise.
func TestBulkGC(t *testing.T) {
	prevGC := debug.SetGCPercent(400)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(prevGC)
		debug.SetMemoryLimit(prevLimit)
	})
	current := func() (int, int64) {
		gc := debug.SetGCPercent(-1)
		debug.SetGCPercent(gc)
		return gc, debug.SetMemoryLimit(-1)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	bulkGC(bulkMemoryLimit)
	if gc, limit := current(); gc != 100 || limit != bulkMemoryLimit {
		t.Errorf("bulkGC: GOGC %d, limit %d; want 100, %d", gc, limit, bulkMemoryLimit)
	}

	// The environment first: the limit follows the live heap meanwhile
	// unless GOMEMLIMIT is set.
	t.Setenv("GOGC", "250")
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(math.MaxInt64)
	bulkGC(bulkMemoryLimit)
	if gc, limit := current(); gc != 400 || limit != math.MaxInt64 {
		t.Errorf("bulkGC with GOGC and GOMEMLIMIT set: GOGC %d, limit %d; want both left alone", gc, limit)
	}

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(400)
	bulkGC(0)
	if gc, limit := current(); gc != 100 || limit != math.MaxInt64 {
		t.Errorf("bulkGC(0): GOGC %d, limit %d; want 100 and no limit", gc, limit)
	}
}

// TestReleaseWhenIdle: memory is given back once per quiet spell, after
// the first request and not while one is under way.
func TestReleaseWhenIdle(t *testing.T) {
	const after = 20 * time.Millisecond
	var last atomic.Int64 // when the last request ended; 0: none yet
	var busy atomic.Bool
	idle := func() time.Duration {
		if busy.Load() {
			return 0
		}
		if l := last.Load(); l != 0 {
			return time.Since(time.Unix(0, l))
		}
		return time.Hour
	}
	var released atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		releaseWhenIdle(ctx, idle, after, func() { released.Add(1) })
	}()
	defer func() { cancel(); <-done }()
	waitFor := func(want int32) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); released.Load() < want && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(5 * after) // and no more after it
		if n := released.Load(); n != want {
			t.Fatalf("released %d times, want %d", n, want)
		}
	}

	waitFor(0) // before any request
	busy.Store(true)
	waitFor(0) // during one
	last.Store(time.Now().UnixNano())
	busy.Store(false)
	waitFor(1) // in the quiet after it, once
	last.Store(time.Now().UnixNano())
	waitFor(2) // after the next
	// A request no tick saw under way (the ticker was late on a loaded
	// machine): it ended a while ago, but after the last release.
	last.Store(time.Now().Add(-2 * after).UnixNano())
	waitFor(3)
}

// TestCommandGC: a command's process collects at 400% unless GOGC says
// otherwise; a command a server runs for a client leaves the server's
// target as it is.
func TestCommandGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	t.Setenv("GOGC", "")
	current := func() int {
		gc := debug.SetGCPercent(-1)
		debug.SetGCPercent(gc)
		return gc
	}
	commandGC(&IO{keep: new(index.Keep)})
	if gc := current(); gc != 100 {
		t.Errorf("a served command set the server's GOGC to %d", gc)
	}
	t.Setenv("GOMEMLIMIT", "")
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { setFloor(0); debug.SetMemoryLimit(prevLimit) })
	commandGC(&IO{})
	if gc := current(); gc != 400 {
		t.Errorf("a command's GOGC is %d, want 400", gc)
	}
	if limit := debug.SetMemoryLimit(-1); limit != commandFloor {
		t.Errorf("a command's soft memory limit is %d, want %d", limit, int64(commandFloor))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serveGC(ctx)
	if gc := current(); gc < 10 || gc > 50 {
		t.Errorf("a serving watcher's GOGC is %d, want 10-50", gc)
	}
	debug.SetGCPercent(100)
	t.Setenv("GOGC", "100")
	commandGC(&IO{})
	serveGC(ctx)
	if gc := current(); gc != 100 {
		t.Errorf("with GOGC set, a command's or a server's GOGC is %d, want it left alone", gc)
	}
}

// TestServePercent: about 8 MB of garbage above the live heap, within
// 10-50%, in steps of 5.
func TestServePercent(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 50}, {1 * mb, 50}, {12 * mb, 50}, {16 * mb, 50}, {24 * mb, 30}, {30 * mb, 25},
		{60 * mb, 10}, {78 * mb, 10}, {100 * mb, 10}, {2000 * mb, 10},
	} {
		if got := servePercent(tc.live); got != tc.want {
			t.Errorf("live heap %d MB: %d%%, want %d%%", tc.live/mb, got, tc.want)
		}
	}
}

// TestLiveLimit: the soft limit of bulk work is its floor while the live
// heap is small, and a quarter above the live heap once it is large, so
// the collector never runs without a pause below what the work keeps.
func TestLiveLimit(t *testing.T) {
	const mb = 1 << 20
	if got := liveLimit(100*mb, 400*mb); got != 400*mb {
		t.Errorf("liveLimit(100 MB, floor 400 MB) = %d MB, want the floor", got/mb)
	}
	if got, want := liveLimit(1200*mb, 400*mb), int64(1200*mb+300*mb+liveSlack); got != want {
		t.Errorf("liveLimit(1200 MB) = %d MB, want %d MB", got/mb, want/mb)
	}
	if liveLimit(1200*mb, 400*mb) <= 1200*mb {
		t.Error("the limit must stay above the live heap")
	}
	if got := liveLimit(1700*mb, 400*mb); got != liveCeiling {
		t.Errorf("liveLimit(1700 MB) = %d MB, want the ceiling %d MB", got/mb, liveCeiling/mb)
	}
}
