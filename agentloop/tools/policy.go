package tools

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Decision is a user's answer to an approval request.
type Decision int

const (
	// Deny refuses the call.
	Deny Decision = iota
	// AllowOnce allows this call only.
	AllowOnce
	// AllowAlways allows this call and every later call of the same tool
	// for the rest of the session.
	AllowAlways
)

// String returns the decision's name.
func (d Decision) String() string {
	switch d {
	case Deny:
		return "deny"
	case AllowOnce:
		return "allow once"
	case AllowAlways:
		return "allow always"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Approver asks the user whether a tool call may run. tool is the tool's
// name and summary a short, human-readable account of the call (the
// command, or the file and a preview of the change).
type Approver interface {
	Approve(ctx context.Context, tool, summary string) (Decision, error)
}

// ErrDenied is wrapped by the errors Policy.Check returns for a refused
// call.
var ErrDenied = errors.New("permission denied")

// Policy decides whether the tools that change things may run. Its fields
// come from the command line; the answers "always" given during the session
// are kept inside it. A Policy must not be copied after first use.
type Policy struct {
	// Allow names tools that run without asking (--allow TOOL).
	Allow map[string]bool
	// Yes lets every tool run without asking (--yes).
	Yes bool
	// Interactive reports that the user can be asked.
	Interactive bool
	// Approver asks the user; it is used only when Interactive is set.
	Approver Approver

	mu     sync.Mutex
	always map[string]bool
}

// Check returns nil when tool may run the call described by summary,
// asking the Approver when it must. A refusal is an error wrapping
// ErrDenied whose text is meant for the model; any other error is ctx's.
// Calls are asked about one at a time, so that an "always" answer covers
// the calls waiting behind it.
func (p *Policy) Check(ctx context.Context, tool, summary string) error {
	if p == nil {
		return fmt.Errorf("%w: %s needs approval and this session has no permission policy", ErrDenied, tool)
	}
	if p.Yes || p.Allow[tool] {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.always[tool] {
		return nil
	}
	if !p.Interactive || p.Approver == nil {
		return fmt.Errorf("%w: %s needs the user's approval and this session cannot ask for it (it is not interactive); the user can allow it by running mira-agent with --allow %s or --yes", ErrDenied, tool, tool)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	d, err := p.Approver.Approve(ctx, tool, summary)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: asking the user to approve %s failed (%v), so it did not run", ErrDenied, tool, err)
	}
	switch d {
	case AllowAlways:
		if p.always == nil {
			p.always = map[string]bool{}
		}
		p.always[tool] = true
		return nil
	case AllowOnce:
		return nil
	}
	return fmt.Errorf("%w: the user declined this %s call, so it did not run; do not retry it unchanged: ask the user how to proceed", ErrDenied, tool)
}

// approve runs the policy check for a tool and turns a refusal into the
// Result to return. ok is false when the call must not run; err is ctx's.
func (e *env) approve(ctx context.Context, tool, summary string) (res Result, ok bool, err error) {
	err = e.policy.Check(ctx, tool, summary)
	switch {
	case err == nil:
		return Result{}, true, nil
	case errors.Is(err, ErrDenied):
		return Result{Content: err.Error(), IsError: true, Denied: true}, false, nil
	}
	return Result{Content: fmt.Sprintf("%s was interrupted before it ran", tool), IsError: true}, false, err
}
