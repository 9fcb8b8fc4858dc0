//go:build !unix

package mira

import "time"

// fileKey is what says a file is unchanged; without a status-change time
// nothing can say so, and nothing is kept.
type fileKey struct{ ctime time.Time }

func statKey(string) (fileKey, bool) { return fileKey{}, false }
