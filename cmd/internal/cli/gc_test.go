package cli

import (
	"math"
	"runtime/debug"
	"testing"
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

	debug.SetGCPercent(400)
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOGC", "250")
	t.Setenv("GOMEMLIMIT", "1GiB")
	bulkGC(bulkMemoryLimit)
	if gc, limit := current(); gc != 400 || limit != math.MaxInt64 {
		t.Errorf("bulkGC with GOGC and GOMEMLIMIT set: GOGC %d, limit %d; want both left alone", gc, limit)
	}

	debug.SetGCPercent(400)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	bulkGC(0)
	if gc, limit := current(); gc != 100 || limit != math.MaxInt64 {
		t.Errorf("bulkGC(0): GOGC %d, limit %d; want 100 and no limit", gc, limit)
	}
}
