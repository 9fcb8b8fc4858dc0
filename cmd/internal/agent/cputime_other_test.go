//go:build !unix

package agent

import "time"

// cpuTime is not available here; benchmarks then report 0.
func cpuTime() time.Duration { return 0 }
