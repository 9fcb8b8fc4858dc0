package cputime

import (
	"runtime"
	"testing"
)

var sink int

// Work done on the CPU shows in Process, on the systems that measure it;
// it never goes back.
func TestProcessGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no CPU time on", runtime.GOOS)
	}
	start := Process()
	for round := 0; Process() == start; round++ {
		if round == 1000 {
			t.Fatalf("CPU time stayed at %v over 10^9 additions", start)
		}
		for i := range 1_000_000 {
			sink += i
		}
	}
	if end := Process(); end < start {
		t.Fatalf("CPU time went back from %v to %v", start, end)
	}
}
