package code

import "github.com/miramem/mira/internal/cputime"

// cpuTime is the process's CPU time: on a machine shared with other work
// a steadier measure than wall time.
var cpuTime = cputime.Process
