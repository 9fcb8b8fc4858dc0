package cli

import (
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// peakHeapProfile samples the live heap twice a second and writes a heap
// profile to name each time it is a tenth above the largest seen, so the
// file shows what the heap held at its peak; the returned function stops
// the sampling. For finding where a command's memory goes (MIRA_MEMPROFILE).
func peakHeapProfile(name string) func() {
	runtime.MemProfileRate = 64 << 10
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var peak uint64
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc < peak+peak/10 {
				continue
			}
			peak = ms.HeapAlloc
			if f, err := os.Create(name); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
	}()
	return func() { close(stop); <-done }
}
