package history

import "github.com/miramem/mira/internal/cputime"

// cpuTime is the CPU time of this process and of the git commands it
// waited for: on a machine shared with other work a steadier measure than
// wall time.
var cpuTime = cputime.Process
