package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miramem/mira/internal/retry/retrytest"
)

func TestNew(t *testing.T) {
	tests := []struct {
		retries  int
		base     time.Duration
		wantMax  int
		wantBase time.Duration
	}{
		{0, 0, 0, 0},
		{-1, -time.Second, 0, 0},
		{3, time.Second, 3, time.Second},
	}
	for _, tt := range tests {
		p := New(tt.retries, tt.base)
		if p.Max != tt.wantMax || p.Base != tt.wantBase || p.Sleep == nil || p.Jitter == nil {
			t.Errorf("New(%d, %v) = max %d base %v (sleep set %v, jitter set %v), want %d %v and both set",
				tt.retries, tt.base, p.Max, p.Base, p.Sleep != nil, p.Jitter != nil, tt.wantMax, tt.wantBase)
		}
	}
}

func TestOverride(t *testing.T) {
	defaults := New(5, 500*time.Millisecond)
	tests := []struct {
		name     string
		retries  int
		base     time.Duration
		wantMax  int
		wantBase time.Duration
	}{
		{"zero keeps the defaults", 0, 0, 5, 500 * time.Millisecond},
		{"negative means no retries", -1, 0, 0, 500 * time.Millisecond},
		{"negative base keeps the default", 0, -time.Second, 5, 500 * time.Millisecond},
		{"both set", 3, time.Second, 3, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := defaults.Override(tt.retries, tt.base)
			if p.Max != tt.wantMax || p.Base != tt.wantBase || p.Sleep == nil || p.Jitter == nil {
				t.Errorf("Override(%d, %v) = max %d base %v, want %d %v with Sleep and Jitter kept",
					tt.retries, tt.base, p.Max, p.Base, tt.wantMax, tt.wantBase)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		name   string
		base   time.Duration
		n      int
		jitter float64
		want   time.Duration
	}{
		{"first", 100 * time.Millisecond, 0, 0, 100 * time.Millisecond},
		{"doubles", 100 * time.Millisecond, 1, 0, 200 * time.Millisecond},
		{"doubles again", 100 * time.Millisecond, 3, 0, 800 * time.Millisecond},
		{"jitter takes up to half off", 100 * time.Millisecond, 3, 0.5, 600 * time.Millisecond},
		{"51.2 s is capped", 100 * time.Millisecond, 9, 0, MaxBackoff},
		{"no overflow", 100 * time.Millisecond, 70, 0, MaxBackoff},
		{"no overflow, jittered", 100 * time.Millisecond, 70, 0.999999, MaxBackoff/2 + 15*time.Microsecond},
		{"1 s", time.Second, 0, 0, time.Second},
		{"2 s", time.Second, 1, 0, 2 * time.Second},
		{"4 s", time.Second, 2, 0, 4 * time.Second},
		{"8 s", time.Second, 3, 0, 8 * time.Second},
		{"16 s", time.Second, 4, 0, 16 * time.Second},
		{"32 s is capped", time.Second, 5, 0, MaxBackoff},
		{"capped later too", time.Second, 6, 0, MaxBackoff},
		{"far beyond the cap", time.Second, 200, 0, MaxBackoff},
		// A tiny base keeps doubling where a shift limited to small n
		// would have jumped to the cap.
		{"tiny base, n 25", time.Nanosecond, 25, 0, 1 << 25},
		{"tiny base, n 32", time.Nanosecond, 32, 0, 1 << 32},
		{"tiny base, n 40 is capped", time.Nanosecond, 40, 0, MaxBackoff},
		// A base that would wrap around when shifted stays capped.
		{"huge base", 1<<40 + 1<<10, 24, 0, MaxBackoff},
		{"base above the cap", time.Hour, 0, 0, MaxBackoff},
		{"zero base", 0, 3, 0.5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Policy{Base: tt.base, Jitter: func() float64 { return tt.jitter }}
			got := p.Backoff(tt.n)
			if d := got - tt.want; d < -20*time.Microsecond || d > 20*time.Microsecond {
				t.Errorf("Backoff(%d) with base %v and jitter %v = %v, want %v", tt.n, tt.base, tt.jitter, got, tt.want)
			}
		})
	}
}

// TestBackoffJitterBounds checks that any jitter in [0, 1) keeps the wait
// in (d/2, d], with the real random source too.
func TestBackoffJitterBounds(t *testing.T) {
	for _, base := range []time.Duration{time.Second, 100 * time.Millisecond} {
		for n := range 8 {
			d := min(base<<n, MaxBackoff)
			for _, j := range []float64{0, 0.25, 0.5, 0.999, 0.999999999} {
				p := Policy{Base: base, Jitter: func() float64 { return j }}
				if got := p.Backoff(n); got <= d/2 || got > d {
					t.Errorf("Backoff(%d) with base %v and jitter %v = %v, want in (%v, %v]", n, base, j, got, d/2, d)
				}
			}
			p := New(3, base)
			for range 100 {
				if got := p.Backoff(n); got <= d/2 || got > d {
					t.Fatalf("Backoff(%d) with base %v = %v, want in (%v, %v]", n, base, got, d/2, d)
				}
			}
		}
	}
	if got := (Policy{Base: time.Second}).Backoff(1); got != 2*time.Second {
		t.Errorf("Backoff(1) without Jitter = %v, want 2s", got)
	}
}

// httpFailure stands for a client's error of a failing reply.
type httpFailure struct{ status int }

func (e *httpFailure) Error() string { return fmt.Sprintf("server replied %d", e.status) }

func TestDo(t *testing.T) {
	const base = 10 * time.Millisecond
	final := errors.New("final")
	busy := &httpFailure{503}
	tests := []struct {
		name string
		max  int
		// timeout, when set, is the deadline of the context given to Do.
		timeout time.Duration
		// results are the errors of the attempts in turn; an attempt
		// past the end succeeds. A result of errCancel cancels the
		// context and fails with final.
		results   []error
		wantCalls int
		wantWaits []time.Duration
		wantErr   string // the whole error text; "" for success
		wantIs    []error
	}{
		{
			name: "success at once", max: 3,
			wantCalls: 1,
		},
		{
			name: "transient then success", max: 3,
			results:   []error{Transient(busy, 0)},
			wantCalls: 2, wantWaits: []time.Duration{base},
		},
		{
			name: "a final error stops at once", max: 3,
			results:   []error{Transient(busy, 0), final},
			wantCalls: 2, wantWaits: []time.Duration{base},
			wantErr: "final", wantIs: []error{final},
		},
		{
			name: "a wrapped mark counts", max: 3,
			results:   []error{fmt.Errorf("context: %w", Transient(busy, 0))},
			wantCalls: 2, wantWaits: []time.Duration{base},
		},
		{
			name: "gives up after the retries", max: 3,
			results:   []error{Transient(busy, 0), Transient(busy, 0), Transient(busy, 0), Transient(busy, 0)},
			wantCalls: 4, wantWaits: []time.Duration{base, 2 * base, 4 * base},
			wantErr: "giving up after 4 attempts: server replied 503", wantIs: []error{busy},
		},
		{
			name: "without retries the error stands alone", max: 0,
			results:   []error{Transient(busy, 0)},
			wantCalls: 1,
			wantErr:   "server replied 503", wantIs: []error{busy},
		},
		{
			name: "Retry-After is honoured", max: 3,
			results:   []error{Transient(busy, 7*time.Second), Transient(busy, 1500*time.Millisecond)},
			wantCalls: 3, wantWaits: []time.Duration{7 * time.Second, 1500 * time.Millisecond},
		},
		{
			name: "Retry-After at the limit is honoured", max: 3,
			results:   []error{Transient(busy, MaxRetryAfter)},
			wantCalls: 2, wantWaits: []time.Duration{MaxRetryAfter},
		},
		{
			name: "too long a Retry-After fails at once", max: 5,
			results:   []error{Transient(busy, time.Hour)},
			wantCalls: 1,
			wantErr:   "server asks to wait 1h0m0s before retrying: server replied 503", wantIs: []error{busy},
		},
		{
			name: "a wait beyond the deadline fails at once", max: 3, timeout: 5 * time.Second,
			results:   []error{Transient(busy, time.Minute)},
			wantCalls: 1,
			wantErr:   "next retry in 1m0s would pass the deadline (context deadline exceeded): server replied 503",
			wantIs:    []error{context.DeadlineExceeded, busy},
		},
		{
			name: "a backoff within the deadline is waited", max: 3, timeout: time.Minute,
			results:   []error{Transient(busy, 0)},
			wantCalls: 2, wantWaits: []time.Duration{base},
		},
		{
			name: "cancelled during an attempt", max: 3,
			results:   []error{errCancel},
			wantCalls: 1,
			wantErr:   "context canceled (last attempt: final)", wantIs: []error{context.Canceled, final},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.timeout > 0 {
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			log := &retrytest.SleepLog{}
			p := Policy{Max: tt.max, Base: base, Sleep: log.Sleep, Jitter: func() float64 { return 0 }}
			calls := 0
			err := p.Do(ctx, func(got context.Context) error {
				if got != ctx {
					t.Errorf("attempt got another context than Do's")
				}
				calls++
				if calls > len(tt.results) {
					return nil
				}
				if r := tt.results[calls-1]; r != errCancel {
					return r
				}
				cancel()
				return final
			})
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Do = %v, want success", err)
				}
			} else if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Do = %v, want %q", err, tt.wantErr)
			}
			for _, target := range tt.wantIs {
				if !errors.Is(err, target) {
					t.Errorf("Do = %v, want it to match %v", err, target)
				}
			}
			if _, marked := After(err); marked {
				t.Errorf("Do = %v still marked transient", err)
			}
			if calls != tt.wantCalls {
				t.Errorf("%d attempts, want %d", calls, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantWaits, log.Waits()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// errCancel scripts an attempt of TestDo that cancels its context.
var errCancel = errors.New("cancel")

// TestDoAttemptReturnsContextError checks that an attempt's own report of
// the cancellation is returned as it is, not wrapped twice.
func TestDoAttemptReturnsContextError(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	p := New(3, time.Millisecond)
	want := fmt.Errorf("request interrupted: %w", context.Canceled)
	err := p.Do(ctx, func(context.Context) error {
		cancel()
		return want
	})
	if err != want {
		t.Errorf("Do = %v, want the attempt's %v", err, want)
	}
}

// TestDoCancelDuringWait uses the real Sleep: a wait of the capped backoff
// must end as soon as the context is cancelled.
func TestDoCancelDuringWait(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	busy := &httpFailure{503}
	p := New(3, time.Hour)
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		if d <= MaxBackoff/2 {
			t.Errorf("wait %v, want the capped backoff", d)
		}
		time.AfterFunc(20*time.Millisecond, cancel)
		return Sleep(ctx, d)
	}
	calls := 0
	start := time.Now()
	err := p.Do(ctx, func(context.Context) error {
		calls++
		return Transient(busy, 0)
	})
	if !errors.Is(err, context.Canceled) || !errors.Is(err, busy) ||
		!strings.Contains(err.Error(), "context canceled while waiting to retry (last error: server replied 503)") {
		t.Errorf("Do = %v, want the cancellation and the last failure", err)
	}
	if d := time.Since(start); d > 5*time.Second || calls != 1 {
		t.Errorf("Do returned after %v and %d attempts, want at once after 1", d, calls)
	}
}

func TestZeroPolicy(t *testing.T) {
	busy := &httpFailure{503}
	calls := 0
	err := Policy{}.Do(t.Context(), func(context.Context) error {
		calls++
		return Transient(busy, 0)
	})
	if err != busy || calls != 1 {
		t.Errorf("Policy{}.Do = %v after %d attempts, want the failure after 1", err, calls)
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(t.Context(), time.Millisecond); err != nil {
		t.Errorf("Sleep = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("Sleep on a cancelled context = %v after %v, want context.Canceled at once", err, time.Since(start))
	}
}

func TestMarks(t *testing.T) {
	cause := errors.New("cause")
	tests := []struct {
		name          string
		err           error
		wantAfter     time.Duration
		wantMarked    bool
		wantPermanent error
	}{
		{"unmarked", cause, 0, false, cause},
		{"nil", nil, 0, false, nil},
		{"marked", Transient(cause, 0), 0, true, cause},
		{"with a wait", Transient(cause, 3*time.Second), 3 * time.Second, true, cause},
		{"negative wait", Transient(cause, -time.Second), 0, true, cause},
		{"wrapped", fmt.Errorf("outer: %w", Transient(cause, time.Second)), time.Second, true, cause},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after, marked := After(tt.err)
			if after != tt.wantAfter || marked != tt.wantMarked {
				t.Errorf("After(%v) = %v, %v, want %v, %v", tt.err, after, marked, tt.wantAfter, tt.wantMarked)
			}
			if got := Permanent(tt.err); got != tt.wantPermanent {
				t.Errorf("Permanent(%v) = %v, want %v", tt.err, got, tt.wantPermanent)
			}
		})
	}
	if err := Transient(nil, time.Second); err != nil {
		t.Errorf("Transient(nil) = %v, want nil", err)
	}
	if err := Transient(cause, 0); err.Error() != "cause" || !errors.Is(err, cause) {
		t.Errorf("Transient(cause) = %v, want it to read and match as cause", err)
	}
}
