// Package retrytest stands in for a retry.Policy's Sleep in tests.
package retrytest

import (
	"context"
	"slices"
	"sync"
	"time"
)

// SleepLog replaces a policy's Sleep: it records each wait and returns
// at once, so tests take milliseconds whatever they wait.
type SleepLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d and returns ctx's error.
func (l *SleepLog) Sleep(ctx context.Context, d time.Duration) error {
	l.mu.Lock()
	l.waits = append(l.waits, d)
	l.mu.Unlock()
	return ctx.Err()
}

// Waits returns the waits recorded so far.
func (l *SleepLog) Waits() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.waits)
}
