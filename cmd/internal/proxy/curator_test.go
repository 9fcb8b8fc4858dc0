package proxy

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCuratorYields: a round waits while a request is being answered, and
// runs once none is, or once it has waited MaxDelay.
func TestCuratorYields(t *testing.T) {
	m := openStore(t)
	c := NewCurator(CuratorOptions{Memory: m, Extractive: true, Delay: 10 * time.Millisecond, MaxDelay: time.Minute})
	defer c.Close(context.Background())
	c.Begin()
	c.Touch("alice")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := c.Idle(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Idle while a request is answered = %v, want the round still waiting", err)
	}
	c.End()
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Idle(ctx); err != nil {
		t.Fatalf("Idle once the request is answered: %v", err)
	}

	capped := NewCurator(CuratorOptions{Memory: m, Extractive: true, Delay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond})
	defer capped.Close(context.Background())
	capped.Begin()
	defer capped.End()
	capped.Touch("bob")
	if err := capped.Idle(ctx); err != nil {
		t.Fatalf("Idle with a request that never ends, after MaxDelay: %v", err)
	}
}
