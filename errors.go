package mira

import (
	"fmt"
	"strings"

	"github.com/miramem/mira/internal/secret"
)

// InvalidError is a request refused for what it asks: a bad argument,
// field, value or configuration. Nothing was written. Front ends show it
// as a usage error (the CLI exits 2, the MCP server returns a tool error).
type InvalidError struct {
	// Field names the option or argument at fault, as the API calls it
	// (replace, scope, mode, ...), when one is; front ends may show their
	// own name for it.
	Field string
	Err   error
}

func (e *InvalidError) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Err.Error()
	}
	return e.Err.Error()
}

func (e *InvalidError) Unwrap() error { return e.Err }

func invalidf(format string, args ...any) error {
	return &InvalidError{Err: fmt.Errorf(format, args...)}
}

// invalidField is an *InvalidError about one field.
func invalidField(field string, err error) error {
	return &InvalidError{Field: field, Err: err}
}

// SecretError is a memory refused because it looks like a credential: the
// store is committed to git and pasted into prompts. Remember returns it
// inside an *InvalidError (errors.As finds either).
type SecretError struct {
	// Findings are in the memory's text (Field "") or in another field
	// named by Field: id, kind, scope, project, source, role, status,
	// priority, pin, level, tags[i], replaced_by, deleted_reason, or an
	// extra field by its path (ticket, refs[2], meta.env.KEY; "field
	// name" or "meta: field name" when the name itself is the secret).
	Findings []secret.Finding
}

func (e *SecretError) Error() string { return e.Explain("") }

// Explain words the refusal with advice for the caller's user (how to
// override it in their front end) inside its parenthesis.
func (e *SecretError) Explain(advice string) string {
	var b strings.Builder
	for i, x := range e.Findings {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(x.String())
	}
	why := "the store is committed to git and pasted into prompts"
	if advice != "" {
		why += "; " + advice
	}
	return fmt.Sprintf("refusing to store what looks like a secret: %s (%s)", b.String(), why)
}
