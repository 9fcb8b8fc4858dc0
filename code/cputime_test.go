package code

import "time"

// cpuTime is the process's CPU time (processCPU): on a machine shared with
// other work a steadier measure than wall time.
func cpuTime() time.Duration { return processCPU() }
