package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/miramem/mira"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/gitrepo"
	"github.com/miramem/mira/mem"
)

// Exit statuses (SPEC §3). Scripts may rely on them; any other non-zero
// status means failure.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2 // usage, configuration or input error
	ExitPartial     = 3 // some input records were skipped and reported
	ExitLocked      = 11
	ExitInterrupted = 130
)

// UsageError is a bad flag, argument or configuration: exit 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }
func (e *UsageError) ExitCode() int { return ExitUsage }

func usagef(format string, args ...any) error { return &UsageError{fmt.Errorf(format, args...)} }

// Usagef makes a *UsageError, for commands defined in other packages.
func Usagef(format string, args ...any) error { return usagef(format, args...) }

// InputError is a bad input record, named by source and line: exit 2 for
// commands that change the store (nothing is written), 3 for filters.
type InputError struct {
	Name string
	Line int
	Err  error
}

func (e *InputError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }
func (e *InputError) Unwrap() error { return e.Err }
func (e *InputError) ExitCode() int { return ExitUsage }

// exitCode maps an error to the process status.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	if errors.Is(err, mem.ErrLocked) || errors.Is(err, gitrepo.ErrLocked) || errors.Is(err, index.ErrBusy) {
		return ExitLocked
	}
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	var inv *mira.InvalidError
	if errors.As(err, &inv) {
		return ExitUsage
	}
	return ExitFailure
}

// hint returns advice to print after an error, if any.
func hint(err error) string {
	var le *mem.LockedError
	if errors.As(err, &le) {
		return "retry later, raise --lock-timeout, or remove " + le.Path + " if that process is gone"
	}

	var ns *mem.NotStoreError
	if errors.As(err, &ns) {
		return "give --home (or MIRA_HOME) a new or empty directory, or the directory of a Mira store"
	}
	if errors.Is(err, mira.ErrNoStore) {
		return "check --home (or MIRA_HOME); mira-remember creates a store"
	}
	return ""
}
