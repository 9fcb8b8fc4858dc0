// Package retry repeats requests to OpenAI-compatible HTTP servers that
// failed in a way worth repeating. It is what the chat client (package llm)
// and the embeddings and rerank clients (package embed) share, so that they
// behave alike towards the same servers:
//
//   - a Policy that repeats an attempt a limited number of times, waiting
//     an exponentially growing, jittered and capped time in between, or
//     what the server asked for with Retry-After, and never past the
//     caller's deadline;
//   - the classification of a failed attempt as final or transient: HTTP
//     statuses (RetryableStatus, StatusFailure), connection trouble
//     (Transport) and the errors of github.com/sashabaranov/go-openai
//     (Classify);
//   - reading what a failing reply said: its Retry-After headers
//     (ParseRetryAfter, HeaderDoer) and its error body (ParseReply), in the
//     shapes OpenAI, llama.cpp, Ollama, vLLM and their proxies use.
//
// An attempt marks an error worth repeating with Transient; any other
// error ends Policy.Do at once.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

const (
	// MaxBackoff caps the exponential wait, so that a long outage is
	// polled rather than waited out in one ever-growing sleep.
	MaxBackoff = 30 * time.Second
	// MaxRetryAfter is the longest wait a server may ask for. A longer one
	// is usually a spent quota that resets hours later: failing at once
	// with the reason beats a command that seems to hang.
	MaxRetryAfter = 2 * time.Minute
)

// Policy repeats an attempt that failed with a Transient error up to Max
// more times. Before retry n (from 0) it waits what the server asked for,
// or else Base·2ⁿ capped at MaxBackoff and shortened by up to half at
// random, so that clients that failed together do not come back together.
//
// The zero Policy makes one attempt and never retries. Sleep and Jitter
// are fields so that tests can record the waits instead of spending them.
type Policy struct {
	// Max is the number of retries after the first attempt; 0 or less
	// means none.
	Max int
	// Base is the wait before the first retry when the server did not say.
	Base time.Duration
	// Sleep waits d unless ctx ends first, and then returns ctx.Err(). Nil
	// means the package's Sleep.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1); nil means no jitter.
	Jitter func() float64
}

// New returns a policy of the given number of retries, the first after
// base, that sleeps for real and jitters at random. A negative retries or
// base counts as 0. Each client passes its own documented defaults and
// applies its user's settings with Override.
func New(retries int, base time.Duration) Policy {
	return Policy{Max: max(retries, 0), Base: max(base, 0), Sleep: Sleep, Jitter: rand.Float64}
}

// Override returns p changed by a user's settings, in the convention of
// the clients' configurations, where 0 means the default: retries 0 keeps
// p.Max and a negative retries means none; a base of 0 or less keeps
// p.Base.
func (p Policy) Override(retries int, base time.Duration) Policy {
	switch {
	case retries < 0:
		p.Max = 0
	case retries > 0:
		p.Max = retries
	}
	if base > 0 {
		p.Base = base
	}
	return p
}

// Sleep waits d, or less if ctx ends first, in which case it returns
// ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Backoff is the wait before retry n (from 0) when the server did not say:
// Base·2ⁿ, at most MaxBackoff, less up to half of it at random. The
// doubling stops at the cap instead of shifting, so no n or Base
// overflows into a short wait.
func (p Policy) Backoff(n int) time.Duration {
	d := p.Base
	if d <= 0 {
		return 0
	}
	for i := 0; i < n && d < MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, MaxBackoff)
	if p.Jitter != nil {
		d -= time.Duration(p.Jitter() * float64(d) / 2)
	}
	return d
}

// Do runs attempt until it succeeds, fails with an error not marked
// Transient, the retries are spent or ctx ends. attempt gets ctx.
//
// The error returned is the last attempt's, without its Transient mark,
// wrapped to say why Do stopped: "giving up after N attempts" once the
// retries are spent (a Policy without retries returns the error alone),
// "server asks to wait …" when Retry-After asks for more than
// MaxRetryAfter, "next retry in … would pass the deadline" (which matches
// context.DeadlineExceeded) when the wait would outlast ctx's deadline,
// and ctx.Err() when ctx ended during an attempt or a wait.
func (p Policy) Do(ctx context.Context, attempt func(context.Context) error) error {
	sleep := p.Sleep
	if sleep == nil {
		sleep = Sleep
	}
	for n := 0; ; n++ {
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			if errors.Is(err, ctxErr) {
				return err
			}
			return fmt.Errorf("%w (last attempt: %w)", ctxErr, err)
		}
		var te *transient
		if !errors.As(err, &te) {
			return err
		}
		if n >= p.Max {
			if n == 0 {
				// Nothing was retried, so there is nothing to give up.
				return te.err
			}
			return fmt.Errorf("giving up after %d attempts: %w", n+1, te.err)
		}
		wait := p.Backoff(n)
		if te.after > 0 {
			if te.after > MaxRetryAfter {
				return fmt.Errorf("server asks to wait %v before retrying: %w", te.after, te.err)
			}
			wait = te.after
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("next retry in %v would pass the deadline (%w): %w",
				wait.Round(time.Millisecond), context.DeadlineExceeded, te.err)
		}
		if err := sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w while waiting to retry (last error: %w)", err, te.err)
		}
	}
}

// transient marks a failed attempt worth repeating.
type transient struct {
	err   error
	after time.Duration // the wait the server asked for, 0 if none
}

func (e *transient) Error() string { return e.err.Error() }
func (e *transient) Unwrap() error { return e.err }

// Transient marks err as worth repeating by Policy.Do, after the wait the
// server asked for (0 when it did not say, which leaves the wait to the
// policy). Transient(nil, …) is nil.
func Transient(err error, after time.Duration) error {
	if err == nil {
		return nil
	}
	return &transient{err: err, after: max(after, 0)}
}

// After reports whether err is marked Transient and, if so, the wait the
// server asked for (0 when it did not say).
func After(err error) (time.Duration, bool) {
	var te *transient
	if !errors.As(err, &te) {
		return 0, false
	}
	return te.after, true
}

// Permanent returns err without its Transient mark, for an attempt that
// must not be repeated whatever the cause, such as a stream that has
// already delivered part of its reply. Errors wrapped around the mark are
// dropped with it; an unmarked err is returned as it is.
func Permanent(err error) error {
	var te *transient
	if errors.As(err, &te) {
		return te.err
	}
	return err
}
