package agent

import "github.com/miramem/mira/internal/cputime"

// cpuTime is the CPU time of this process and of the children it waited
// for (git): on a shared machine a steadier measure than wall time.
var cpuTime = cputime.Process
