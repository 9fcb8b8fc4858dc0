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
	ExitUsage       = 2  // usage, configuration or input error
	ExitPartial     = 3  // some input records were skipped and reported
	ExitLocked      = 11 // store locked by another writer, or a remote that kept moving (retryable)
	ExitUnreachable = 12 // mira-sync: the remote could not be reached; the store is untouched
	ExitAuth        = 13 // mira-sync: the remote refused the credentials; the store is untouched
	ExitSecret      = 14 // mira-sync: the push was refused because it carried a secret
	ExitInterrupted = 130
)

// errNotServed is what a command run for a relay client returns, before
// it has done anything, when it needs the client's own process (its
// stdin, say); Main then returns exitNotServed and prints nothing, and the
// client runs the command itself.
var errNotServed = errors.New("not served")

// exitNotServed is Main's status for errNotServed: no process exits with
// it.
const exitNotServed = -1

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
	if errors.Is(err, mem.ErrLocked) || errors.Is(err, gitrepo.ErrLocked) || errors.Is(err, index.ErrBusy) || errors.Is(err, mira.ErrRemoteBusy) {
		return ExitLocked
	}
	switch {
	case errors.Is(err, mira.ErrRemoteAuth):
		return ExitAuth
	case errors.Is(err, mira.ErrRemoteUnreachable):
		return ExitUnreachable
	}
	var pr *mira.PushRefusedError
	if errors.As(err, &pr) {
		return ExitSecret
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

// recallFlags are mira-recall's flags by the names the library gives the
// fields of a query.
var recallFlags = map[string]string{
	"k": "-k", "kinds": "--kind", "scope": "--scope", "mode": "--mode",
	"recency_weight": "--recency-weight", "mmr_lambda": "--mmr-lambda", "min_score": "--min-score",
}

// asFlag turns the library's error about a field it names into a usage
// error about the flag that set it, flags mapping fields to flags; other
// errors pass unchanged.
func asFlag(err error, flags map[string]string) error {
	var inv *mira.InvalidError
	if errors.As(err, &inv) {
		if flag, ok := flags[inv.Field]; ok {
			return usagef("%s: %v", flag, inv.Err)
		}
	}
	return err
}

// hint returns advice to print after an error, if any.
func hint(err error) string {
	var le *mem.LockedError
	if errors.As(err, &le) {
		return "retry later, raise --lock-timeout, or remove " + le.Path + " if that process is gone"
	}

	switch {
	case errors.Is(err, mira.ErrRemoteAuth):
		return "check the remote's credentials with git fetch in the store (ssh keys, credential helper); mira-sync never prompts"
	case errors.Is(err, mira.ErrRemoteUnreachable):
		return "the store is untouched; run mira-sync again when the remote can be reached"
	case errors.Is(err, mira.ErrRemoteBusy):
		return "what was fetched last is merged; run mira-sync again"
	}

	var ns *mem.NotStoreError
	if errors.As(err, &ns) {
		return "give --home (or MIRA_HOME) a new or empty directory, or the directory of a Mira store"
	}
	if errors.Is(err, gitrepo.ErrUnmerged) {
		return "a git merge stopped with conflicts; mira-sync undoes it and merges the remote entry by entry (or resolve the files and git commit)"
	}
	if errors.Is(err, mira.ErrNoStore) {
		return "check --home (or MIRA_HOME); mira-remember creates a store"
	}
	return ""
}
