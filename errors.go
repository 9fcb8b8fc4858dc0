package mira

import (
	"fmt"
	"strings"

	"github.com/miramem/mira/internal/secret"
)

// InvalidError is a request refused for what it asks: a bad argument,
// field, value or configuration. Nothing was written. Front ends show it
// as a usage error (the CLI exits 2, the MCP server returns a tool error).
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

func invalidf(format string, args ...any) error {
	return &InvalidError{fmt.Errorf(format, args...)}
}

// SecretError is a memory refused because it looks like a credential: the
// store is committed to git and pasted into prompts. Remember returns it
// inside an *InvalidError (errors.As finds either).
type SecretError struct {
	Findings []secret.Finding
}

func (e *SecretError) Error() string {
	var b strings.Builder
	for i, x := range e.Findings {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "line %d, column %d: %s (%s): %s", x.Line, x.Column, x.Desc, x.Rule, x.Redacted)
	}
	return fmt.Sprintf("refusing to store what looks like a secret: %s (the store is committed to git and pasted into prompts)", b.String())
}
