//go:build !unix

package code

import "time"

// processCPU is not measured here: phases report no CPU time.
func processCPU() time.Duration { return 0 }
