//go:build !unix

package code

import "time"

// cpuTime is not measured here: benchmarks report zero.
func cpuTime() time.Duration { return 0 }
